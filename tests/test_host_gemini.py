"""ouro inside the real Gemini CLI (``@google/gemini-cli`` 0.61.0, marker ``host``).

The host is the real npm package (``.ci/run`` installs it pinned into
``.hosts/``); only the model is fake: ``tests/fake_models.py`` on 127.0.0.1
speaking the Gemini API (``:streamGenerateContent``), reached through
``GOOGLE_GEMINI_BASE_URL`` with a placeholder ``GEMINI_API_KEY`` in a scratch
``HOME`` whose ``~/.gemini`` selects API-key auth and trusts the project
folder (Gemini runs no project hooks in an untrusted folder). Each scenario
starts from the README layout (``ouro init agent.ouro``, ``ouro hook install
gemini``). Assertions read the model requests the fake server logged: Gemini
puts hook ``additionalContext`` there, wrapped in ``<hook_context>``.

Two prompts of one session run over Gemini's Agent Client Protocol
(``gemini --acp``: JSON-RPC on stdio, ``session/new`` then ``session/prompt``
twice); ``gemini -p`` runs one prompt and ``--resume latest`` continues it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ouro import guide
from ouro.hooks import gemini as gemini_host
from tests.fake_models import FakeModels
from tests.test_real_hosts import (
    ASK,
    FAIL_CHECK,
    HANDOFF,
    NEXT,
    NEXT2,
    PASS_CHECK,
    PREFIX,
    TIMEOUT,
    World,
    _claim_files,
    _statuses,
)

pytestmark = pytest.mark.host

GEMINI_PKG = "@google/gemini-cli@0.61.0"
MODEL = "gemini-2.5-flash"  # named, so Gemini asks no router model first
DELTA = "changed since this session's last orientation"


@pytest.fixture(scope="module")
def gemini() -> Path:
    """The pinned Gemini CLI; installed with npm when missing, else a clear skip."""
    exe = PREFIX / "node_modules" / ".bin" / "gemini"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: cannot install the real Gemini CLI")
        proc = subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund",
             "--loglevel=error", GEMINI_PKG],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0:
            pytest.skip(f"npm could not install {GEMINI_PKG}: {proc.stderr[-400:]}")
    probe = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"gemini from npm does not run here: {probe.stderr[-300:]}")
    return exe


@pytest.fixture
def models() -> Iterator[FakeModels]:
    with FakeModels() as server:
        yield server


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


class Gemini:
    """The real ``gemini`` in ``world``'s project, talking to the fake model."""

    def __init__(self, exe: Path, world: World, models: FakeModels) -> None:
        self.exe = exe
        self.world = world
        self.models = models
        settings = world.home / ".gemini"
        settings.mkdir(exist_ok=True)
        (settings / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
        )
        (settings / "trustedFolders.json").write_text(
            json.dumps({str(world.project): "TRUST_FOLDER"})
        )
        self.env = world.env | {
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": models.url,
            "NO_COLOR": "1",
        }

    def prompt(self, text: str, *extra: str) -> str:
        """One ``gemini -p`` run; its stderr (where hook system messages go)."""
        proc = subprocess.run(
            [str(self.exe), "-m", MODEL, *extra, "-p", text], cwd=self.world.project,
            env=self.env, capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "OK from the fake model." in proc.stdout
        return proc.stderr

    def requests(self) -> list[dict[str, Any]]:
        return self.models.model_requests(":streamGenerateContent")

    def acp(self, prompts: list[str], between: Any = None) -> list[list[dict[str, Any]]]:
        """One ``gemini --acp`` session with several prompts; each prompt's model requests.

        ``between(i)`` runs after prompt ``i`` (a change to the bundle)."""
        proc = subprocess.Popen(
            [str(self.exe), "--acp", "-m", MODEL], cwd=self.world.project, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def call(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                    "params": params}) + "\n")  # fmt: skip
            stdin.flush()
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                line = stdout.readline()
                assert line, "gemini --acp exited"
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == ident and "method" not in message:
                    assert "error" not in message, message
                    return message
            raise AssertionError(f"gemini --acp did not answer {method} in time")

        turns = []
        try:
            call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session = call(2, "session/new", {"cwd": str(self.world.project), "mcpServers": []})
            sid = session["result"]["sessionId"]
            for i, text in enumerate(prompts):
                before = len(self.requests())
                call(10 + i, "session/prompt",
                     {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})  # fmt: skip
                turns.append(self.requests()[before:])
                if between is not None:
                    between(i)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        return turns


def _user_text(request: dict[str, Any]) -> str:
    """The text of the request's latest user turn (where Gemini puts hook context)."""
    contents = request.get("contents") or []
    users = [c for c in contents if c.get("role") == "user"]
    parts = users[-1].get("parts") if users else []
    return "\n".join(p.get("text", "") for p in parts or [] if isinstance(p, dict))


def _packet(text: str, *markers: str) -> bool:
    wanted = markers or (ASK, NEXT, HANDOFF)
    return "<hook_context># orient" in text and all(m in text for m in wanted)


@pytest.fixture
def readme(world: World) -> World:
    world.readme_layout()
    world.ouro("hook", "install", "gemini")
    return world


