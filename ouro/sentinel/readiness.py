"""The provider lane: readiness sources that are checked, and remembered.

A bundle declares readiness sources in ``bundle.json`` (``ouro config set
readiness.<source>.command|timeout|env|files``, ``ouro.config``):

- ``env``: environment variables the source needs (names only); one that is
  unset or empty is a missing credential;
- ``files``: credential files it needs (``~`` or bundle-relative); only their
  existence is checked, never their content;
- ``command``: a check, exit 0 = ready, run with the declared variables passed
  through (other secret-looking variables scrubbed, ``ouro.proof.checkrun``), in
  the bundle folder, stopped after ``timeout`` seconds (default 30, at most
  600), its output kept only as a redacted tail of at most ``TAIL`` characters.
  Like a claim's check it runs only once trusted in this bundle (``yes``), and
  one that holds a credential is refused, never run.

``gather`` (called by ``ouro.sentinel.receipts.refresh`` *outside* the
sentinel lock) turns them into ``provider_lane`` signals. The credential
checks are cheap and run on every refresh; the commands run only when the
caller asks (``run_commands``: by default every refresh but those of the host
hooks and drills, ``ouro.sentinel.receipts.QUIET_TRIGGERS``). A failed check or a missing credential is a signal with source,
severity (``verdictImpact``), repair actor and repair command; a
``--signal`` provider-lane value joins the same lane.

Each source's last result is kept with its time in ``state/sentinel/lane.json``
(machine-local, atomic under ``state/locks/lane.lock``, redacted; a newer
result is never replaced by an older one). A refresh without fresh evidence for a source
reports its last known state with its age (``fresh: false``); a declared
source with no result yet is ``unknown`` (watch) — a lane that was down stays
down until a check or a signal says otherwise, so a plain refresh is never
"ready in every respect" behind it. Stale is only what a source says: ouro
does not age a result into a different state by the clock.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson

from ouro.bundle import Bundle
from ouro.config import READINESS_TIMEOUT_MAX, readiness_sources, split_list
from ouro.errors import OuroError
from ouro.models.clock import format_time, parse_time
from ouro.sentinel.signals import Signal
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.lock import FileLock

LANE = "state/sentinel/lane.json"
DEFAULT_TIMEOUT = 30.0
TAIL = 400
KIND: Literal["provider_lane"] = "provider_lane"


@dataclass(frozen=True)
class Source:
    name: str
    command: str | None
    timeout: float
    env: tuple[str, ...]
    files: tuple[str, ...]


def declared(bundle: Bundle) -> list[Source]:
    """The readiness sources ``bundle.json`` declares, by name."""
    out = []
    for name, fields in readiness_sources(bundle.read_meta()).items():
        try:
            timeout = float(fields.get("timeout") or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        timeout = min(max(timeout, 0.1), READINESS_TIMEOUT_MAX)
        out.append(
            Source(
                name=name,
                command=(fields.get("command") or "").strip() or None,
                timeout=timeout,
                env=tuple(split_list(fields.get("env") or "")),
                files=tuple(split_list(fields.get("files") or "")),
            )
        )
    return out


def _lane_signal(
    source: str,
    status: str,
    impact: str,
    detail: str,
    *,
    at: str,
    actor: str | None = None,
    command: str | None = None,
) -> Signal:
    return Signal(
        kind=KIND,
        source=source,
        status=status,
        verdict_impact=impact,  # type: ignore[arg-type]
        repair_actor=actor,  # type: ignore[arg-type]
        repair_command=command,
        detail=detail[:2000],
        checked_at=at,
        fresh=True,
    )


def _missing_credentials(bundle: Bundle, src: Source) -> list[str]:
    """Each missing credential, named (never its value): ``X (environment variable not set)``."""
    missing = [
        f"{name} (environment variable not set)" for name in src.env if not os.environ.get(name)
    ]
    for given in src.files:
        path = Path(os.path.expanduser(given))
        if not path.is_absolute():
            path = bundle.root / path
        if not path.exists():
            missing.append(f"{given} (file not found)")
    return missing


def check_source(
    bundle: Bundle, src: Source, *, run_commands: bool, yes: bool, at: str
) -> Signal | None:
    """This refresh's evidence about ``src``, or None when it took none (command not run)."""
    from ouro.proof import checkrun

    missing = _missing_credentials(bundle, src)
    if missing:
        return _lane_signal(
            src.name,
            "missing-credential",
            "blocked",
            "missing " + ", ".join(missing),
            at=at,
            actor="human-required",
            command="provide "
            + ", ".join(m.split(" (")[0] for m in missing)
            + ", then 'ouro sentinel refresh'",
        )
    if src.command is None:
        what = ", ".join([*src.env, *src.files]) or "nothing declared"
        return _lane_signal(src.name, "ok", "none", f"present: {what}", at=at)
    if not run_commands:
        return None
    key = f"readiness.{src.name}.command"
    try:
        command = checkrun.check_command(bundle, src.command, field=key)
    except OuroError as exc:
        return _lane_signal(
            src.name, "unknown", "watch", f"check refused: {exc.message}", at=at,
            actor="human-required", command=f"ouro config set {key} 'COMMAND'",
        )  # fmt: skip
    assert command is not None
    if not checkrun.is_trusted(bundle, command):
        if not yes:
            return _lane_signal(
                src.name, "unknown", "watch",
                f"check not run: it was not confirmed in this bundle; it would run: {command}",
                at=at, actor="human-required",
                command="ouro sentinel refresh --yes  # after reading the command",
            )  # fmt: skip
        checkrun.trust(bundle, command, how=f"sentinel readiness {src.name}")
    code, tail, timed_out, ms = _run(bundle, command, src)
    if code == 0:
        return _lane_signal(src.name, "ok", "none", f"check passed in {ms} ms: {command}", at=at)
    why = f"timed out after {src.timeout:g}s" if timed_out else f"exited {code}"
    return _lane_signal(
        src.name, "down", "blocked",
        f"check {why}: {command}" + (f" — {tail}" if tail else ""),
        at=at, actor="human-required",
        command=f"{command}  # the failing check: repair the provider, then 'ouro sentinel refresh'",
    )  # fmt: skip


