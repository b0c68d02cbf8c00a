"""The Pi adapter without Pi: translation at the edge, the extension file, the install,
the Pi package, and Pi's transcript format (``tests/fixtures/transcripts/pi.jsonl``:
lines the real Pi 0.73.1 wrote running ``true``, ``false`` and ``test -f nope``
through its bash tool against ``tests/fake_models.py``, paths rewritten to
``/home/dev``). The real Pi runs in ``tests/test_host_pi.py`` (marker ``host``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ouro.errors import CorruptFile, InvalidInput
from ouro.hooks import install, pi, transcript
from ouro.hooks.common import Options, parse_input, run_hook
from ouro.hooks.handlers import HANDLERS
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "transcripts" / "pi.jsonl"
SESSION = "01a2352d-e003-7770-828b-ea334572c4ad"


def shim(pi_event: str, event: dict[str, Any], **ctx: Any) -> str:
    """The stdin ouro's Pi extension writes (``pi_extension.ts``: ``call``)."""
    base = {"sessionId": SESSION, "cwd": "/home/dev/proj", "messages": 0}
    return json.dumps({"pi": pi_event, "event": event, "ctx": base | ctx})


def translated(event: str, text: str) -> tuple[str, dict[str, Any]]:
    word, out = pi.translate(event, text)
    parsed = parse_input(out)
    assert parsed.event == word
    return word, json.loads(out)


def test_session_start_reasons_map_to_the_shared_sources() -> None:
    for reason, messages, source in (
        ("startup", 0, "startup"),
        ("startup", 3, "resume"),  # 'pi -c': a session that already has turns
        ("new", 0, "startup"),
        ("resume", 4, "resume"),
        ("fork", 2, "resume"),
        ("reload", 2, "resume"),
    ):
        _, out = translated("SessionStart", shim("session_start", {"reason": reason},
                                                 messages=messages))  # fmt: skip
        assert out["source"] == source, reason
        assert out["session_id"] == SESSION and out["cwd"] == "/home/dev/proj"
    _, out = translated("SessionStart", shim("session_compact", {"fromExtension": False}))
    assert out["source"] == "compact"


def test_tool_result_exit_status_from_pis_bash_text() -> None:
    ok = {"toolName": "bash", "toolCallId": "toolu_1", "input": {"command": "true"},
          "content": [{"type": "text", "text": "(no output)"}], "isError": False}  # fmt: skip
    word, out = translated("PostToolUse", shim("tool_result", ok))
    assert word == "PostToolUse" and out["tool_response"]["exit_code"] == 0
    failed = ok | {"isError": True, "content": [{"type": "text", "text": "x\n\nCommand exited "
                                                 "with code 2"}]}  # fmt: skip
    word, out = translated("PostToolUse", shim("tool_result", failed))
    assert word == "PostToolUseFailure" and out["tool_response"]["exit_code"] == 2
    aborted = ok | {"isError": True, "content": [{"type": "text", "text": "Command aborted"}]}
    _, out = translated("PostToolUse", shim("tool_result", aborted))
    assert out["is_interrupt"] is True and "exit_code" not in out["tool_response"]


def test_stop_after_ouros_own_block_is_a_continuation() -> None:
    block = "ouro: 1 claim(s) not verified:\n- c1\nBefore stopping: run each claim's check"
    _, out = translated(
        "Stop", shim("turn_end", {"message": {"stopReason": "stop"}}, lastUser=block)
    )
    assert out["stop_hook_active"] is True
    _, out = translated(
        "Stop", shim("turn_end", {"message": {"stopReason": "stop"}}, lastUser="hi")
    )
    assert out["stop_hook_active"] is False


def test_shared_input_passes_through_and_a_mismatch_is_named() -> None:
    shared = json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/"})
    assert pi.translate("SessionStart", shared) == ("SessionStart", shared)
    with pytest.raises(InvalidInput, match="does not run 'ouro hook pi Stop'"):
        pi.translate("Stop", shim("session_start", {"reason": "startup"}))


def test_the_hook_answers_the_shim_through_the_cli(tmp_path: Path) -> None:
    """``ouro hook pi SessionStart`` with the shim's stdin: the packet, in the shared reply."""
    subprocess.run([sys.executable, "-m", "ouro.cli", "init", "agent.ouro"], cwd=tmp_path,
                   check=True, capture_output=True)  # fmt: skip
    stdin = shim("session_start", {"reason": "startup"}, cwd=str(tmp_path))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OURO_")}
    proc = subprocess.run([sys.executable, "-m", "ouro.cli", "hook", "pi", "SessionStart"],
                          cwd=tmp_path, input=stdin, capture_output=True, text=True,
                          env=env | {"XDG_STATE_HOME": str(tmp_path / "xdg")})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# orient") and len(context) <= pi.HOST.context_limit


