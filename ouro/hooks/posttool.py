"""``PostToolUse`` / ``PostToolUseFailure``: host receipts of declared checks.

When the host reports a shell command it ran (Claude Code's ``Bash`` tool,
Codex's ``Bash``-named shell tool) and that command is exactly (after trimming
whitespace) the declared ``check`` of an open claim (not superseded) or an open
task (not done or dropped) whose repository root is the host's ``cwd``, ouro
records a receipt:

- claims: evidence via ``ouro.arc.claims.observe_host_run`` (``by`` = host);
- tasks: a ``check`` history event via ``ouro.desk.tasks.append_check``;
- one compact Arc event, ``tool_completed`` (exit 0) or ``tool_failed``, naming
  the host, the exit status, the output digest, the receipt's provenance and
  the claim / task ids.

The receipt is ``observed-by-host`` only when the host's *own* session
transcript shows that tool call: its ``tool_use_id``, the exact command and its
outcome (``ouro.hooks.transcript``: which file ouro trusts, and the format of
each host). A payload is only what something piped into ``ouro hook``; the
transcript is what the host wrote. The outcome ouro records is the host's:

- Claude Code runs ``PostToolUse`` for a command that succeeded and
  ``PostToolUseFailure`` (``error`` starting ``Exit code N``) for one that
  failed; its transcript's ``tool_result`` must say the same. A non-zero exit
  Claude does not count as an error (``test`` false, ``grep`` without a
  match) also gets ``PostToolUse``, marked ``returnCodeInterpretation`` and
  without its exit status: ouro records nothing for it (never exit 0);
- Codex sends ``tool_response`` as the output text only; the exit status is
  the one its transcript records (``CommandExecution.exit_code``);
- any host: an object ``tool_response`` with ``exit_code`` / ``exitCode`` is
  what the payload claims, and must match the transcript.

When the transcript does not show the call yet (Claude writes the result after
the hook), the receipt is recorded ``asserted`` with that reason and kept in
the session's ledger (``ouro.hooks.receipts``); every later hook event of the
session looks again (``confirm_pending``) and turns it into
``observed-by-host`` in place once the call is there. A report the transcript
contradicts (another command, another exit status, another folder, a time far
from now), or that names no trustworthy transcript, stays ``asserted`` with
the reason: asserted receipts never verify a claim or complete a task. One
tool call gives one receipt per session (a replayed payload records nothing).

The output itself is never kept: only its digest and a redacted tail. A report
without an exit status (none in the payload and none in the transcript), an
interrupted or background command, or a command that is not a declared check
records nothing (unknown stays unknown); a matching command whose ``cwd`` is
not the check's folder is named on stderr and not recorded. Reads are cheap
for unrelated commands: each claim and task file is read with raw ``os`` calls
and parsed only when its bytes contain the command (or, for a command with
quotes, each word); the transcript is read only for a declared check. The cost
grows with the number of claim and task files (``bench/posttool.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ouro.arc import paths
from ouro.arc.refs import repo_root
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.hooks import receipts, transcript
from ouro.hooks.common import HookInput, Host, Options, Reply, describe
from ouro.models.clock import format_time, parse_time, utc_now

SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "exec_command", "local_shell"})
_EXIT_PATTERNS = (
    re.compile(r"^\s*Exit code:?\s*(-?\d+)", re.MULTILINE),
    re.compile(r"Process exited with code (-?\d+)"),
)
#: how far from the hook (or, for a pending receipt, from the report) the
#: host's record of the result may be: the host writes it as the command ends
WINDOW_SECONDS = 600
OBSERVED, PENDING, ASSERTED = "observed-by-host", "pending", "asserted"


@dataclass(frozen=True)
class Observed:
    command: str  # trimmed: what is compared with a check
    raw: str  # as the host sent it: what is compared with the transcript
    exit_code: int | None  # what the payload says (Codex says nothing)
    output: bytes
    #: why the exit status is unknown and not 0 (Claude's returnCodeInterpretation)
    unknown: str | None = None


@dataclass(frozen=True)
class Verdict:
    """How far the host's transcript backs a report."""

    kind: str  # OBSERVED | PENDING | ASSERTED
    exit_code: int | None = None  # the transcript's, when OBSERVED
    reason: str = ""


