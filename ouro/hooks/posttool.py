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
each host; ``ouro.hooks.witness``: what must agree). A payload is only what something piped into ``ouro hook``; the
transcript is what the host wrote. The outcome ouro records is the host's:

- Claude Code runs ``PostToolUse`` for a command that succeeded and
  ``PostToolUseFailure`` (``error`` starting ``Exit code N``) for one that
  failed; its transcript's ``tool_result`` must say the same. A non-zero exit
  Claude does not count as an error (``test`` false, ``grep`` without a
  match) also gets ``PostToolUse``, marked ``returnCodeInterpretation`` and
  without its exit status: ouro records nothing for it (never exit 0);
- Codex sends ``tool_response`` as the output text only; the exit status is
  the one its transcript records (``CommandExecution.exit_code``);
- Gemini CLI (``AfterTool`` for ``run_shell_command``) sends the tool's
  ``llmContent``, which states ``Exit Code: N`` for a non-zero exit only; its
  payload carries no tool call id, so its receipts stay ``asserted`` (ouro
  cannot tie the report to an entry of the host's own transcript);
- any host: an object ``tool_response`` with ``exit_code`` / ``exitCode`` is
  what the payload claims, and must match the transcript.

When the transcript does not show the call yet (Claude writes the result after
the hook), the receipt is recorded ``asserted`` with that reason and kept in
the session's ledger (``ouro.hooks.receipts``); every later hook event of the
session looks again (``ouro.hooks.pending``) and turns it into
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
for unrelated commands: a command that is not in the declared-checks list
(``ouro.derived.checks``: a few ``stat`` calls while it is fresh) is done
there. For one that is, each claim file is read with raw ``os`` calls and
parsed only when its bytes contain the command (or, for a command with quotes,
each word); tasks are looked up in the desk heads (``ouro.desk.heads``: one
``stat`` per task while the cache holds; a read that finds it stale saves
it), and only a task they name is read; the transcript is read only for a
declared check. The cost grows with the number of claim and task files
(``bench/posttool.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, OuroError
from ouro.hooks.common import HookInput, Host, Options, Reply, describe, shell_command
from ouro.store import jsonio

# The receipt's modules (``ouro.hooks.receipts``, ``ouro.hooks.witness``, the
# transcript readers) are imported only for a command that is a declared check:
# an unrelated command (most of them) pays for the lookup alone.

_EXIT_PATTERNS = (
    re.compile(r"^\s*Exit code:?\s*(-?\d+)", re.MULTILINE),
    re.compile(r"Process exited with code (-?\d+)"),
)


class Observed(NamedTuple):
    command: str  # trimmed: what is compared with a check
    raw: str  # as the host sent it: what is compared with the transcript
    exit_code: int | None  # what the payload says (Codex says nothing)
    output: bytes
    #: why the exit status is unknown and not 0 (Claude's returnCodeInterpretation)
    unknown: str | None = None


def observation(
    event: str, tool: Mapping[str, Any] | None, host: str = "claude"
) -> Observed | None:
    """What the host reported, or None when it is not a finished shell command
    (for Claude Code also: one without a readable exit status)."""
    command = shell_command(tool)
    if tool is None or command is None:
        return None
    tool_input = tool.get("tool_input")
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
    code = (
        _gemini_exit(response)
        if host == "gemini"
        else _exit_code(event, response, tool.get("error"))
    )
    if code is None and host == "claude":
        return None  # Claude states every outcome; without one there is nothing to confirm
    return Observed(command.strip(), command, code, output)


def _output(response: Any, error: Any) -> bytes:
    parts: list[str] = []
    if isinstance(response, str):
        parts.append(response)
    elif isinstance(response, dict):
        for key in ("stdout", "stderr", "output", "llmContent"):
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


#: Gemini CLI's shell tool result (``llmContent``): ``Output: …`` then, for a
#: non-zero exit only, ``Exit Code: N``; a signal, an error, a cancelled or
#: background command has no exit status (``packages/core/src/tools/shell.ts``)
_GEMINI_EXIT = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)
_GEMINI_UNKNOWN = re.compile(r"^(Signal|Error|Background PIDs): ", re.MULTILINE)


def _gemini_exit(response: Any) -> int | None:
    text = response.get("llmContent") if isinstance(response, dict) else None
    if not isinstance(text, str):
        return None
    if not text.removeprefix("<untrusted_context>\n").startswith("Output: "):
        return None
    if isinstance(response, dict) and response.get("error") and not _GEMINI_EXIT.search(text):
        return None
    found = _GEMINI_EXIT.search(text)
    if found:
        return int(found.group(1))
    return None if _GEMINI_UNKNOWN.search(text) else 0


def _head_bytes(path: str, limit: int = 1 << 16) -> bytes | None:
    """The first ``limit`` bytes of a file (raw ``os`` calls: this runs per file).

    Read in 64 KiB steps: ``os.read`` allocates the whole size asked for, and a
    claim file is a few hundred bytes (4 MiB per read cost ~20 µs a file).
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        step = min(limit, _STEP)
        data = os.read(fd, step)
        if len(data) < step:
            return data
        parts = [data]
        size = len(data)
        while size < limit:
            more = os.read(fd, min(_STEP, limit - size))
            if not more:
                break
            parts.append(more)
            size += len(more)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


_STEP = 1 << 16


def _needles(command: str) -> list[bytes]:
    """Byte strings that any file declaring ``command`` as its check contains.

    JSON and YAML keep a command without quotes, backslashes or control
    characters verbatim; otherwise each word (quotes stripped) must appear.
    """
    if not any(c in command for c in "'\"\\") and command.isprintable():
        return [command.encode("utf-8")]
    words = [w.strip("'\"\\") for w in command.split()]
    return [w.encode("utf-8") for w in words if w]


class ClaimMatch(NamedTuple):
    id: str
    root: str  # the folder its check runs in
    repo: str | None  # its own ``repo``, if set
    about: tuple[str, ...]


def _matching_claims(bundle: Bundle, command: str) -> list[ClaimMatch]:
    """The open claims whose check is ``command``."""
    from ouro.arc import paths
    from ouro.proof.refs import repo_root
    from ouro.store.guard import Inside, names_inside  # imported by ``declared`` already

    folder = str(paths.claims_dir(bundle))
    if Inside(bundle.root).folder(folder) is None:
        return []  # never read: ``ouro claim list`` names it
    try:  # nor a claim behind a symlink leading outside
        names = names_inside(folder, lambda n: n.endswith(".json"), None)
    except OSError:
        return []
    needles = _needles(command)
    default = repo_root(bundle)
    found = []
    for name in names:
        raw = _head_bytes(os.path.join(folder, name), 1 << 22)
        if raw is None or b'"check"' not in raw or not all(n in raw for n in needles):
            continue
        from ouro.arc.claim_status import claim_from_json

        try:
            claim = claim_from_json(jsonio.loads(raw))
        except (jsonio.JSONDecodeError, InvalidInput):
            continue  # unreadable claims are reported by claim list, not here
        if claim.superseded_by:
            continue
        if claim.check is not None and claim.check.strip() == command:
            found.append(ClaimMatch(claim.id, claim.repo or default, claim.repo, claim.about))
    return found


def _matching_tasks(bundle: Bundle, command: str) -> list[str]:
    """Ids of open tasks whose check is ``command``.

    The desk heads (``ouro.desk.heads``: one ``stat`` per task, a read only of
    the files that changed since they were cached) name the candidates; each
    candidate's file is then read in full, so what is recorded is decided by
    the task file itself.
    """
    from ouro.desk.heads import desk_heads

    found = []
    # A read that finds the heads stale (a copied bundle) saves them: the next
    # command costs a stat per task again.
    for head in desk_heads(bundle).checked_by(command):
        from ouro.desk.tasks import load_task  # a match is rare: its import only then

        try:
            task = load_task(bundle, Path(head.file))
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
    from ouro.derived.checks import declared

    if seen.command not in declared(bundle):
        return reply  # no claim or task declares it: nothing to look for
    claims = _matching_claims(bundle, seen.command)
    task_ids = _matching_tasks(bundle, seen.command)
    if not claims and not task_ids:
        return reply
    from ouro.hooks import receipts
    from ouro.hooks.witness import same_dir
    from ouro.proof.refs import repo_root

    cwd = inp.cwd or ""
    default = repo_root(bundle)
    here_claims = [c for c in claims if cwd and same_dir(cwd, c.root)]
    elsewhere = [c.id for c in claims if not (cwd and same_dir(cwd, c.root))]
    here_tasks = task_ids if cwd and same_dir(cwd, default) else []
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
    from ouro.hooks import receipts
    from ouro.hooks.witness import ASSERTED, OBSERVED, PENDING, Verdict, note, tool_id, witness
    from ouro.models.clock import format_time, utc_now
    from ouro.models.hashing import content_hash
    from ouro.proof import checkrun
    from ouro.proof.redact import bundle_literals

    call = tool_id(inp)
    path = receipts.ledger_path(bundle, host.name, inp.session_id)
    ledger, problem = receipts.load(path)
    if problem:
        reply.warnings.append(problem)
    if call is not None and call in ledger["seen"]:
        reply.warnings.append(
            f"tool call {call} already gave a receipt in this session; not recorded again"
        )
        return
    now = utc_now()
    verdict = witness(host, inp, seen.raw, seen.exit_code, env, now=now)
    if verdict.kind == PENDING and len(ledger["pending"]) >= receipts.PENDING_LIMIT:
        verdict = Verdict(
            ASSERTED,
            reason=f"{verdict.reason}; {receipts.PENDING_LIMIT} receipts of this session are "
            "already waiting for the host's transcript",
        )
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
        receipts.tool_event(bundle, host, inp, seen.command, exit_code, digest, ids + task_ids, call,
                    verdict, reply)  # fmt: skip
        confirmed = verdict.kind == OBSERVED
        why = note(host, verdict)
        written = (
            receipts.claim_receipts(bundle, host, seen.command, exit_code, digest, tail, ids, confirmed, why, reply),
            receipts.task_receipts(bundle, host, seen.command, exit_code, digest, tail, task_ids, confirmed, why, reply),
        )  # fmt: skip
    if verdict.kind == PENDING and call is not None:
        ledger["pending"].append(
            {
                "toolUseId": call,
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
    if call is not None:
        ledger["seen"].append(call)
    receipts.save(path, ledger, host=host.name, session_id=inp.session_id)


def _sources(bundle: Bundle, claims: list[ClaimMatch], task_ids: list[str]) -> dict[str, Any]:
    """The hashes of what each check is about, as of the report (for a late receipt)."""
    from ouro.desk.tasks import about_hashes, find_task
    from ouro.proof.refs import Unresolvable, hash_ref

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
