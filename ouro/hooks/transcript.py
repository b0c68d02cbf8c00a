"""The host's own transcript: where ouro finds it and what it says about a tool call.

A ``PostToolUse`` payload is what something piped into ``ouro hook``; anyone
can pipe anything. The session transcript is what the host itself wrote while
it ran the tool. ``lookup`` reads it to confirm one call: its id, the exact
command and its outcome, as the host recorded them.

Which file ouro reads. The payload names it (``transcript_path``), but ouro
reads it only when it is the host's own session file for the payload's
``session_id``, in the host's own folder, as the hook's environment (inherited
from the host) names it:

- Claude Code: ``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``) ``/projects/
  <project folder>/<session_id>.jsonl``;
- Codex: ``$CODEX_HOME`` (default ``~/.codex``) ``/sessions/YYYY/MM/DD/
  rollout-<YYYY-MM-DDTHH-MM-SS>-<session_id>.jsonl``;
- Pi: ``$PI_CODING_AGENT_DIR`` (default ``~/.pi/agent``) ``/sessions/--<cwd
  with / as ->--/<ISO time>_<session_id>.jsonl`` (``getDefaultSessionDir`` in
  Pi's ``dist/core/session-manager.js``; a ``sessionDir`` setting moves it, and
  then ouro trusts no file: receipts stay ``asserted``);
- OpenCode: no transcript file; its SQLite database ``$XDG_DATA_HOME``
  (default ``~/.local/share``) ``/opencode/opencode.db``, opened read-only;
  the payload's ``transcript_path`` is set to it by ``ouro.hooks.opencode``
  from the hook's environment, never taken from the plugin's JSON.

The path must be exactly that shape, absolute and normalised, with no symbolic
link anywhere below the host's folder (its real path must be the same
path); the file is opened without following a link, must be a regular file,
and only its last ``TAIL_LIMIT`` bytes are read. A path anywhere else (a file
an attacker wrote in ``/tmp``, another session's transcript, a FIFO) is never
opened.

What each host writes (learned from real runs of Claude Code 2.1.328 and
Codex 0.169.0; see ``tests/fixtures/transcripts/``), one JSON object a line:

- Claude Code: an ``assistant`` line whose ``message.content`` holds
  ``{"type": "tool_use", "id": <tool_use_id>, "name": "Bash", "input":
  {"command": …}}``, then a ``user`` line whose ``message.content`` holds
  ``{"type": "tool_result", "tool_use_id": …, "is_error": …, "content": …}``
  (``content`` starts ``Exit code N`` for a failed command) and whose
  ``toolUseResult`` says whether it was ``interrupted``. A non-zero exit that
  Claude does not count as an error (``test`` false, ``grep`` without a match)
  comes as a success with ``returnCodeInterpretation`` ("Condition is false")
  and no exit status: ouro reads it as no exit status, never as 0. Claude writes these
  lines *after* the hook runs, in batches: at ``PostToolUse`` the result is
  usually not there yet, and it appears by a later hook event.
- Codex: a ``response_item`` line ``{"type": "function_call", "name":
  "exec_command", "arguments": "{\\"cmd\\": …}", "call_id": <tool_use_id>}``,
  then an ``event_msg`` line ``{"type": "item_completed", "item": {"type":
  "CommandExecution", "id": <tool_use_id>, "status": "completed"|"failed",
  "exit_code": N, "cwd": "file:///…"}}`` (written before the hook runs) and a
  ``function_call_output`` line (``Process exited with code N``). Codex's own
  payload carries only the output text, so the exit status comes from here.

- Pi: a ``message`` line whose ``message`` is ``{"role": "assistant",
  "content": [{"type": "toolCall", "id": <toolCallId>, "name": "bash",
  "arguments": {"command": …}}]}``, then a ``message`` line ``{"role":
  "toolResult", "toolCallId": …, "toolName": "bash", "isError": …, "content":
  [{"type": "text", …}]}`` (an error's text ends ``Command exited with code
  N``; an abort or a timeout says so instead and has no exit status). Pi
  appends both when each message ends, after ``tool_result`` ran the hook: the
  result appears by a later event.
- OpenCode 1.18.33: a ``part`` row (``session_id``, ``data``) whose JSON is
  ``{"type": "tool", "tool": "bash", "callID": <tool_use_id>, "state":
  {"status": "completed", "input": {"command": …, "workdir"?: …},
  "metadata": {"exit": N}, "time": {"end": <ms>}}}``, completed *after*
  ``tool.execute.after`` (so a receipt is pending at first); the folder is the
  ``session`` row's ``directory`` (or the call's ``workdir``).

A call through another tool (Codex ``shell``, a Claude background command) is
not something ouro can confirm: it reads as not found.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ouro.store import jsonio

#: the most ouro reads of a transcript, from its end (the call is recent)
TAIL_LIMIT = 8 << 20
_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_TOOL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")
_PI_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d-]+Z_(?P<sid>.+)\.jsonl$")
_CODEX_FILE = re.compile(r"^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(?P<sid>.+)\.jsonl$")
_CLAUDE_EXIT = re.compile(r"^\s*Exit code (-?\d+)")
_CODEX_EXIT = re.compile(r"^Process exited with code (-?\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class HostRun:
    """One tool call as the host's transcript records it."""

    command: str
    exit_code: int | None  # None: the host records no exit status for it
    at: str | None  # when the host recorded the result (ISO time)
    cwd: str | None = None  # the folder it ran in, when the host records one
    interrupted: bool = False