def observation(
    event: str, tool: Mapping[str, Any] | None, host: str = "claude"
) -> Observed | None:
    """What the host reported, or None when it is not a finished shell command
    (for Claude Code also: one without a readable exit status)."""
    if not tool or tool.get("tool_name") not in SHELL_TOOLS:
        return None
    tool_input = tool.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list):  # an argv
        command = " ".join(str(part) for part in command)
    if not isinstance(command, str) or not command.strip():
        return None
    if isinstance(tool_input, dict) and tool_input.get("run_in_background"):
        return None  # still running: its PostToolUse is no outcome
    response = tool.get("tool_response")
    if tool.get("is_interrupt") is True:
        return None
    if isinstance(response, dict) and response.get("interrupted") is True:
        return None
    output = _output(response, tool.get("error"))
    if isinstance(response, dict) and response.get("returnCodeInterpretation"):
        # Claude Code runs PostToolUse for a non-zero exit it does not count as an
        # error ("Condition is false" for 'test', "No matches found" for 'grep'),
        # without the exit status: unknown, and never 0.
        why = str(response["returnCodeInterpretation"])[:80]
        return Observed(command.strip(), command, None, output, unknown=why)
    code = _exit_code(event, response, tool.get("error"))
    if code is None and host == "claude":
        return None  # Claude states every outcome; without one there is nothing to confirm
    return Observed(command.strip(), command, code, output)


def _output(response: Any, error: Any) -> bytes:
    parts: list[str] = []
    if isinstance(response, str):
        parts.append(response)
    elif isinstance(response, dict):
        for key in ("stdout", "stderr", "output"):
            value = response.get(key)
            if isinstance(value, str) and value:
                parts.append(value)
    if isinstance(error, str) and error:
        parts.append(error)
    return "\n".join(parts).encode("utf-8", errors="replace")


