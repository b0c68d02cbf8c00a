"""The hooks hosts run on every prompt and every shell command import only what they run.

``UserPromptSubmit`` (after the session's SessionStart) and ``PostToolUse`` for a
command that is no declared check start a process each time. Neither imports
orjson or ``dataclasses`` (with ``inspect``): together ~20 ms of start-up, more
than their work (``bench/onepath.py`` times them); nor, on a prompt whose packet
basis is unchanged (the usual prompt) and on such a command, ``typing`` (~15M
instructions: ``ouro.spec`` reads ``Annotated`` hints without it, and the records
on these paths are ``ouro.tuples.NamedTuple``s). Module names are checked, never
times.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ouro.arc.claims import add_claim
from ouro.bundle import Bundle
from ouro.desk import tasks, tracks

FIXTURES = Path(__file__).parent / "fixtures" / "hooks" / "claude"
#: what neither hot hook may import
WITHOUT = {"orjson", "dataclasses", "inspect", "pydantic", "yaml", "click", "hashlib"}


def _hook(bundle: Bundle, event: str, payload: dict[str, object]) -> tuple[str, set[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ouro.cli", "hook", "claude", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=bundle.root.parent,
    )
    assert proc.returncode == 0, proc.stderr
    assert "nothing injected" not in proc.stderr, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S.*)$", line)
        if match:
            names.add(match.group(1).strip().split(".")[0])
    return proc.stdout, names


def test_user_prompt_submit_and_an_unrelated_command_import_no_heavy_module(
    bundle: Bundle,
) -> None:
    tracks.add_track(bundle, "web")
    tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    add_claim(bundle, "the suite passes", check="pytest -q")
    base = {"session_id": "s-cold", "cwd": str(bundle.root / "desk")}
    start = json.loads((FIXTURES / "SessionStart.json").read_text()) | base
    out, _ = _hook(bundle, "SessionStart", start)
    assert "# orient" in out
    prompt = json.loads((FIXTURES / "UserPromptSubmit.json").read_text()) | base
    time.sleep(0.2)  # past the racy window: the basis this prompt saves is trusted
    out, names = _hook(bundle, "UserPromptSubmit", prompt)
    assert out == ""  # nothing changed since SessionStart: silent
    assert names & WITHOUT == set()
    time.sleep(0.2)  # (the packet that prompt computed may have healed a cache)
    _hook(bundle, "UserPromptSubmit", prompt)
    out, names = _hook(bundle, "UserPromptSubmit", prompt)
    assert out == ""  # decided by the basis alone: the packet's modules are not loaded
    assert names & (WITHOUT | {"typing"}) == set()
    tool = json.loads((FIXTURES / "PostToolUse.json").read_text()) | base
    tool["tool_input"] = {"command": "ls -la", "description": "List files"}
    out, names = _hook(bundle, "PostToolUse", tool)
    assert out == ""
    assert "ouro" in names  # it ran ouro's hook
    assert names & WITHOUT == set()
    out, names = _hook(bundle, "PostToolUse", tool)  # the declared-checks list now built
    assert out == ""
    assert names & (WITHOUT | {"typing"}) == set()
