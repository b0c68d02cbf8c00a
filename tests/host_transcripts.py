"""Host session transcripts in the real hosts' own JSONL formats, for hook tests.

The line templates in ``tests/fixtures/transcripts/`` are lines the real hosts
wrote (Claude Code 2.1.328: ``claude.jsonl``; Codex 0.169.0: ``codex.jsonl``)
while they ran ``true``, ``false`` and ``test -f nope`` through their shell tool against the
fake model server (``tests/fake_models.py``), with the scratch paths rewritten
to ``/home/dev``. ``HostSession`` writes copies of those lines into the file
the host would keep under a scratch ``HOME``, changing only the tool call id,
the command, the exit status, the time and the session; ``payload`` is the
hook stdin the host sends for that call (``tests/fixtures/hooks/``, also
captured from the real hosts).
"""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ouro.models.clock import format_time

HERE = Path(__file__).parent
TEMPLATES = HERE / "fixtures" / "transcripts"
HOOKS = HERE / "fixtures" / "hooks"
SESSIONS = {
    "claude": "511ccb37-1d85-401f-8ed8-e836d18e12f4",
    "codex": "01a23359-a0b3-7b02-a653-9eb1fc443ee7",
}


def _template(host: str) -> list[dict[str, Any]]:
    lines = (TEMPLATES / f"{host}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line]


def _now(at: datetime | None) -> str:
    return format_time(at or datetime.now(UTC))


class HostSession:
    """One host session's transcript file, where the host itself keeps it."""

    def __init__(self, host: str, home: Path, cwd: Path, session_id: str | None = None) -> None:
        self.host = host
        self.home = home
        self.cwd = cwd
        self.session_id = session_id or SESSIONS[host]
        if host == "claude":
            slug = re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
            self.path = home / ".claude" / "projects" / slug / f"{self.session_id}.jsonl"
        else:
            day = home / ".codex" / "sessions" / "2026" / "12" / "01"
            self.path = day / f"rollout-2026-12-01T20-44-01-{self.session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = _template(host)
        self._lines = lines
        self.write(lines[0])  # a line that is not about the call (the prompt, tools)

    @property
    def env(self) -> dict[str, str]:
        """The part of the hook's environment that names the host's folder."""
        return {"HOME": str(self.home)}

    def write(self, obj: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")

    # -- the call and its result, as the host writes them --------------------------

    def call(self, command: str, tool_id: str, *, at: datetime | None = None) -> None:
        if self.host == "claude":
            line = copy.deepcopy(self._lines[1])
            line["message"]["content"][0].update(id=tool_id, input={"command": command, "description": "Run the check"})  # fmt: skip
            line.update(sessionId=self.session_id, cwd=str(self.cwd), timestamp=_now(at))
        else:
            line = copy.deepcopy(self._lines[1])
            line["payload"].update(call_id=tool_id, arguments=json.dumps({"cmd": command}))
            line["timestamp"] = _now(at)
        self.write(line)

    def result(
        self, tool_id: str, exit_code: int, *, output: str = "", at: datetime | None = None,
        cwd: Path | None = None, interpreted: bool = False,
    ) -> None:  # fmt: skip
        """The host's record of the call's outcome; ``interpreted``: Claude's record
        of a non-zero exit it does not count as an error ("Condition is false")."""
        stamp = _now(at)
        if self.host == "claude":
            ok = exit_code == 0 or interpreted
            line = copy.deepcopy(self._lines[5] if interpreted else self._lines[2 if ok else 4])
            block = line["message"]["content"][0]
            block["tool_use_id"] = tool_id
            if interpreted:
                pass
            elif ok:
                block["content"] = output or "(Bash completed with no output)"
                line["toolUseResult"].update(stdout=output)
            else:
                block["content"] = f"Exit code {exit_code}" + (f"\n{output}" if output else "")
                line["toolUseResult"] = f"Error: {block['content']}"
            line.update(sessionId=self.session_id, cwd=str(self.cwd), timestamp=stamp)
            self.write(line)
            return
        done = copy.deepcopy(self._lines[2] if exit_code == 0 else self._lines[5])
        item = done["payload"]["item"]
        item.update(id=tool_id, exit_code=exit_code, aggregated_output=output)
        item["cwd"] = f"file://{cwd or self.cwd}"
        done["payload"]["thread_id"] = self.session_id
        done["timestamp"] = stamp
        out = copy.deepcopy(self._lines[3])
        out["payload"].update(
            call_id=tool_id,
            output=f"Chunk ID: 6f9b3e\nWall time: 0.0000 seconds\nProcess exited with code "
            f"{exit_code}\nOriginal token count: 0\nOutput:\n{output}",
        )
        out["timestamp"] = stamp
        self.write(done)
        self.write(out)

    def ran(self, command: str, tool_id: str, exit_code: int, *, output: str = "") -> None:
        self.call(command, tool_id)
        self.result(tool_id, exit_code, output=output)

    # -- the hook stdin the host sends for it ---------------------------------------

    def payload(
        self, command: str, tool_id: str, exit_code: int = 0, *, output: str = "3 passed\n",
        interpreted: bool = False,
    ) -> tuple[str, dict[str, Any]]:  # fmt: skip
        """(the event, the stdin object) the host sends after running ``command``."""
        if self.host == "claude":
            event = "PostToolUse" if exit_code == 0 or interpreted else "PostToolUseFailure"
            data = json.loads((HOOKS / "claude" / f"{event}.json").read_text())
            if interpreted:  # as Claude sent it for 'test -f missing' (exit 1)
                data["tool_response"].update(
                    stdout="", returnCodeInterpretation="Condition is false"
                )
            elif exit_code == 0:
                data["tool_response"]["stdout"] = output
            else:
                data["error"] = f"Exit code {exit_code}\n{output}"
        else:
            event = "PostToolUse"
            data = json.loads((HOOKS / "codex" / "PostToolUse.json").read_text())
            data["tool_response"] = output
        data.update(
            session_id=self.session_id,
            transcript_path=str(self.path),
            cwd=str(self.cwd),
            tool_use_id=tool_id,
        )
        data["tool_input"]["command"] = command
        return event, data
