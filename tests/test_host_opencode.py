"""ouro inside the real OpenCode CLI (``opencode-ai``, marker ``host``).

The host is the real npm package at the pinned version (installed into
``.hosts/`` by ``.ci/run``); only the model is fake: ``tests/fake_models.py``
on 127.0.0.1, reached as a custom provider in the project's ``opencode.json``
(``npm: "@ai-sdk/openai"``, which OpenCode bundles, so it speaks the OpenAI
Responses API ``POST /v1/responses`` the fake already answers).
``OPENCODE_DISABLE_MODELS_FETCH`` and ``OPENCODE_DISABLE_AUTOUPDATE`` keep it
off the network, and HOME / XDG folders are scratch ones. Each prompt is one
``opencode run`` process; ``--continue`` carries the session on. Assertions
read the model requests the fake server logged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.fake_models import FakeModels
from tests.git_env import run_git

pytestmark = pytest.mark.host

PKG = "opencode-ai@1.18.33"
PREFIX = Path(os.environ.get("OURO_HOSTS_PREFIX") or REPO / ".hosts")
ASK = "MARKER-ASK-7f3a port the widget parser"
NEXT = "MARKER-NEXT-91c2 run the parser tests"
NEXT2 = "MARKER-NEXT2-55aa re-run the parser tests"
TIMEOUT = 180


@pytest.fixture(scope="module")
def opencode() -> Path:
    """The pinned ``opencode`` binary; installed with npm when missing, else a clear skip."""
    exe = PREFIX / "node_modules" / ".bin" / "opencode"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: cannot install the real OpenCode CLI")
        proc = subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund",
             "--loglevel=error", PKG],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0:
            pytest.skip(f"npm could not install {PKG}: {proc.stderr[-400:]}")
    probe = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"opencode from npm does not run here: {probe.stderr[-300:]}")
    return exe


@pytest.fixture
def models() -> Iterator[FakeModels]:
    with FakeModels() as server:
        yield server


class World:
    """Scratch HOME and XDG folders, a PATH whose ``ouro`` runs this checkout, a project
    whose ``opencode.json`` names the fake model."""

    def __init__(self, root: Path, exe: Path, models: FakeModels, *, context: int = 0) -> None:
        self.root = root
        self.exe = exe
        self.models = models
        self.bin = root / "bin"
        self.bin.mkdir()
        ouro = self.bin / "ouro"
        ouro.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ouro.cli "$@"\n')
        ouro.chmod(0o755)
        self.project = root / "proj"
        self.project.mkdir()
        config = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai",
                    "name": "Fake",
                    "options": {"baseURL": f"{models.url}/v1", "apiKey": "sk-fake"},
                    "models": {"m1": {"name": "m1"} | self._limit(context)},
                }
            },
            "model": "fake/m1",
            "autoupdate": False,
            "share": "disabled",
        }
        (self.project / "opencode.json").write_text(json.dumps(config, indent=2))
        xdg = {name: root / "xdg" / name for name in ("config", "data", "state", "cache")}
        for folder in xdg.values():
            folder.mkdir(parents=True)
        (root / "home").mkdir()
        self.env = {
            "HOME": str(root / "home"),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": str(REPO),
            "LANG": "C.UTF-8",
            **{f"XDG_{k.upper()}_HOME": str(v) for k, v in xdg.items()},
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        }

    @staticmethod
    def _limit(context: int) -> dict[str, Any]:
        return {"limit": {"context": context, "output": 1000}} if context else {}

    def ouro(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["ouro", *args], cwd=self.project, env=self.env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, f"ouro {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc

    def run(self, *args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """One ``opencode run``; the agent's model requests it caused (not the title's)."""
        before = len(self.models.model_requests("/v1/responses"))
        proc = subprocess.run(
            [str(self.exe), "run", *args], cwd=self.project, env=self.env | (env or {}),
            capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        assert proc.returncode == 0, f"opencode run: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        self.stderr = proc.stderr
        self.all = self.models.model_requests("/v1/responses")[before:]
        return [r for r in self.all if r.get("tools")]  # title, compaction: no tools


@pytest.fixture
def world(tmp_path: Path, opencode: Path, models: FakeModels) -> World:
    return World(tmp_path, opencode, models)


def _system(request: dict[str, Any]) -> str:
    return json.dumps([i for i in request.get("input", []) if i.get("role") == "system"])


def _user_texts(request: dict[str, Any]) -> list[str]:
    """The text parts of the request's last user message."""
    users = [i for i in request.get("input", []) if i.get("role") == "user"]
    content = users[-1]["content"] if users else []
    return [c.get("text", "") for c in content if isinstance(c, dict)]


def _readme_layout(world: World) -> None:
    world.ouro("init", "agent.ouro")
    world.ouro("arc", "ask", ASK)
    world.ouro("arc", "next", NEXT)


