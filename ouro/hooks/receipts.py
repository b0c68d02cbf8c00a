"""Per-session host receipt ledger: ``state/hooks/<host>-<session>.receipts.json``.

One small JSON file per host session that reported a declared check::

    {"schemaVersion": 1, "host": "claude", "sessionId": "…",
     "seen": ["toolu_…", …],
     "pending": [{"toolUseId": "toolu_…", "transcript": "/…/<session>.jsonl",
                  "command": "pytest -q", "exitCode": 0, "cwd": "/repo",
                  "outputDigest": "sha256:…", "tail": "…", "createdAt": "…Z",
                  "attempts": 0,
                  "claims": {"cl-…": "<recordedAt of its asserted receipt>" | null},
                  "tasks": {"t-…": "<at of its asserted check event>" | null},
                  "sources": {"claims": {"cl-…": [[ref, hash], …]},
                              "tasks": {"t-…": {ref: hash}}}}]}

``seen`` holds the tool call ids that already gave a receipt in this session
(the newest ``SEEN_LIMIT``), so one call is never counted twice (a replayed
payload records nothing). ``pending`` holds the receipts recorded as
``asserted`` because the host's transcript did not show the call yet; every
later hook event of the session checks them again
(``ouro.hooks.posttool.confirm_pending``). ``null`` means no receipt was written
yet (the report carried no exit status: Codex's comes from its transcript);
``sources`` then keeps the hashes taken when the run was reported.

Runtime machinery under ``state/``: written atomically under
``state/locks/hook-receipts-<host>-<session>.lock``; an unreadable file is set
aside as ``<name>.unreadable`` and a fresh one started.

The writers below record what a host receipt changes, through each file's
owner: the ``tool_completed`` / ``tool_failed`` Arc event, claim evidence
(``ouro.arc.claims.observe_host_run`` / ``confirm_host_run``) and task check
events (``ouro.desk.tasks.append_check``; ``confirm_task`` upgrades one in
place under the task lock).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.hooks.common import HookInput, Host, Reply, describe
from ouro.hooks.state import STATE_DIR, session_slug
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # every hook event asks ``has_pending``: the rest loads on a receipt
    from ouro.hooks.witness import Verdict
    from ouro.store.lock import FileLock

SCHEMA_VERSION = 1
SEEN_LIMIT = 500
#: how long, and over how many later hook events, a receipt waits for the transcript
PENDING_SECONDS = 24 * 3600
PENDING_ATTEMPTS = 50
#: the most receipts one session keeps waiting (a flood of reports waits no longer)
PENDING_LIMIT = 100


def ledger_path(bundle: Bundle, host: str, session_id: str | None) -> Path:
    return bundle.root / STATE_DIR / f"{host}-{session_slug(session_id)}.receipts.json"


def session_lock(bundle: Bundle, host: str, session_id: str | None) -> FileLock:
    from ouro.store.lock import FileLock  # a receipt only: never for an unrelated command

    name = f"hook-receipts-{host}-{session_slug(session_id)}"
    return FileLock(bundle.lock_path(name), timeout=5.0, purpose="host receipts")


def has_pending(bundle: Bundle, host: str, session_id: str | None) -> bool:
    """Whether this session has receipts waiting for the transcript (cheap: one read)."""
    if not session_id:
        return False
    try:
        data = jsonio.loads(file_bytes(ledger_path(bundle, host, session_id)))
    except (OSError, jsonio.JSONDecodeError):
        return False  # none, or unreadable (the next receipt sets it aside)
    return isinstance(data, dict) and bool(data.get("pending"))


def load(path: Path) -> tuple[dict[str, Any], str | None]:
    """(the ledger, a warning when an unreadable one was set aside)."""
    try:
        data = jsonio.loads(file_bytes(path))  # a FIFO or a huge file: set aside
    except FileNotFoundError:
        return {"schemaVersion": SCHEMA_VERSION, "seen": [], "pending": []}, None
    except (OSError, jsonio.JSONDecodeError) as exc:
        return _fresh(path, str(exc))
    if (
        not isinstance(data, dict)
        or data.get("schemaVersion") != SCHEMA_VERSION
        or not isinstance(data.get("seen"), list)
        or not isinstance(data.get("pending"), list)
    ):
        return _fresh(path, f"not a version-{SCHEMA_VERSION} receipts ledger")
    return data, None


def _fresh(path: Path, why: str) -> tuple[dict[str, Any], str]:
    target = path.with_name(path.name + ".unreadable")
    empty = {"schemaVersion": SCHEMA_VERSION, "seen": [], "pending": []}
    try:
        os.replace(path, target)
    except OSError as exc:
        return empty, f"{path.name}: {why}; could not set it aside ({exc})"
    return empty, f"{path.name}: {why}; kept as {target.name}, starting a fresh ledger"


def save(path: Path, data: dict[str, Any], *, host: str, session_id: str | None) -> None:
    data["host"] = host
    data["sessionId"] = session_id
    data["seen"] = [s for s in data["seen"] if isinstance(s, str)][-SEEN_LIMIT:]
    from ouro.store.atomic import atomic_write_json

    atomic_write_json(path, data)


# --- what a receipt writes ------------------------------------------------------------


def tool_event(
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    command: str,
    exit_code: int,
    digest: str | None,
    check_of: list[str],
    tool_id: str | None,
    verdict: Verdict,
    reply: Reply,
    *,
    confirmed_at: str | None = None,
) -> None:
    from ouro.arc.recorder import record_event
    from ouro.hooks.witness import ASSERTED, OBSERVED

    # The tool event first: the receipts that follow are what the packet shows
    # as the latest event, so the tool event never crowds it.
    kind = "tool_completed" if exit_code == 0 else "tool_failed"
    how = OBSERVED if verdict.kind == OBSERVED else ASSERTED
    said = "ran" if how == OBSERVED else "reported"
    summary = f"{host.title} {said} the check {command[:80]!r}: exit {exit_code}"
    if confirmed_at:
        summary += f" (confirmed in its transcript at {confirmed_at})"
    try:
        record_event(
            bundle,
            kind,
            summary,
            session_ref=f"{host.name}:{inp.session_id}" if inp.session_id else None,
            turn_id=inp.turn_id,
            meta={
                "host": host.name,
                "exitCode": exit_code,
                "outputDigest": digest,
                "checkOf": check_of,
                "toolUseId": tool_id,
                "provenance": how,
                "reason": verdict.reason or None,
            },
        )
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"{kind} not recorded: {text}")


def claim_receipts(
    bundle: Bundle,
    host: Host,
    command: str,
    exit_code: int,
    digest: str | None,
    tail: str | None,
    claim_ids: list[str],
    confirmed: bool,
    note: str | None,
    reply: Reply,
    sources: Mapping[str, Any] | None = None,
) -> dict[str, str | None]:
    """Each claim's receipt; returns claim id → its ``recordedAt`` (None: not recorded)."""
    from ouro.arc.claims import observe_host_run

    out: dict[str, str | None] = {}
    for claim_id in claim_ids:
        pairs = None
        if sources is not None:
            pairs = [(str(r), str(h)) for r, h in sources.get(claim_id) or []]
        try:
            shown = observe_host_run(
                bundle,
                claim_id,
                command=command,
                exit_code=exit_code,
                host=host.name,
                digest=digest,
                tail=tail,
                confirmed=confirmed,
                note=note,
                sources=pairs,
            )
            out[claim_id] = str(shown["evidence"][-1]["recordedAt"])
        except OuroError as exc:
            out[claim_id] = None
            reply.warnings.append(f"receipt for {claim_id} not recorded: {describe(exc)}")
    return out