def _exit_code(event: str, response: Any, error: Any) -> int | None:
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returncode"):
            value = response.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    for text in (error, response):
        if isinstance(text, str):
            for pattern in _EXIT_PATTERNS:
                match = pattern.search(text)
                if match:
                    return int(match.group(1))
    if event == "PostToolUse" and isinstance(response, dict):
        return 0  # Claude Code: PostToolUse only follows a command that succeeded
    return None


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _head_bytes(path: str, limit: int = 1 << 16) -> bytes | None:
    """The first ``limit`` bytes of a file (raw ``os`` calls: this runs per file)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _needles(command: str) -> list[bytes]:
    """Byte strings that any file declaring ``command`` as its check contains.

    JSON and YAML keep a command without quotes, backslashes or control
    characters verbatim; otherwise each word (quotes stripped) must appear.
    """
    if not any(c in command for c in "'\"\\") and command.isprintable():
        return [command.encode("utf-8")]
    words = [w.strip("'\"\\") for w in command.split()]
    return [w.encode("utf-8") for w in words if w]


@dataclass(frozen=True)
class ClaimMatch:
    id: str
    root: str  # the folder its check runs in
    repo: str | None  # its own ``repo``, if set
    about: tuple[str, ...]


def _matching_claims(bundle: Bundle, command: str) -> list[ClaimMatch]:
    """The open claims whose check is ``command``."""
    folder = str(paths.claims_dir(bundle))
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    needles = _needles(command)
    default = repo_root(bundle)
    found = []
    for name in names:
        raw = _head_bytes(os.path.join(folder, name), 1 << 22)
        if raw is None or b'"check"' not in raw or not all(n in raw for n in needles):
            continue
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # unreadable claims are reported by claim list, not here
        if not isinstance(data, dict) or data.get("supersededBy"):
            continue
        check = data.get("check")
        if isinstance(check, str) and check.strip() == command:
            repo = data.get("repo")
            repo = repo if isinstance(repo, str) else None
            about = data.get("about")
            refs = tuple(a for a in about if isinstance(a, str)) if isinstance(about, list) else ()
            found.append(ClaimMatch(str(data.get("id")), repo or default, repo, refs))
    return found


def _matching_tasks(bundle: Bundle, command: str) -> list[str]:
    """Ids of open tasks whose check is ``command`` (parsed only on a byte match)."""
    needles = _needles(command)
    try:
        tracks = [e.path for e in os.scandir(bundle.desk) if e.is_dir() and e.name[0] != "_"]
    except OSError:
        return []
    found = []
    for track in sorted(tracks):
        try:
            folders = [e.path for e in os.scandir(track) if e.is_dir()]
        except OSError:
            continue
        for folder in sorted(folders):
            path = os.path.join(folder, "task.md")
            head = _head_bytes(path)
            if head is None or b"\ncheck:" not in head or not all(n in head for n in needles):
                continue
            from ouro.desk.tasks import load_task

            try:
                task = load_task(bundle, Path(path))
            except OuroError:
                continue
            check = task.meta.get("check")
            status = task.meta.get("status")
            if (
                isinstance(check, str)
                and check.strip() == command
                and status not in ("done", "dropped")
            ):
                found.append(task.id)
    return found


def observe(bundle: Bundle, host: Host, inp: HookInput, options: Options | None = None) -> Reply:
    reply = Reply()
    seen = observation(inp.event or "PostToolUse", inp.tool, host.name)
    if seen is None:
        return reply
    claims = _matching_claims(bundle, seen.command)
    task_ids = _matching_tasks(bundle, seen.command)
    if not claims and not task_ids:
        return reply
    cwd = inp.cwd or ""
    default = repo_root(bundle)
    here_claims = [c for c in claims if cwd and _same_dir(cwd, c.root)]
    elsewhere = [c.id for c in claims if not (cwd and _same_dir(cwd, c.root))]
    here_tasks = task_ids if cwd and _same_dir(cwd, default) else []
    skipped = elsewhere + [t for t in task_ids if t not in here_tasks]
    if skipped:
        reply.warnings.append(
            f"{seen.command!r} ran in {cwd or 'an unknown folder'}, not in the folder the "
            f"check of {', '.join(skipped)} runs in; not recorded"
        )
    if not here_claims and not here_tasks:
        return reply
    if seen.unknown is not None:
        reply.warnings.append(
            f"{seen.command!r} exited non-zero ({host.title} says {seen.unknown!r}) and the "
            "host gives no exit status; not recorded"
        )
        return reply
    env = options.env if options is not None and options.env is not None else os.environ
    try:
        with receipts.session_lock(bundle, host.name, inp.session_id):
            _receipt(bundle, host, inp, env, seen, here_claims, here_tasks, reply)
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"receipt for {seen.command!r} not recorded: {text}")
    return reply


def _tool_id(inp: HookInput) -> str | None:
    raw = (inp.tool or {}).get("tool_use_id")
    return raw if transcript.valid_tool_id(raw) else None


def witness(
    host: Host, inp: HookInput, seen: Observed, env: Mapping[str, str], *, now: datetime
) -> Verdict:
    """What the host's own transcript says about the reported call."""
    tool_id = _tool_id(inp)
    if tool_id is None:
        return Verdict(ASSERTED, reason="the report names no tool_use_id the host could record")
    path, why = transcript.trusted_path(host.name, inp.transcript_path, inp.session_id, env)
    if path is None:
        return Verdict(ASSERTED, reason=why)
    assert inp.session_id is not None  # trusted_path requires one
    found = transcript.lookup(host.name, path, inp.session_id, tool_id)
    if found.run is None:
        return Verdict(PENDING if found.retry else ASSERTED, reason=found.reason)
    return judge(found.run, seen.raw, seen.exit_code, inp.cwd, reference=now)


