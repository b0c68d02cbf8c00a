"""Host receipts that wait for the host's transcript, settled at later hook events.

``confirm_pending`` runs first at every hook event of a session whose ledger
(``ouro.hooks.receipts``) has pending entries (``ouro.hooks.common.run_hook``
checks with one small read). For each entry it reads the host's transcript
again (``ouro.hooks.witness``): once the call is there and matches the report,
its asserted receipts become ``observed-by-host`` in place (or, when the
report had no exit status, are written now with the source hashes taken at the
report); a call the transcript contradicts, or that has not appeared after
``PENDING_SECONDS`` / ``PENDING_ATTEMPTS``, stays asserted and leaves the
ledger. Settling is safe to repeat: a run the host cut short is finished at the
next event without writing a receipt twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.hooks import receipts, transcript
from ouro.hooks.common import HookInput, Host, Reply, describe
from ouro.hooks.witness import OBSERVED, Verdict, judge
from ouro.models.clock import parse_time, utc_now


def confirm_pending(
    bundle: Bundle, host: Host, inp: HookInput, env: Mapping[str, str]
) -> list[str]:
    """Look again for this session's pending calls in the host's transcript.

    A call now shown as reported turns its asserted receipts into
    ``observed-by-host`` (in place); one the transcript contradicts, or that
    never appears (``receipts.PENDING_SECONDS`` / ``PENDING_ATTEMPTS``), stays
    asserted and leaves the ledger. Returns the warnings. When another hook of
    the session holds the ledger, this one leaves it to that one.
    """
    warnings: list[str] = []
    lock = receipts.session_lock(bundle, host.name, inp.session_id)
    try:
        if not lock.try_acquire():
            return warnings
    except (OuroError, OSError) as exc:
        return [f"pending host receipts not checked: {exc}"]
    try:
        path = receipts.ledger_path(bundle, host.name, inp.session_id)
        ledger, problem = receipts.load(path)
        if problem:
            warnings.append(problem)
        keep = []
        now = utc_now()
        for entry in ledger["pending"]:
            if isinstance(entry, dict) and _recheck(bundle, host, inp, env, entry, now, warnings):
                entry["attempts"] = int(entry.get("attempts") or 0) + 1
                keep.append(entry)
        ledger["pending"] = keep
        receipts.save(path, ledger, host=host.name, session_id=inp.session_id)
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        warnings.append(f"pending host receipts not checked: {text}")
    finally:
        lock.release()
    return warnings


def _recheck(
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    env: Mapping[str, str],
    entry: dict[str, Any],
    now: datetime,
    warnings: list[str],
) -> bool:
    """True to keep waiting; False when the entry is settled (confirmed or not)."""
    tool_id = str(entry.get("toolUseId"))
    command = str(entry.get("command") or "")
    label = f"{command.strip()!r} (tool call {tool_id})"
    try:
        created = parse_time(str(entry.get("createdAt")))
    except ValueError:
        warnings.append(f"{label}: pending receipt has no readable time; it stays asserted")
        return False
    path, why = transcript.trusted_path(host.name, entry.get("transcript"), inp.session_id, env)
    if path is None or inp.session_id is None:
        warnings.append(f"{label} stays asserted: {why}")
        return False
    found = transcript.lookup(host.name, path, inp.session_id, tool_id)
    if found.run is None:
        waited = (now - created).total_seconds()
        attempts = int(entry.get("attempts") or 0)
        if (
            found.retry
            and waited <= receipts.PENDING_SECONDS
            and attempts < receipts.PENDING_ATTEMPTS
        ):
            return True
        warnings.append(f"{label} never appeared in the host's transcript; it stays asserted")
        return False
    claimed = entry.get("exitCode")
    verdict = judge(
        found.run,
        command,
        claimed if isinstance(claimed, int) else None,
        entry.get("cwd") if isinstance(entry.get("cwd"), str) else None,
        reference=created,
    )
    if verdict.kind != OBSERVED or verdict.exit_code is None:
        warnings.append(f"{label} stays asserted: {verdict.reason}")
        return False
    _upgrade(bundle, host, inp, entry, verdict, warnings)
    return False


def _upgrade(
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    entry: dict[str, Any],
    verdict: Verdict,
    warnings: list[str],
) -> None:
    """The transcript now shows the call: its receipts become observed-by-host."""
    from ouro.arc.claims import confirm_host_run

    assert verdict.exit_code is not None
    command = str(entry["command"]).strip()
    event = inp.event or "a later hook event"
    note = f"confirmed in the host's transcript at {event}"
    claims, tasks, sources = (
        _dict(entry.get("claims")),
        _dict(entry.get("tasks")),
        _dict(entry.get("sources")),
    )
    digest = entry.get("outputDigest") if isinstance(entry.get("outputDigest"), str) else None
    tail = entry.get("tail") if isinstance(entry.get("tail"), str) else None
    reply = Reply()
    late = entry.get("exitCode") is None  # nothing recorded yet: record it now
    receipts.tool_event(bundle, host, inp, command, verdict.exit_code, digest, [*claims, *tasks],
                str(entry["toolUseId"]), verdict, reply, confirmed_at=event)  # fmt: skip
    if late:
        # A run cut short after writing some of these (the host's timeout) left them
        # written: the next event writes only the rest.
        since = str(entry.get("createdAt") or "")
        todo_claims = [
            c for c in claims if not receipts.claim_has(bundle, c, host.name, digest, since)
        ]
        todo_tasks = [
            t for t in tasks if not receipts.task_has(bundle, t, host.name, digest, since)
        ]
        receipts.claim_receipts(bundle, host, command, verdict.exit_code, digest, tail, todo_claims,
                        True, note, reply, sources.get("claims") or {})  # fmt: skip
        receipts.task_receipts(bundle, host, command, verdict.exit_code, digest, tail, todo_tasks,
                       True, note, reply, sources.get("tasks") or {})  # fmt: skip
    else:
        for claim_id, recorded_at in claims.items():
            if not isinstance(recorded_at, str):
                continue
            try:
                confirm_host_run(bundle, claim_id, recorded_at=recorded_at, command=command,
                                 host=host.name, note=note)  # fmt: skip
            except OuroError as exc:
                reply.warnings.append(f"receipt for {claim_id} not confirmed: {describe(exc)}")
        for task_id, at in tasks.items():
            if not isinstance(at, str):
                continue
            try:
                receipts.confirm_task(
                    bundle, task_id, at=at, command=command, host=host.name, note=note
                )
            except OuroError as exc:
                reply.warnings.append(f"receipt for {task_id} not confirmed: {describe(exc)}")
    warnings.extend(reply.warnings)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