def task_receipts(
    bundle: Bundle,
    host: Host,
    command: str,
    exit_code: int,
    digest: str | None,
    tail: str | None,
    task_ids: list[str],
    confirmed: bool,
    note: str | None,
    reply: Reply,
    sources: Mapping[str, Any] | None = None,
) -> dict[str, str | None]:
    """Each task's check event; returns task id → its ``at`` (None: not recorded)."""
    from ouro.desk.tasks import about_hashes, acting_agent, append_check, find_task
    from ouro.hooks.witness import ASSERTED, OBSERVED

    out: dict[str, str | None] = {}
    for task_id in task_ids:
        try:
            if sources is not None and isinstance(sources.get(task_id), dict):
                hashes = dict(sources[task_id])
            else:
                hashes = about_hashes(
                    bundle, list(find_task(bundle, task_id).meta.get("about") or [])
                )
            task = append_check(
                bundle,
                task_id,
                command=command,
                fields={
                    "exitCode": exit_code,
                    "provenance": OBSERVED if confirmed else ASSERTED,
                    "by": host.name,
                    "outputDigest": digest,
                    "tail": tail,
                    "note": note,
                },
                sources=hashes,
                agent=acting_agent(bundle, None),
            )
            out[task_id] = str(task.meta["history"][-1]["at"])
        except OuroError as exc:
            out[task_id] = None
            reply.warnings.append(f"receipt for {task_id} not recorded: {describe(exc)}")
    return out


def claim_has(bundle: Bundle, claim_id: str, host: str, digest: str | None, since: str) -> bool:
    """Whether the claim already has an observed receipt from ``host`` of this output since."""
    from ouro.arc.claims import get_claim
    from ouro.hooks.witness import OBSERVED

    try:
        evidence = get_claim(bundle, claim_id).evidence
    except OuroError:
        return False
    return any(
        e.provenance == OBSERVED and e.by == host and e.output_digest == digest
        and e.recorded_at >= since
        for e in evidence
    )  # fmt: skip


def task_has(bundle: Bundle, task_id: str, host: str, digest: str | None, since: str) -> bool:
    """Whether the task already has an observed check event from ``host`` of this output since."""
    from ouro.desk.tasks import find_task, history_list
    from ouro.hooks.witness import OBSERVED

    try:
        history = history_list(find_task(bundle, task_id).meta.get("history"))
    except OuroError:
        return False
    return any(
        isinstance(e, dict) and e.get("event") == "check" and e.get("provenance") == OBSERVED
        and e.get("by") == host and e.get("outputDigest") == digest
        and str(e.get("at") or "") >= since
        for e in history
    )  # fmt: skip


def confirm_task(
    bundle: Bundle, task_id: str, *, at: str, command: str, host: str, note: str
) -> None:
    """Make the task's asserted check event from ``host`` at ``at`` observed-by-host."""
    from ouro.desk.tasks import find_task, history_list, save_task, task_lock
    from ouro.errors import NotFound
    from ouro.hooks.witness import ASSERTED, OBSERVED
    from ouro.models.clock import utc_now_iso

    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        history = history_list(task.meta.get("history"))
        for index, event in enumerate(history):
            if not isinstance(event, dict) or event.get("event") != "check":
                continue
            if (event.get("at"), event.get("by"), event.get("command")) != (at, host, command):
                continue
            if event.get("provenance") == OBSERVED:
                return
            if event.get("provenance") != ASSERTED:
                break
            history[index] = {**event, "provenance": OBSERVED, "note": note}
            task.meta["history"] = history
            task.meta["updated"] = utc_now_iso()
            save_task(task)
            return
    raise NotFound(
        f"task {task_id} has no asserted check event from {host} at {at}",
        hint=f"see its history with 'ouro desk task show {task_id}'",
    )