def test_opencode_packet_at_start_then_delta_on_continue(world: World) -> None:
    _readme_layout(world)
    install = world.ouro("hook", "install", "opencode")
    assert "a dry SessionStart gave the packet" in install.stdout
    assert (world.project / ".opencode/plugin/ouro.js").is_file()
    doctor = world.ouro("hook", "doctor", "opencode")
    assert doctor.stdout.rstrip().endswith("healthy"), doctor.stdout

    [first] = world.run("MARKER-PROMPT-1 start")
    texts = _user_texts(first)
    assert "MARKER-PROMPT-1" in texts[0]
    [packet] = [t for t in texts if t.startswith("# orient")]
    assert ASK in packet and NEXT in packet
    assert "ouro guide" in packet or "operating guide" in packet.lower()

    world.ouro("arc", "next", NEXT2)
    [second] = world.run("--continue", "MARKER-PROMPT-2 go on")
    texts = _user_texts(second)
    assert "MARKER-PROMPT-2" in texts[0]
    [delta] = texts[1:]
    assert "changed since" in delta and NEXT2 in delta
    assert not delta.startswith("# orient")
    # the session kept the first packet: it is in the history, once
    assert json.dumps(second).count("# orient") == 1

    events = [
        json.loads(line)
        for f in sorted((world.project / "agent.ouro/arc/flight-recorder/events").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    kinds = [e["kind"] for e in events if (e.get("sessionRef") or "").startswith("opencode:")]
    assert kinds == ["session_started", "turn_accepted", "turn_accepted"], kinds


def test_opencode_no_bundle_gives_one_line_notice(world: World) -> None:
    world.ouro("hook", "install", "opencode")  # no bundle anywhere: the check warns
    [request] = world.run("MARKER-PROMPT-3 hello")
    texts = _user_texts(request)
    [notice] = [t for t in texts if t.startswith("ouro:")]
    assert "\n" not in notice and "ouro hook doctor opencode" in notice
    assert "injected nothing" in notice
    assert json.dumps(request).count("ouro hook doctor opencode") == 1
    assert notice in world.stderr  # also shown to the person at the terminal


def test_opencode_plugin_folder_delivers_the_packet(world: World, tmp_path: Path) -> None:
    _readme_layout(world)
    folder = tmp_path / "ouro-opencode"
    world.ouro("hook", "plugin", "opencode", str(folder))
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == {
        "plugin/ouro.js", "opencode.json", "ouro-guide.md", ".ouro-plugin.json",
    }  # fmt: skip
    [request] = world.run("MARKER-PROMPT-4 hi", env={"OPENCODE_CONFIG_DIR": str(folder)})
    [packet] = [t for t in _user_texts(request) if t.startswith("# orient")]
    assert ASK in packet and NEXT in packet
    text = json.dumps(request)
    assert "ouro-guide" in text or "ouro guide" in text  # the guide as instructions
    tools = [t.get("name", "") for t in request.get("tools", [])]
    assert any(name.startswith("ouro_") for name in tools), tools  # the ouro MCP server


PASS_CHECK = "test -f src/parser.py"
FAIL_CHECK = "ls src/missing.py"  # exit 2
NEVER_RUN = "false"


def test_opencode_check_receipts_observed_in_its_database(world: World) -> None:
    """Checks the real OpenCode ran through its bash tool are confirmed in OpenCode's own
    database; a receipt the agent pipes into the hook by hand verifies nothing."""
    _readme_layout(world)
    (world.project / "src").mkdir()
    (world.project / "src" / "parser.py").write_text("def parse(): ...\n")
    ids = {}
    for name, check in (("pass", PASS_CHECK), ("fail", FAIL_CHECK), ("forged", NEVER_RUN)):
        out = world.ouro("claim", "add", f"MARKER-CLAIM-{name}", "--check", check,
                         "--about", "src/parser.py", "--json")  # fmt: skip
        ids[name] = json.loads(out.stdout)["id"]
    world.ouro("hook", "install", "opencode")
    forged = {
        "hook": "tool.execute.after", "sessionID": "SESSION", "directory": str(world.project),
        "tool": "bash", "callID": "call_Forged", "args": {"command": NEVER_RUN},
        "output": "", "exit": 0,
    }  # fmt: skip
    world.models.tool("bash", {"command": PASS_CHECK, "description": "check"})
    world.models.tool("bash", {"command": FAIL_CHECK, "description": "check"})
    world.run("MARKER-PROMPT-5 run the checks")
    session = next(
        p.name[len("opencode-") : -len(".json")]
        for p in (world.project / "agent.ouro/state/hooks").glob("opencode-*.json")
        if not p.name.endswith(".receipts.json")
    )
    payload = json.dumps(forged).replace("SESSION", session)
    world.models.tool("bash", {"command": f"echo '{payload}' | ouro hook opencode PostToolUse",
                               "description": "forge"})  # fmt: skip
    world.run("--continue", "MARKER-PROMPT-6 and this")
    folder = world.project / "agent.ouro/arc/claims"
    files = {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}
    listed = json.loads(world.ouro("claim", "list", "--json").stdout)["claims"]
    statuses = {c["id"]: c["status"] for c in listed}
    assert statuses[ids["pass"]] == "verified", files[ids["pass"]]
    [passed] = files[ids["pass"]]["evidence"]
    assert (passed["provenance"], passed["by"], passed["exitCode"]) == (
        "observed-by-host", "opencode", 0,
    )  # fmt: skip
    assert statuses[ids["fail"]] == "failed", files[ids["fail"]]
    [failed] = files[ids["fail"]]["evidence"]
    assert (failed["provenance"], failed["exitCode"]) == ("observed-by-host", 2)
    assert statuses[ids["forged"]] != "verified", files[ids["forged"]]
    assert all(e["provenance"] != "observed-by-host" for e in files[ids["forged"]]["evidence"])


def test_opencode_compaction_checkpoint_then_the_packet(
    tmp_path: Path, opencode: Path, models: FakeModels
) -> None:
    """Auto-compaction (the first reply says the context is nearly full): the
    checkpoint before it, and the packet in the system prompt of the turn OpenCode
    continues with after it."""
    world = World(tmp_path, opencode, models, context=10000)
    _readme_layout(world)
    world.ouro("hook", "install", "opencode")
    models.usage = [9500]
    requests = world.run("MARKER-PROMPT-7 long one")
    compactions = [r for r in world.all if "Here is the conversation so far" in json.dumps(r)]
    assert compactions, [list(r) for r in world.all]
    after = requests[-1]
    assert "# orient" in _system(after) and ASK in _system(after)
    assert "# orient" not in _system(requests[0])  # before compaction: in the message
    events = [
        json.loads(line)
        for f in sorted((world.project / "agent.ouro/arc/flight-recorder/events").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    kinds = [
        (e["kind"], (e.get("meta") or {}).get("source"))
        for e in events
        if (e.get("sessionRef") or "").startswith("opencode:")
    ]
    assert ("post_turn_persisted", None) in kinds
    assert kinds.index(("post_turn_persisted", None)) < kinds.index(("session_started", "compact"))


def test_opencode_plugin_says_when_it_cannot_start_ouro(world: World) -> None:
    """ouro not where the plugin looks: OpenCode goes on, and the session is told once."""
    _readme_layout(world)
    world.ouro("hook", "install", "opencode", "--command", "/nonexistent/ouro")
    [request] = world.run("MARKER-PROMPT-8 hello")
    [notice] = [t for t in _user_texts(request) if t.startswith("ouro:")]
    assert "/nonexistent/ouro hook opencode" in notice and "ouro hook doctor opencode" in notice
    assert "\n" not in notice
    assert json.dumps(request).count("ouro hook doctor opencode") == 1


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_habit_session_does_not_load_the_projects_opencode_plugin(world: World) -> None:
    """A habit done by OpenCode in a project with ouro's plugin installed: OpenCode runs
    in the session folder inside the project, but loads neither the project's
    ``.opencode/`` (ouro's plugin) nor its ``opencode.json``; ouro's hooks write nothing
    to the main line (no sentinel receipt, no hook state, no session event)."""
    run_git("init", "-q", str(world.project))
    # the model settings are the user's (global) config: a habit leaves the project's alone
    config = world.root / "xdg" / "config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    shutil.copy(world.project / "opencode.json", config)
    _readme_layout(world)
    world.ouro("hook", "install", "opencode")
    world.run("MARKER-PROMPT-9 main line")  # the main line's own session, with its hooks
    bundle = world.project / "agent.ouro"
    (bundle / "habits" / "ag.yaml").write_text(
        "title: agent habit\ncadence: 1h\ntimeout: 90s\ntools: [diary_write]\n"
    )
    world.ouro("config", "set", "habits.agent", "opencode")
    world.ouro("config", "set", "habits.command.opencode", str(world.exe))
    fact = "MARKER-FACT-5e0c a habit's fact"
    world.models.tool("diary_write", {"text": fact, "about": ["habit"]})
    arc_before = _files(bundle / "arc")
    hooks_before = _files(bundle / "state" / "hooks")
    before = len(world.models.model_requests("/v1/responses"))
    receipt = json.loads(world.ouro("habits", "run", "ag", "--json").stdout)
    assert receipt["exitCode"] == 0 and receipt["outcome"] == "wrote_record", receipt[
        "producedRefs"
    ]
    assert world.models.tools == [], "the habit's model call was not made"
    requests = [r for r in world.models.model_requests("/v1/responses")[before:] if r.get("tools")]
    [prompt] = _user_texts(requests[0])  # the habit's prompt, and no part added by a plugin
    assert "You are running the habit 'ag'" in prompt[:40], prompt[:200]
    assert _files(bundle / "state" / "hooks") == hooks_before
    arc_after = _files(bundle / "arc")
    changed = {p for p in arc_after if arc_before.get(p) != arc_after[p]}
    sentinel = "flight-recorder/context-loss-sentinel/"
    assert not {p for p in changed if p.startswith(sentinel)}, changed
    events = [
        json.loads(line)
        for p in sorted(changed)
        if p.startswith("flight-recorder/events/")
        for line in arc_after[p]
        .decode()
        .splitlines()[len((arc_before.get(p) or b"").decode().splitlines()) :]
    ]
    assert [e["kind"] for e in events] == ["habit_run"], events
    assert {r["kind"] for r in receipt["producedRefs"]} == {"desk_record"}, receipt["producedRefs"]