def judge(
    run: transcript.HostRun,
    raw: str,
    claimed: int | None,
    cwd: str | None,
    *,
    reference: datetime,
) -> Verdict:
    """OBSERVED when the transcript's call is the reported one; else ASSERTED and why."""
    if run.command != raw:
        return Verdict(
            ASSERTED, reason=f"the host's transcript shows that call ran {run.command!r:.120}"
        )
    if run.interrupted or run.exit_code is None:
        return Verdict(ASSERTED, reason="the host's transcript records no exit status for it")
    if claimed is not None and claimed != run.exit_code:
        return Verdict(
            ASSERTED,
            reason=f"the report says exit {claimed}; the host's transcript records exit {run.exit_code}",
        )
    try:
        at = parse_time(run.at) if run.at else None
    except ValueError:
        at = None
    if at is None:
        return Verdict(ASSERTED, reason="the host's transcript records no time for the result")
    if abs((at - reference).total_seconds()) > WINDOW_SECONDS:
        return Verdict(
            ASSERTED,
            reason=f"the host recorded that result at {run.at}, not around the report "
            f"({format_time(reference)})",
        )
    if run.cwd and cwd and not _same_dir(run.cwd, cwd):
        return Verdict(ASSERTED, reason=f"the host's transcript shows it ran in {run.cwd}")
    return Verdict(OBSERVED, exit_code=run.exit_code)


def _note(host: Host, verdict: Verdict) -> str | None:
    if verdict.kind == OBSERVED:
        return None
    if verdict.kind == PENDING:
        return (
            f"reported by the {host.name} hook, not yet in the host's transcript "
            f"({verdict.reason}); it counts once the transcript shows the call"
        )
    return f"reported by the {host.name} hook, not confirmed by the host's transcript: {verdict.reason}"


def _receipt(
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    env: Mapping[str, str],
    seen: Observed,
    claims: list[ClaimMatch],
    task_ids: list[str],
    reply: Reply,
) -> None:
    """Judge the report against the transcript and record it (under the session lock)."""
    from ouro.arc import checkrun
    from ouro.arc.redact import bundle_literals
    from ouro.models.hashing import content_hash

    tool_id = _tool_id(inp)
    path = receipts.ledger_path(bundle, host.name, inp.session_id)
    ledger, problem = receipts.load(path)
    if problem:
        reply.warnings.append(problem)
    if tool_id is not None and tool_id in ledger["seen"]:
        reply.warnings.append(
            f"tool call {tool_id} already gave a receipt in this session; not recorded again"
        )
        return
    now = utc_now()
    verdict = witness(host, inp, seen, env, now=now)
    exit_code = verdict.exit_code if verdict.kind == OBSERVED else seen.exit_code
    if exit_code is None and verdict.kind != PENDING:
        reply.warnings.append(f"{seen.command!r} not recorded: {verdict.reason}")
        return
    digest = content_hash(seen.output)
    tail = checkrun.tail_of(seen.output, bundle_literals(bundle))
    ids = [c.id for c in claims]
    if verdict.kind == ASSERTED:
        # A pending report is the usual case with Claude (its transcript lags the
        # hook) and is settled at a later event: only a refused one is said here.
        reply.warnings.append(
            f"{seen.command!r} recorded as asserted (verifies nothing): {verdict.reason}"
        )
    written: tuple[dict[str, str | None], dict[str, str | None]] = (
        {c: None for c in ids},
        {t: None for t in task_ids},
    )
    if exit_code is not None:
        _tool_event(bundle, host, inp, seen.command, exit_code, digest, ids + task_ids, tool_id,
                    verdict, reply)  # fmt: skip
        confirmed = verdict.kind == OBSERVED
        note = _note(host, verdict)
        written = (
            _claim_receipts(bundle, host, seen.command, exit_code, digest, tail, ids, confirmed, note, reply),
            _task_receipts(bundle, host, seen.command, exit_code, digest, tail, task_ids, confirmed, note, reply),
        )  # fmt: skip
    if verdict.kind == PENDING and tool_id is not None:
        ledger["pending"].append(
            {
                "toolUseId": tool_id,
                "transcript": inp.transcript_path,
                "command": seen.raw,
                "exitCode": exit_code,
                "cwd": inp.cwd,
                "outputDigest": digest,
                "tail": tail,
                "createdAt": format_time(now),
                "attempts": 0,
                "claims": written[0],
                "tasks": written[1],
                "sources": _sources(bundle, claims, task_ids) if exit_code is None else {},
            }
        )
    if tool_id is not None:
        ledger["seen"].append(tool_id)
    receipts.save(path, ledger, host=host.name, session_id=inp.session_id)


