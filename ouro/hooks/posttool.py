"""``PostToolUse`` / ``PostToolUseFailure``: host-observed receipts of declared checks.

When the host reports a shell command it ran (Claude Code's ``Bash`` tool,
Codex's ``Bash``-named shell tool) and that command is exactly (after trimming
whitespace) the declared ``check`` of an open claim (not superseded) or an open
task (not done or dropped) whose repository root is the host's ``cwd``, ouro
records an ``observed-by-host`` receipt with the exit status the host reported:

- claims: evidence via ``ouro.arc.claims.observe_host_run`` (``by`` = host);
- tasks: a ``check`` history event via ``ouro.desk.tasks.append_check``;
- one compact Arc event, ``tool_completed`` (exit 0) or ``tool_failed``, naming
  the host, the exit status, the output digest and the claim / task ids.

The output itself is never kept: only its digest and a redacted tail. The
event names the host session and ``tool_use_id`` so a receipt can be traced
back to the host's transcript. Limit: ouro trusts the hook's stdin, so an
agent that can run ``ouro hook … PostToolUse`` itself with a made-up payload
can forge a host receipt; the event log and the transcript then disagree.

The exit status, as each host reports it:

- Claude Code runs ``PostToolUse`` only for a command that succeeded (exit 0;
  ``tool_response`` is ``{stdout, stderr, interrupted, …}``) and
  ``PostToolUseFailure`` for one that failed, with ``error`` text that starts
  ``Exit code N``;
- Codex sends ``tool_response`` as the command's output text; the exit status
  is read from an ``Exit code: N`` / ``Process exited with code N`` line;
- any host: an object ``tool_response`` with ``exit_code`` / ``exitCode``.

A report without a readable exit status, an interrupted command, or a command
that is not a declared check records nothing and changes no file (unknown
stays unknown); a matching command whose ``cwd`` is not the check's folder is
named on stderr and not recorded. Reads are cheap for unrelated commands:
each claim and task file is read with raw ``os`` calls and parsed only when
its bytes contain the command (or, for a command with quotes, each word); the
cost grows with the number of claim and task files (``bench/posttool.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ouro.arc import paths
from ouro.arc.refs import repo_root
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.hooks.common import HookInput, Host, Reply, describe

SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "exec_command", "local_shell"})
_EXIT_PATTERNS = (
    re.compile(r"^\s*Exit code:?\s*(-?\d+)", re.MULTILINE),
    re.compile(r"Process exited with code (-?\d+)"),
)


@dataclass(frozen=True)
class Observed:
    command: str
    exit_code: int
    output: bytes


def observation(event: str, tool: Mapping[str, Any] | None) -> Observed | None:
    """What the host reported, or None when it is not a finished shell command
    with a readable exit status."""
    if not tool or tool.get("tool_name") not in SHELL_TOOLS:
        return None
    tool_input = tool.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list):  # an argv
        command = " ".join(str(part) for part in command)
    if not isinstance(command, str) or not command.strip():
        return None
    response = tool.get("tool_response")
    if tool.get("is_interrupt") is True:
        return None
    if isinstance(response, dict) and response.get("interrupted") is True:
        return None
    output = _output(response, tool.get("error"))
    code = _exit_code(event, response, tool.get("error"))
    if code is None:
        return None
    return Observed(command.strip(), code, output)


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


def _matching_claims(bundle: Bundle, command: str) -> list[tuple[str, str]]:
    """(claim id, its repository root) of open claims whose check is ``command``."""
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
            found.append((str(data.get("id")), repo if isinstance(repo, str) else default))
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


def observe(bundle: Bundle, host: Host, inp: HookInput) -> Reply:
    reply = Reply()
    seen = observation(inp.event or "PostToolUse", inp.tool)
    if seen is None:
        return reply
    claims = _matching_claims(bundle, seen.command)
    task_ids = _matching_tasks(bundle, seen.command)
    if not claims and not task_ids:
        return reply
    cwd = inp.cwd or ""
    default = repo_root(bundle)
    here_claims = [cid for cid, root in claims if cwd and _same_dir(cwd, root)]
    elsewhere = [cid for cid, root in claims if not (cwd and _same_dir(cwd, root))]
    here_tasks = task_ids if cwd and _same_dir(cwd, default) else []
    skipped = elsewhere + [t for t in task_ids if t not in here_tasks]
    if skipped:
        reply.warnings.append(
            f"{seen.command!r} ran in {cwd or 'an unknown folder'}, not in the folder the "
            f"check of {', '.join(skipped)} runs in; not recorded"
        )
    if not here_claims and not here_tasks:
        return reply
    _record(bundle, host, inp, seen, here_claims, here_tasks, reply)
    return reply


def _record(
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    seen: Observed,
    claim_ids: list[str],
    task_ids: list[str],
    reply: Reply,
) -> None:
    from ouro.arc import checkrun
    from ouro.arc.claims import observe_host_run
    from ouro.arc.recorder import record_event
    from ouro.arc.redact import bundle_literals
    from ouro.desk.tasks import about_hashes, acting_agent, append_check, find_task
    from ouro.models.hashing import content_hash

    digest = content_hash(seen.output)
    tail = checkrun.tail_of(seen.output, bundle_literals(bundle))
    raw_id = (inp.tool or {}).get("tool_use_id")
    tool_use_id = raw_id[:200] if isinstance(raw_id, str) else None
    # The tool event first: the receipts that follow are what the packet shows
    # as the latest event, so the tool event never crowds it.
    kind = "tool_completed" if seen.exit_code == 0 else "tool_failed"
    try:
        record_event(
            bundle,
            kind,
            f"{host.title} ran the check {seen.command[:80]!r}: exit {seen.exit_code}",
            session_ref=f"{host.name}:{inp.session_id}" if inp.session_id else None,
            turn_id=inp.turn_id,
            meta={
                "host": host.name,
                "exitCode": seen.exit_code,
                "outputDigest": digest,
                "checkOf": [*claim_ids, *task_ids],
                "toolUseId": tool_use_id,
            },
        )
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"{kind} not recorded: {text}")
    for claim_id in claim_ids:
        try:
            observe_host_run(
                bundle,
                claim_id,
                command=seen.command,
                exit_code=seen.exit_code,
                host=host.name,
                digest=digest,
                tail=tail,
            )
        except OuroError as exc:
            reply.warnings.append(f"receipt for {claim_id} not recorded: {describe(exc)}")
    for task_id in task_ids:
        try:
            task = find_task(bundle, task_id)
            append_check(
                bundle,
                task_id,
                command=seen.command,
                fields={
                    "exitCode": seen.exit_code,
                    "provenance": "observed-by-host",
                    "by": host.name,
                    "outputDigest": digest,
                    "tail": tail,
                },
                sources=about_hashes(bundle, list(task.meta.get("about") or [])),
                agent=acting_agent(bundle, None),
            )
        except OuroError as exc:
            reply.warnings.append(f"receipt for {task_id} not recorded: {describe(exc)}")