@dataclass(frozen=True)
class Lookup:
    """``run`` when the transcript has the call and its result; else why not."""

    run: HostRun | None
    reason: str = ""
    #: the transcript may still catch up (the host writes after the hook)
    retry: bool = False


def valid_tool_id(value: Any) -> bool:
    return isinstance(value, str) and bool(_TOOL_ID.match(value))


def host_folder(host: str, env: Mapping[str, str]) -> str:
    """The folder under which the host keeps its session transcripts."""
    home = env.get("HOME") or os.path.expanduser("~")
    if host == "claude":
        return os.path.join(
            env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "projects"
        )
    if host == "pi":
        agent = env.get("PI_CODING_AGENT_DIR") or os.path.join(home, ".pi", "agent")
        return os.path.join(os.path.expanduser(agent), "sessions")
    if host == "opencode":
        from ouro.hooks.opencode import data_folder

        return data_folder(env)
    return os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "sessions")


def trusted_path(
    host: str, path: Any, session_id: str | None, env: Mapping[str, str]
) -> tuple[str | None, str]:
    """(the transcript path, "") when ``path`` is the host's own file for this
    session, else (None, why not). Nothing is opened."""
    if not isinstance(path, str) or not path:
        return None, "the payload names no transcript_path"
    if not session_id or not _SESSION.match(session_id):
        return None, "the payload's session_id is not a plain session id"
    root = host_folder(host, env)
    if not os.path.isabs(root):
        return None, f"the host's folder {root!r:.120} is not an absolute path"
    if not os.path.isabs(path) or os.path.normpath(path) != path or "\x00" in path:
        return None, f"transcript_path {path!r:.120} is not a plain absolute path"
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if host == "opencode":
        from ouro.hooks.opencode import OPENCODE_DB

        shaped = parts == [OPENCODE_DB]
    elif host == "claude":
        shaped = (
            len(parts) == 2
            and parts[0] not in ("", ".", "..")
            and parts[1] == f"{session_id}.jsonl"
        )
    elif host == "pi":
        match = _PI_FILE.match(parts[-1])
        shaped = (
            len(parts) == 2
            and parts[0].startswith("--")
            and parts[0].endswith("--")
            and match is not None
            and match.group("sid") == session_id
        )
    else:
        match = _CODEX_FILE.match(parts[-1])
        shaped = (
            len(parts) == 4
            and all(p.isdigit() for p in parts[:3])
            and match is not None
            and match.group("sid") == session_id
        )
    if not shaped:
        return None, (
            f"transcript_path {path!r:.160} is not {host}'s own transcript of session "
            f"{session_id} under {root}"
        )
    try:
        real = os.path.realpath(path, strict=True)
        real_root = os.path.realpath(root, strict=True)
    except OSError:
        return path, ""  # the host may not have created it yet: lookup says so
    if real != os.path.join(real_root, rel):
        return None, f"transcript_path {path!r:.160} goes through a symbolic link"
    return path, ""


