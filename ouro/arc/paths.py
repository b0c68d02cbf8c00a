"""Canonical Arc paths and the Arc write lock.

One lock (``state/locks/arc.lock``) serializes every Arc write: a claim or
obligation file write, the event that records it, and the checkpoint rewrite.
Arc writes are low volume, so one lock costs nothing and keeps the checkpoint
a consistent fold of the log and the stores.
"""

from __future__ import annotations

import re
from pathlib import Path

from ouro.bundle import Bundle
from ouro.store.lock import FileLock

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    pass

if TYPE_CHECKING:  # readers (orient, the hooks) never need datetime: writers import it
    from datetime import datetime

EVENTS_DIR = "arc/flight-recorder/events"
CHECKPOINT = "arc/flight-recorder/latest.json"
CLAIMS_DIR = "arc/claims"
OBLIGATIONS_DIR = "arc/obligations"
INNER_DIR = "arc/obligations/inner"

DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.jsonl$")
#: what ``ouro.models.clock.utc_now_iso`` writes: a day file is named without ``datetime``
#: compiled on first use (``re``'s own cache): a cold read that writes no event pays nothing
_UTC_DAY = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"
LOCK_TIMEOUT = 30.0


def events_dir(bundle: Bundle) -> Path:
    return bundle.root / EVENTS_DIR


def checkpoint_path(bundle: Bundle) -> Path:
    return bundle.root / CHECKPOINT


def claims_dir(bundle: Bundle) -> Path:
    return bundle.root / CLAIMS_DIR


def obligations_dir(bundle: Bundle) -> Path:
    return bundle.root / OBLIGATIONS_DIR


def inner_dir(bundle: Bundle) -> Path:
    return bundle.root / INNER_DIR


def day_file_name(recorded_at: str | datetime) -> str:
    if (
        isinstance(recorded_at, str)
        and recorded_at.endswith("Z")
        and re.match(_UTC_DAY, recorded_at)
    ):
        return recorded_at[:10] + ".jsonl"  # a UTC time's day is its first ten characters
    from ouro.models.clock import parse_time

    moment = parse_time(recorded_at) if isinstance(recorded_at, str) else recorded_at
    return moment.strftime("%Y-%m-%d") + ".jsonl"


def event_locator(file_name: str, event_id: str) -> str:
    return f"{EVENTS_DIR}/{file_name}#{event_id}"


def claim_locator(claim_id: str) -> str:
    return f"{CLAIMS_DIR}/{claim_id}.json"


def obligation_locator(obligation_id: str, *, inner: bool) -> str:
    return f"{INNER_DIR if inner else OBLIGATIONS_DIR}/{obligation_id}.json"


def arc_lock(bundle: Bundle, purpose: str) -> FileLock:
    return FileLock(bundle.lock_path("arc"), timeout=LOCK_TIMEOUT, purpose=purpose)