def _run(bundle: Bundle, command: str, src: Source) -> tuple[int, str, bool, int]:
    """(exit code, redacted output tail, timed out, milliseconds), output bounded on disk."""
    from ouro.proof import checkrun
    from ouro.proof.redact import bundle_literals, redact

    env, _removed = checkrun.scrubbed_env(bundle)
    env.update({name: os.environ[name] for name in src.env if name in os.environ})
    start = time.monotonic()
    timed_out = False
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            command, shell=True, cwd=bundle.root, env=env, stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            code = proc.wait(timeout=src.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = checkrun.TIMEOUT_EXIT
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - 4 * TAIL))
        raw = out.read(4 * TAIL)  # a check's child still writing cannot grow it
    text = " ".join(raw.decode("utf-8", errors="replace").split())
    tail = redact(text[-TAIL:], bundle_literals(bundle))
    return code, tail, timed_out, int((time.monotonic() - start) * 1000)


# --- the lane's memory ---------------------------------------------------------------


def lane_path(bundle: Bundle) -> Path:
    return bundle.root / LANE


def read_lane(bundle: Bundle) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The remembered results by source, and a problem reading them (None: fine)."""
    try:
        data = orjson.loads(file_bytes(lane_path(bundle)))
    except FileNotFoundError:
        return {}, None
    except (OSError, orjson.JSONDecodeError) as exc:
        return {}, f"{LANE} unreadable ({exc})"
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, dict):
        return {}, f"{LANE} holds no sources object"
    return {k: v for k, v in sources.items() if isinstance(v, dict)}, None


def remember(bundle: Bundle, fresh: list[Signal]) -> None:
    """Keep each fresh result as its source's last known state (newer wins)."""
    if not fresh:
        return
    from ouro.proof.redact import bundle_literals, redact_obj

    literals = bundle_literals(bundle)
    with FileLock(bundle.lock_path("lane"), purpose="provider lane"):
        known, _problem = read_lane(bundle)  # an unreadable lane is replaced by fresh evidence
        for sig in fresh:
            before = known.get(sig.source)
            if before and str(before.get("checkedAt", "")) > str(sig.checked_at or ""):
                continue
            kept = {k: v for k, v in sig.to_json().items() if k not in ("kind", "source", "fresh")}
            known[sig.source] = redact_obj(kept, literals)  # a caller's signal may hold a secret
        atomic_write_json(lane_path(bundle), {"schemaVersion": 1, "sources": known})


def _age(at: str, now: datetime) -> str:
    try:
        seconds = max(0, int((now - parse_time(at)).total_seconds()))
    except ValueError:
        return "age unknown"
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    if seconds < 172800:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def recall(bundle: Bundle, skip: set[str], names: list[str], now: datetime) -> list[Signal]:
    """The last known state of every lane source without fresh evidence (``skip``);
    ``unknown`` for a declared source (``names``) that has none."""
    known, problem = read_lane(bundle)
    out = []
    if problem:
        out.append(
            Signal(
                kind=KIND, source="lane", status="unknown", verdict_impact="watch",
                repair_actor="agent-runnable", repair_command="ouro sentinel refresh",
                detail=f"{problem}: the last known provider state is unknown", fresh=False,
            )
        )  # fmt: skip
    for name in sorted(set(known) | set(names)):
        if name in skip:
            continue
        last = known.get(name)
        if last is None:
            out.append(
                Signal(
                    kind=KIND, source=name, status="unknown", verdict_impact="watch",
                    repair_actor="agent-runnable", repair_command="ouro sentinel refresh",
                    detail="declared readiness source with no result yet: readiness unknown",
                    fresh=False,
                )
            )  # fmt: skip
            continue
        at = str(last.get("checkedAt") or "")
        impact = last.get("verdictImpact")
        out.append(
            Signal(
                kind=KIND,
                source=name,
                status=str(last.get("status") or "unknown"),
                verdict_impact=impact if impact in ("none", "watch", "blocked") else "watch",
                repair_actor=last.get("repairActor"),
                repair_command=last.get("repairCommand"),
                detail=f"last known {last.get('status')} at {at} ({_age(at, now)}); no fresh "
                f"evidence in this refresh"
                + (f" — {last['detail']}" if last.get("detail") else ""),
                checked_at=at or None,
                fresh=False,
            )
        )
    return out


def gather(
    bundle: Bundle,
    caller: list[Signal],
    *,
    now: datetime,
    run_commands: bool = False,
    yes: bool = False,
) -> list[Signal]:
    """Every provider-lane signal for this refresh: fresh ones (declared checks, and the
    caller's provider-lane signals) remembered, the rest recalled. Outside the sentinel lock."""
    at = format_time(now)
    sources = declared(bundle)
    fresh = [replace(sig, checked_at=at, fresh=True) for sig in caller if sig.kind == KIND]
    given = {sig.source for sig in fresh}
    for src in sources:
        if src.name in given:
            continue  # the caller's word for this source is this refresh's evidence
        found = check_source(bundle, src, run_commands=run_commands, yes=yes, at=at)
        if found is not None:
            fresh.append(found)
    remember(bundle, fresh)
    recalled = recall(bundle, {s.source for s in fresh}, [s.name for s in sources], now)
    return [*fresh, *recalled]