def read_tail(path: str, limit: int | None = None) -> bytes | None:
    """The last ``limit`` (default ``TAIL_LIMIT``) bytes of a regular file, from
    a line start; None when it cannot be opened as one (missing, a link, a FIFO
    or a device)."""
    limit = TAIL_LIMIT if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        start = max(0, info.st_size - limit)
        data = os.pread(fd, info.st_size - start, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    if start > 0:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut != -1 else b""
    return data


def lookup(host: str, path: str, session_id: str, tool_use_id: str) -> Lookup:
    """What the transcript at ``path`` (already ``trusted_path``) says about the call."""
    if host == "opencode":
        return _opencode(path, session_id, tool_use_id)
    data = read_tail(path)
    if data is None:
        return Lookup(None, f"the host's transcript {path} cannot be read (yet)", retry=True)
    lines = _lines_with(data, tool_use_id.encode("ascii"))
    if host == "claude":
        return _claude(lines, session_id, tool_use_id)
    if host == "pi":
        return _pi(lines, tool_use_id)
    return _codex(lines, session_id, tool_use_id)


def _lines_with(data: bytes, needle: bytes) -> list[dict[str, Any]]:
    """The parsed lines that contain ``needle`` (only those are parsed)."""
    out: list[dict[str, Any]] = []
    at = data.find(needle)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        try:
            obj = jsonio.loads(data[start:end])
        except jsonio.JSONDecodeError:
            obj = None  # a line still being written, or damaged: not evidence
        if isinstance(obj, dict):
            out.append(obj)
        at = data.find(needle, end)
    return out


def _blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _claude(lines: list[dict[str, Any]], session_id: str, tool_id: str) -> Lookup:
    command: str | None = None
    result: tuple[dict[str, Any], dict[str, Any]] | None = None
    for obj in lines:
        if obj.get("sessionId") not in (None, session_id):
            continue
        kind = obj.get("type")
        for block in _blocks(obj):
            if kind == "assistant" and block.get("type") == "tool_use":
                if block.get("id") != tool_id or block.get("name") != "Bash":
                    continue
                args = block.get("input")
                if not isinstance(args, dict):
                    args = {}
                if args.get("run_in_background"):
                    return Lookup(None, "the host ran it in the background (no exit status)")
                value = args.get("command")
                command = value if isinstance(value, str) else None
            elif (kind, block.get("type"), block.get("tool_use_id")) == (
                "user",
                "tool_result",
                tool_id,
            ):
                result = (obj, block)
    if command is None:
        return Lookup(None, f"the host's transcript shows no Bash call {tool_id} (yet)", retry=True)
    if result is None:
        return Lookup(None, f"the host's transcript shows no result of {tool_id} yet", retry=True)
    obj, block = result
    at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    detail = obj.get("toolUseResult")
    interrupted = isinstance(detail, dict) and detail.get("interrupted") is True
    if isinstance(detail, dict) and detail.get("returnCodeInterpretation"):
        code = None  # a non-zero exit Claude does not count as an error ("Condition is false")
    elif block.get("is_error") is True:
        match = _CLAUDE_EXIT.match(_text(block.get("content")))
        code = int(match.group(1)) if match else None
    elif block.get("is_error") in (False, None):
        code = 0
    else:
        code = None
    return Lookup(HostRun(command, code, at, None, interrupted))


def _pi(lines: list[dict[str, Any]], tool_id: str) -> Lookup:
    from ouro.hooks.pi import exit_code

    command: str | None = None
    result: tuple[dict[str, Any], dict[str, Any]] | None = None
    for obj in lines:
        message = obj.get("message")
        if obj.get("type") != "message" or not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            for block in _blocks(obj):
                if block.get("type") == "toolCall" and block.get("id") == tool_id:
                    args = block.get("arguments")
                    value = args.get("command") if isinstance(args, dict) else None
                    if block.get("name") == "bash" and isinstance(value, str):
                        command = value
        elif (role, message.get("toolCallId"), message.get("toolName")) == (
            "toolResult",
            tool_id,
            "bash",
        ):
            result = (obj, message)
    if command is None:
        return Lookup(None, f"the host's transcript shows no bash call {tool_id} (yet)", retry=True)
    if result is None:
        return Lookup(None, f"the host's transcript shows no result of {tool_id} yet", retry=True)
    obj, message = result
    at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    code = exit_code(message.get("isError"), _text(message.get("content")))
    return Lookup(HostRun(command, code, at, None, interrupted=code is None))


def _codex(lines: list[dict[str, Any]], session_id: str, tool_id: str) -> Lookup:
    command: str | None = None
    code: int | None = None
    status_code: int | None = None
    at: str | None = None
    cwd: str | None = None
    for obj in lines:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if obj.get("type") == "response_item" and payload.get("call_id") == tool_id:
            if kind == "function_call" and payload.get("name") == "exec_command":
                try:
                    args = jsonio.loads(payload.get("arguments") or "")
                except (jsonio.JSONDecodeError, TypeError):
                    args = None
                value = args.get("cmd") if isinstance(args, dict) else None
                command = value if isinstance(value, str) else None
            elif kind == "function_call_output" and isinstance(payload.get("output"), str):
                match = _CODEX_EXIT.search(payload["output"])
                if match and code is None:
                    code, at = int(match.group(1)), at or stamp
        elif obj.get("type") == "event_msg" and kind == "item_completed":
            if payload.get("thread_id") not in (None, session_id):
                continue
            item = payload.get("item")
            if not isinstance(item, dict) or item.get("type") != "CommandExecution":
                continue
            if item.get("id") != tool_id or item.get("status") not in ("completed", "failed"):
                continue
            value = item.get("exit_code")
            if isinstance(value, int) and not isinstance(value, bool):
                status_code, at = value, stamp
            cwd = _file_url(item.get("cwd"))
    if command is None:
        return Lookup(
            None, f"the host's transcript shows no exec_command call {tool_id} (yet)", retry=True
        )
    exit_code = status_code if status_code is not None else code
    if exit_code is None:
        return Lookup(
            None, f"the host's transcript shows no exit status of {tool_id} yet", retry=True
        )
    return Lookup(HostRun(command, exit_code, at, cwd))


def _opencode(path: str, session_id: str, tool_id: str) -> Lookup:
    """The ``bash`` tool part of call ``tool_id`` in OpenCode's database (read only)."""
    import sqlite3  # only for an OpenCode run that matched a check
    from datetime import UTC, datetime
    from urllib.parse import quote

    from ouro.models.clock import format_time

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return Lookup(None, f"the host's database {path} is not a regular file")
    except OSError:
        return Lookup(None, f"the host's database {path} cannot be read (yet)", retry=True)
    try:
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=2)
        try:
            row = db.execute(
                "SELECT data FROM part WHERE session_id = ? AND json_extract(data, '$.callID') = ?"
                " ORDER BY id DESC LIMIT 1",
                (session_id, tool_id),
            ).fetchone()
            where = db.execute(
                "SELECT directory FROM session WHERE id = ?", (session_id,)
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        return Lookup(None, f"the host's database {path} cannot be read ({exc})", retry=True)
    if row is None or not isinstance(row[0], str):
        return Lookup(None, f"the host's database shows no bash call {tool_id} (yet)", retry=True)
    try:
        part = jsonio.loads(row[0])
    except jsonio.JSONDecodeError:
        return Lookup(None, f"the host's database holds a damaged record of {tool_id}")
    if not isinstance(part, dict) or (part.get("type"), part.get("tool")) != ("tool", "bash"):
        return Lookup(None, f"the host's database shows no bash call {tool_id}")
    state = _dict(part.get("state"))
    status = state.get("status")
    if status not in ("completed", "error"):
        return Lookup(None, f"the host's database shows no result of {tool_id} yet", retry=True)
    args = _dict(state.get("input"))
    command = args.get("command")
    if not isinstance(command, str):
        return Lookup(None, f"the host's database shows no command for {tool_id}")
    meta = _dict(state.get("metadata"))
    code = meta.get("exit")
    exit_code = code if status == "completed" and type(code) is int else None
    times = _dict(state.get("time"))
    end = times.get("end")
    at = None
    if isinstance(end, int | float) and not isinstance(end, bool):
        at = format_time(datetime.fromtimestamp(end / 1000, UTC))
    folder = where[0] if where and isinstance(where[0], str) else None
    workdir = args.get("workdir")
    if isinstance(workdir, str) and workdir:
        folder = workdir if os.path.isabs(workdir) else os.path.join(folder or "", workdir)
    return Lookup(HostRun(command, exit_code, at, folder, meta.get("interrupted") is True))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _file_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    if value.startswith("file://"):
        from urllib.parse import unquote, urlparse  # only for a Codex run that matched a check

        return unquote(urlparse(value).path) or None
    return value if os.path.isabs(value) else None