def _sources(bundle: Bundle, claims: list[ClaimMatch], task_ids: list[str]) -> dict[str, Any]:
    """The hashes of what each check is about, as of the report (for a late receipt)."""
    from ouro.arc.claim_derive import Unresolvable, hash_ref
    from ouro.desk.tasks import about_hashes, find_task

    out: dict[str, Any] = {"claims": {}, "tasks": {}}
    for claim in claims:
        pairs = []
        for ref in claim.about:
            try:
                pairs.append([ref, hash_ref(bundle, ref, claim.repo)])
            except Unresolvable:
                continue
        out["claims"][claim.id] = pairs
    for task_id in task_ids:
        try:
            about = list(find_task(bundle, task_id).meta.get("about") or [])
        except OuroError:
            about = []
        out["tasks"][task_id] = about_hashes(bundle, about)
    return out


def _tool_event(
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


def _claim_receipts(
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


def _task_receipts(
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


# --- later hook events: receipts waiting for the transcript -------------------


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
    _tool_event(bundle, host, inp, command, verdict.exit_code, digest, [*claims, *tasks],
                str(entry["toolUseId"]), verdict, reply, confirmed_at=event)  # fmt: skip
    if late:
        # A run cut short after writing some of these (the host's timeout) left them
        # written: the next event writes only the rest.
        since = str(entry.get("createdAt") or "")
        todo_claims = [c for c in claims if not _claim_has(bundle, c, host.name, digest, since)]
        todo_tasks = [t for t in tasks if not _task_has(bundle, t, host.name, digest, since)]
        _claim_receipts(bundle, host, command, verdict.exit_code, digest, tail, todo_claims,
                        True, note, reply, sources.get("claims") or {})  # fmt: skip
        _task_receipts(bundle, host, command, verdict.exit_code, digest, tail, todo_tasks,
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
                _confirm_task(bundle, task_id, at=at, command=command, host=host.name, note=note)
            except OuroError as exc:
                reply.warnings.append(f"receipt for {task_id} not confirmed: {describe(exc)}")
    warnings.extend(reply.warnings)


def _claim_has(bundle: Bundle, claim_id: str, host: str, digest: str | None, since: str) -> bool:
    """Whether the claim already has an observed receipt from ``host`` of this output since."""
    from ouro.arc.claims import get_claim

    try:
        evidence = get_claim(bundle, claim_id).evidence
    except OuroError:
        return False
    return any(
        e.provenance == OBSERVED and e.by == host and e.output_digest == digest
        and e.recorded_at >= since
        for e in evidence
    )  # fmt: skip


def _task_has(bundle: Bundle, task_id: str, host: str, digest: str | None, since: str) -> bool:
    """Whether the task already has an observed check event from ``host`` of this output since."""
    from ouro.desk.tasks import find_task, history_list

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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _confirm_task(
    bundle: Bundle, task_id: str, *, at: str, command: str, host: str, note: str
) -> None:
    """Make the task's asserted check event from ``host`` at ``at`` observed-by-host."""
    from ouro.desk.tasks import find_task, history_list, save_task, task_lock
    from ouro.errors import NotFound
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
