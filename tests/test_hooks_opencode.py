"""OpenCode's adapter without the host: the edge translation, install / doctor through
the plugin file, and the plugin folder (the real host runs in test_host_opencode.py).

The payloads are the shapes the shim (ouro/hooks/opencode_plugin.js) pipes, taken
from what the real opencode 1.18.33 hands its plugin hooks (see docs/hooks.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ouro.arc.claims import add_claim
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.hooks import doctor, install
from ouro.hooks.common import parse_input, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.hooks.opencode import (
    HOST,
    common_stdin,
    plugin_command,
    read_plugin,
    render_plugin,
    shim_source,
    write_plugin,
)
from tests.conftest import REPO, run_ouro

SID = "ses_dcad534e1ffeluDmNWMWh96GDJ"


def _stdin(event: str, **raw: object) -> str:
    return common_stdin(event, json.dumps({"hook": "x", "sessionID": SID, **raw}))


def test_chat_message_becomes_user_prompt_submit(tmp_path: Path) -> None:
    text = _stdin(
        "UserPromptSubmit",
        directory=str(tmp_path),
        agent="build",
        model={"providerID": "fake", "modelID": "m1"},
        messageID="msg_1",
    )
    inp = parse_input(text)
    assert (inp.event, inp.session_id, inp.cwd, inp.model) == (
        "UserPromptSubmit", SID, str(tmp_path), "fake/m1",
    )  # fmt: skip


def test_session_events_carry_source_trigger_reason() -> None:
    assert parse_input(_stdin("SessionStart", source="compact")).source == "compact"
    assert parse_input(_stdin("SessionStart", source="startup", parentID="ses_p")).source == (
        "subagent"
    )
    assert parse_input(_stdin("PreCompact")).trigger == "unknown"
    assert parse_input(_stdin("SessionEnd")).reason == "deleted"


def test_bash_tool_becomes_post_tool_use() -> None:
    text = _stdin(
        "PostToolUse",
        tool="bash",
        callID="call_1",
        args={"command": "make test", "description": "run"},
        output="ok\n",
        exit=2,
    )
    inp = parse_input(text)
    assert inp.tool is not None
    assert inp.tool["tool_name"] == "Bash"
    assert inp.tool["tool_input"] == {"command": "make test"}
    assert inp.tool["tool_response"] == {"stdout": "ok\n", "exit_code": 2}
    assert inp.tool["tool_use_id"] == "call_1"


def test_other_text_passes_through() -> None:
    shared = json.dumps({"hook_event_name": "Stop", "session_id": "s"})
    assert common_stdin("Stop", shared) == shared
    assert common_stdin("Stop", "not json") == "not json"


def test_the_packet_then_silence_then_a_delta(tmp_path: Path, bundle: Bundle) -> None:
    run_ouro("arc", "ask", "MARKER-ASK", bundle=bundle, check=True)
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "xdg")}

    def hook(event: str, **raw: object) -> dict[str, Any]:
        out = run_hook(HOST, event, _stdin(event, directory=str(tmp_path), **raw),
                       bundle_path=str(bundle.root), env=env, handlers=HANDLERS)  # fmt: skip
        return json.loads(out.stdout) if out.stdout else {}

    start = hook("SessionStart", source="startup")
    context = start["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# orient") and "MARKER-ASK" in context
    assert hook("UserPromptSubmit") == {}  # nothing changed since
    run_ouro("arc", "next", "MARKER-NEXT", bundle=bundle, check=True)
    delta = hook("UserPromptSubmit")["hookSpecificOutput"]["additionalContext"]
    assert "MARKER-NEXT" in delta and not delta.startswith("# orient")
    assert hook("SessionEnd") == {}


def test_install_twice_then_doctor(tmp_path: Path) -> None:
    Bundle.init(tmp_path / "agent.ouro", agent="tester")
    first = install.plan(HOST, tmp_path, base="ouro")
    assert first.changed and first.before is None
    install.apply(first)
    path = tmp_path / ".opencode/plugin/ouro.js"
    assert path.read_text() == render_plugin("ouro")
    assert not install.plan(HOST, tmp_path, base="ouro").changed
    _, doc = read_plugin(path)
    assert plugin_command(doc) == "ouro"
    assert install.installed_command(doc, HOST, "Stop") == "ouro hook opencode Stop"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    checks = {c.name: c for c in doctor.diagnose(HOST, tmp_path, env)}
    assert checks["config"].status == "ok", checks["config"]
    path.write_text(path.read_text() + "// edited\n")
    checks = {c.name: c for c in doctor.diagnose(HOST, tmp_path, env)}
    assert checks["config"].status == "problem" and "no ouro hook" in checks["config"].detail


def test_render_plugin_quotes_the_command() -> None:
    text = render_plugin('/opt/my ouro/bin/ouro --x "y"')
    assert 'const COMMAND = "/opt/my ouro/bin/ouro --x \\"y\\""' in text
    assert text.count("const COMMAND") == 1
    assert shim_source().count('const COMMAND = "ouro"') == 1


def test_write_plugin_folder(tmp_path: Path) -> None:
    folder = tmp_path / "plug"
    files = write_plugin(folder, command="ouro")
    names = sorted(p.relative_to(folder).as_posix() for p in files)
    assert names == ["opencode.json", "ouro-guide.md", "plugin/ouro.js"]
    config = json.loads((folder / "opencode.json").read_text())
    assert config["mcp"]["ouro"] == {"type": "local", "command": ["ouro", "mcp"], "enabled": True}
    assert config["instructions"] == [str(folder / "ouro-guide.md")]
    assert (folder / "plugin/ouro.js").read_text() == render_plugin("ouro")
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(InvalidInput):
        write_plugin(link, command="ouro")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_shim_is_valid_javascript(tmp_path: Path) -> None:
    target = tmp_path / "ouro.mjs"
    target.write_text(render_plugin("ouro"))
    proc = subprocess.run(["node", "--check", str(target)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "NODE_OPTIONS": ""})  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_the_shim_is_package_data() -> None:
    assert (REPO / "ouro/hooks/opencode_plugin.js").is_file()
    assert "spawn" in shim_source() and "hook opencode" in shim_source()


def test_hot_events_import_no_heavy_module(bundle: Bundle) -> None:
    """As tests/test_hooks_cold.py for Claude: the OpenCode edge adds no heavy import to
    the prompt and unrelated-command hooks (module names checked, never times)."""
    from tests.test_hooks_cold import WITHOUT

    add_claim(bundle, "the suite passes", check="pytest -q")
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}

    def hook(event: str, **raw: object) -> tuple[str, set[str]]:
        payload = {"hook": "x", "sessionID": "ses_cold", "directory": str(bundle.root.parent)}
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "ouro.cli", "hook", "opencode", event],
            input=json.dumps(payload | raw), capture_output=True, text=True, env=env,
            timeout=120, cwd=bundle.root.parent,
        )  # fmt: skip
        assert proc.returncode == 0 and "nothing injected" not in proc.stderr, proc.stderr[-2000:]
        names = set()
        for line in proc.stderr.splitlines():
            match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S.*)$", line)
            if match:
                names.add(match.group(1).strip().split(".")[0])
        return proc.stdout, names

    out, _ = hook("SessionStart", source="startup")
    assert "# orient" in out
    out, names = hook("UserPromptSubmit", agent="build")
    assert out == "" and names & WITHOUT == set()
    out, names = hook("PostToolUse", tool="bash", callID="call_1",
                      args={"command": "ls -la"}, output="x", exit=0)  # fmt: skip
    assert out == "" and "ouro" in names and names & WITHOUT == set()