def test_gemini_packet_at_start_and_again_on_resume(
    gemini: Path, readme: World, models: FakeModels
) -> None:
    host = Gemini(gemini, readme, models)
    readme.ouro("hook", "doctor", "gemini")  # healthy: config, command, bundle, folder trust
    stderr = host.prompt("first prompt")
    [first] = host.requests()
    assert _packet(_user_text(first)), _user_text(first)[:2000]
    assert "ouro:" not in stderr  # no failure notice, no hook warning shown
    readme.ouro("arc", "next", NEXT2)
    host.prompt("second prompt", "--resume", "latest")
    second = host.requests()[-1]
    latest = _user_text(second)
    assert "second prompt" in latest and _packet(latest, ASK, NEXT2), latest
    sessions = [
        json.loads(line)
        for line in (readme.project / "agent.ouro" / "arc").rglob("*.jsonl")
        for line in line.read_text().splitlines()
        if "session_started" in line
    ]
    assert sessions, "the session starts were recorded"


def test_gemini_change_between_prompts_arrives_as_a_delta(
    gemini: Path, readme: World, models: FakeModels
) -> None:
    host = Gemini(gemini, readme, models)

    def change(i: int) -> None:
        if i == 0:
            readme.ouro("arc", "next", NEXT2)

    [first], [second] = host.acp(["first prompt", "second prompt"], change)
    assert _packet(_user_text(first)), _user_text(first)[:2000]
    assert DELTA not in _user_text(first)
    latest = _user_text(second)
    assert DELTA in latest and NEXT2 in latest
    assert "# orient" not in latest  # a delta, not the packet again


def test_gemini_without_a_bundle_the_notice_reaches_the_model(
    gemini: Path, world: World, models: FakeModels
) -> None:
    world.ouro("hook", "install", "gemini")
    host = Gemini(gemini, world, models)
    stderr = host.prompt("hello")
    [first] = host.requests()
    text = _user_text(first)
    assert "ouro: no ouro bundle found" in text and "ouro hook doctor gemini" in text
    assert text.count("no ouro bundle found") == 1  # once per session, not per event
    assert "ouro: no ouro bundle found" in stderr  # and shown to the user


def test_gemini_extension_written_by_ouro_hook_plugin_delivers_the_packet(
    gemini: Path, world: World, models: FakeModels
) -> None:
    world.readme_layout()  # no 'ouro hook install': the extension brings the hooks
    folder = world.root / "ouro-extension"
    world.ouro("hook", "plugin", "gemini", str(folder))
    written = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert written == {
        "gemini-extension.json",
        "hooks/hooks.json",
        "GEMINI.md",
        ".ouro-plugin.json",
    }
    host = Gemini(gemini, world, models)
    link = subprocess.run(
        [str(gemini), "extensions", "link", str(folder), "--consent"], cwd=world.project,
        env=host.env, capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip
    assert link.returncode == 0, link.stdout + link.stderr
    listed = subprocess.run(
        [str(gemini), "extensions", "list"], cwd=world.project, env=host.env,
        capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip
    assert gemini_host.EXTENSION in listed.stdout + listed.stderr
    # --yolo: a non-interactive run offers no tool that asks for approval (MCP tools ask)
    host.prompt("first prompt", "--yolo")
    [first] = host.requests()
    assert _packet(_user_text(first)), _user_text(first)[:2000]
    # The extension's context file (the guide) and its MCP server reach the model too.
    whole = json.dumps(first, ensure_ascii=False)
    assert guide.render().splitlines()[0] in whole, whole[:3000]
    offered = models.offered(first)
    assert any(name.endswith("orient") for name in offered), " ".join(offered)


def test_gemini_checks_it_ran_give_asserted_receipts_never_observed(
    gemini: Path, world: World, models: FakeModels
) -> None:
    """Gemini reports the shell command and its result, but its AfterTool payload names
    no tool call, so nothing ties it to Gemini's own transcript: the receipts are
    ``asserted`` with that reason, with the exit status Gemini stated: a pass verifies
    nothing."""
    world.readme_layout()
    (world.project / "src").mkdir()
    (world.project / "src" / "parser.py").write_text("def parse(): ...\n")
    ids = {}
    for name, check in (("pass", PASS_CHECK), ("fail", FAIL_CHECK)):
        out = world.ouro("claim", "add", f"MARKER-CLAIM-{name}", "--check", check,
                         "--about", "src/parser.py", "--json")  # fmt: skip
        ids[name] = json.loads(out.stdout)["id"]
    world.ouro("hook", "install", "gemini")
    host = Gemini(gemini, world, models)
    for check in (PASS_CHECK, FAIL_CHECK):  # one call after the other's result
        models.tool("run_shell_command", {"command": check})
    host.prompt("run the checks", "--yolo")
    assert [c["arguments"]["command"] for c in models.calls] == [PASS_CHECK, FAIL_CHECK]
    files = _claim_files(world)
    statuses = _statuses(world)
    for name, code in (("pass", 0), ("fail", 2)):
        [receipt] = files[ids[name]]["evidence"]
        assert (receipt["provenance"], receipt["exitCode"]) == ("asserted", code), receipt
        assert "tool_use_id" in json.dumps(receipt)
    # An asserted pass verifies nothing (an asserted failure still reads as failed).
    assert statuses[ids["pass"]] == "evidence_required", files[ids["pass"]]
    assert statuses[ids["fail"]] == "failed", files[ids["fail"]]
