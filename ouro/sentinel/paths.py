"""Canonical sentinel paths and the sentinel lock."""

from __future__ import annotations

from pathlib import Path

from ouro.bundle import Bundle
from ouro.store.lock import FileLock

SENTINEL_DIR = "arc/flight-recorder/context-loss-sentinel"
LATEST = f"{SENTINEL_DIR}/latest.json"
LATEST_READY = f"{SENTINEL_DIR}/latest-ready.json"
HISTORY_DIR = f"{SENTINEL_DIR}/history"
RECEIPTS_DIR = f"{SENTINEL_DIR}/receipts"
LOCK_TIMEOUT = 30.0


def sentinel_dir(bundle: Bundle) -> Path:
    return bundle.root / SENTINEL_DIR


def latest_path(bundle: Bundle) -> Path:
    return bundle.root / LATEST


def latest_ready_path(bundle: Bundle) -> Path:
    return bundle.root / LATEST_READY


def history_dir(bundle: Bundle) -> Path:
    return bundle.root / HISTORY_DIR


def receipts_dir(bundle: Bundle) -> Path:
    return bundle.root / RECEIPTS_DIR


def receipt_locator(receipt_id: str) -> str:
    return f"{RECEIPTS_DIR}/{receipt_id}.json"


def history_locator(day: str, receipt_id: str) -> str:
    return f"{HISTORY_DIR}/{day}.jsonl#{receipt_id}"


def sentinel_lock(bundle: Bundle) -> FileLock:
    return FileLock(bundle.lock_path("sentinel"), timeout=LOCK_TIMEOUT, purpose="sentinel refresh")