def test_no_bundle_gives_the_one_line_notice(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    _, text = pi.translate("SessionStart", shim("session_start", {"reason": "startup"},
                                                 cwd=str(tmp_path)))  # fmt: skip
    outcome = run_hook(pi.HOST, "SessionStart", text, bundle_path=None, env=env,
                       options=Options(), handlers=HANDLERS)  # fmt: skip
    reply = json.loads(outcome.stdout)
    notice = reply["hookSpecificOutput"]["additionalContext"]
    assert notice == reply["systemMessage"] and "\n" not in notice
    assert "ouro hook doctor pi" in notice


def test_install_writes_the_extension_once_and_reads_it_back(tmp_path: Path) -> None:
    first = install.plan(pi.HOST, tmp_path, base="ouro")
    assert first.changed and first.path == tmp_path / ".pi" / "extensions" / "ouro.ts"
    install.apply(first)
    text = first.path.read_text()
    assert "import { spawn }" in text and str(tmp_path) not in text
    doc = pi.parse(first.path, text)
    for event in pi.HOST.events:
        assert install.installed_command(doc, pi.HOST, event) == f"ouro hook pi {event}"
    again = install.plan(pi.HOST, tmp_path, base="ouro")
    assert not again.changed
    blocking = install.plan(pi.HOST, tmp_path, base="ouro", block_on_debt=True)
    assert blocking.changed and "--block-on-debt" in blocking.after


def test_a_foreign_extension_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".pi" / "extensions" / "ouro.ts"
    path.parent.mkdir(parents=True)
    path.write_text("export default function () {}\n")
    with pytest.raises(CorruptFile, match="not ouro's Pi extension"):
        install.plan(pi.HOST, tmp_path)
    assert path.read_text() == "export default function () {}\n"


def test_write_plugin_is_a_pi_package(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    written = pi.write_plugin(folder, command="ouro")
    assert sorted(p.name for p in written) == ["README.md", "ouro.ts", "package.json"]
    manifest = json.loads((folder / "package.json").read_text())
    assert manifest["pi"] == {"extensions": ["./extensions/ouro.ts"]}
    assert "pi-package" in manifest["keywords"]
    doc = pi.parse(folder / "extensions" / "ouro.ts", (folder / "extensions/ouro.ts").read_text())
    assert install.installed_command(doc, pi.HOST, "Stop") == "ouro hook pi Stop"
    assert "ouro operating guide" in (folder / "README.md").read_text()
    assert pi.write_plugin(folder, command="ouro") == written  # again: the same files
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(InvalidInput, match="symbolic link"):
        pi.write_plugin(link, command="ouro")


def _fixture_home(tmp_path: Path) -> tuple[str, dict[str, str]]:
    folder = tmp_path / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    folder.mkdir(parents=True)
    path = folder / f"2026-12-02T05-15-28-644Z_{SESSION}.jsonl"
    path.write_bytes(FIXTURE.read_bytes())
    return str(path), {"HOME": str(tmp_path)}


def test_pis_own_transcript_confirms_its_bash_calls(tmp_path: Path) -> None:
    path, env = _fixture_home(tmp_path)
    trusted, why = transcript.trusted_path("pi", path, SESSION, env)
    assert trusted == path, why
    for n, command, code in ((0, "true", 0), (1, "false", 1), (2, "test -f nope", 1)):
        found = transcript.lookup("pi", path, SESSION, f"toolu_01FakeCall{n:04d}abcdefghij")
        assert found.run is not None, found.reason
        assert (found.run.command, found.run.exit_code) == (command, code)
    missing = transcript.lookup("pi", path, SESSION, "toolu_01ForgedByTheAgent")
    assert missing.run is None and missing.retry


def test_only_pis_own_session_file_is_trusted(tmp_path: Path) -> None:
    path, env = _fixture_home(tmp_path)
    assert transcript.trusted_path("pi", path, "another-session", env)[0] is None
    elsewhere = str(tmp_path / f"2026-12-02T05-15-28-644Z_{SESSION}.jsonl")
    assert transcript.trusted_path("pi", elsewhere, SESSION, env)[0] is None
    moved = {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(tmp_path / "other")}
    assert transcript.trusted_path("pi", path, SESSION, moved)[0] is None
