"""The Gemini CLI adapter in process: its event names, its reply shape, its config
(``ouro hook install gemini``), its extension (``write_plugin``) and its shell results.

The stdin payloads are the ones the real ``gemini`` 0.61.0 sent (captured from
the binary against the fake model server; ``tests/test_host_gemini.py`` runs
the binary itself), trimmed to the fields ouro reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ouro import guide
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.hooks import install
from ouro.hooks.common import Options, Reply, run_hook, shape
from ouro.hooks.gemini import HOST, write_plugin
from ouro.hooks.handlers import HANDLERS
from ouro.hooks.posttool import observation

SESSION = "d1e225cd-eeea-4ddb-afc0-d7605d15d2aa"


def payload(event: str, cwd: Path, **fields: Any) -> str:
    """A Gemini CLI hook payload as the binary sends it."""
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": f"/home/u/.gemini/tmp/proj/chats/session-2026-12-02T05-14-{SESSION[:8]}.jsonl",
            "cwd": str(cwd),
            "hook_event_name": event,
            "timestamp": "2026-12-02T05:14:44.585Z",
            **fields,
        }
    )


def run(bundle: Bundle, word: str, stdin: str) -> tuple[dict[str, Any], list[str]]:
    env = {"XDG_STATE_HOME": str(bundle.root.parent / "xdg")}
    out = run_hook(HOST, word, stdin, bundle_path=None, env=env, handlers=HANDLERS)
    return json.loads(out.stdout), out.stderr


def test_session_start_then_before_agent_packet_guide_then_delta(bundle: Bundle) -> None:
    cwd = bundle.root.parent
    start, _ = run(bundle, "SessionStart", payload("SessionStart", cwd, source="startup"))
    context = start["hookSpecificOutput"]["additionalContext"]
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert context.startswith("# orient") and guide.render() in context
    assert len(context) <= HOST.context_limit
    prompt = payload("BeforeAgent", cwd, prompt="the user's words")
    quiet, _ = run(bundle, "BeforeAgent", prompt)
    assert quiet == {}  # nothing changed: an empty object, never empty stdout
    from ouro.api import Bundle as Library

    Library(bundle).arc.next("MARKER-NEXT-gemini run the tests")
    delta, _ = run(bundle, "BeforeAgent", prompt)
    assert delta["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    text = delta["hookSpecificOutput"]["additionalContext"]
    assert "MARKER-NEXT-gemini" in text and guide.render() not in text


def test_before_agent_without_session_start_orients_with_the_guide(bundle: Bundle) -> None:
    """Gemini's ACP sessions fire no SessionStart: the first prompt orients."""
    out, _ = run(bundle, "BeforeAgent", payload("BeforeAgent", bundle.root.parent, prompt="x"))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# orient") and guide.render() in context
    assert len(context) <= HOST.context_limit
    again, _ = run(bundle, "BeforeAgent", payload("BeforeAgent", bundle.root.parent, prompt="y"))
    assert again == {}


@pytest.mark.parametrize(
    ("word", "stdin_event", "fields"),
    [
        ("AfterAgent", "AfterAgent", {"prompt_response": "done", "stop_hook_active": False}),
        ("Stop", "AfterAgent", {"prompt_response": "done", "stop_hook_active": False}),
        ("SessionEnd", "SessionEnd", {"reason": "exit"}),
        ("PreCompress", "PreCompress", {"trigger": "manual"}),
    ],
)
def test_every_event_prints_a_json_object(
    bundle: Bundle, word: str, stdin_event: str, fields: dict[str, Any]
) -> None:
    """Gemini reads stderr as the reply when stdout is empty: ouro always prints JSON."""
    out, _ = run(bundle, word, payload(stdin_event, bundle.root.parent, **fields))
    assert isinstance(out, dict)


def test_a_payload_for_another_event_is_refused_visibly(bundle: Bundle) -> None:
    out, stderr = run(bundle, "BeforeAgent", payload("AfterAgent", bundle.root.parent))
    assert "hook_event_name='AfterAgent' but the command is for BeforeAgent" in stderr[0]
    assert "ouro hook doctor gemini" in out["systemMessage"]


def test_no_bundle_gives_the_notice_once_then_an_empty_object(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    stdin = payload("SessionStart", tmp_path, source="startup")
    first = run_hook(HOST, "SessionStart", stdin, bundle_path=None, env=env, handlers=HANDLERS)
    notice = json.loads(first.stdout)
    assert "ouro hook doctor gemini" in notice["hookSpecificOutput"]["additionalContext"]
    assert notice["systemMessage"] == notice["hookSpecificOutput"]["additionalContext"]
    stdin = payload("BeforeAgent", tmp_path, prompt="x")
    second = run_hook(HOST, "BeforeAgent", stdin, bundle_path=None, env=env, handlers=HANDLERS)
    assert json.loads(second.stdout) == {}


def test_stop_blocks_with_a_reason_gemini_feeds_back() -> None:
    out = shape(HOST, "Stop", Reply(system_message="debt", block_reason="debt\nrun it"))
    assert out == {"decision": "block", "reason": "debt\nrun it", "systemMessage": "debt"}
    assert shape(HOST, "PreCompact", Reply(context="ignored")) == {}


def test_install_writes_gemini_names_millisecond_timeouts_and_exact_matchers(
    tmp_path: Path,
) -> None:
    plan = install.plan(HOST, tmp_path, base="ouro")
    hooks = plan.new_doc["hooks"]
    assert set(hooks) == {
        "SessionStart", "BeforeAgent", "PreCompress", "AfterAgent", "SessionEnd",
        "AfterTool", "BeforeTool",
    }  # fmt: skip
    assert "matcher" not in hooks["SessionStart"][0]  # a lifecycle matcher is one exact word
    assert hooks["PreCompress"][0]["matcher"] == "manual"
    [handler] = hooks["BeforeAgent"][0]["hooks"]
    assert handler == {
        "type": "command",
        "command": "ouro hook gemini BeforeAgent",
        "timeout": 10000,
    }
    install.apply(plan)
    assert not install.plan(HOST, tmp_path, base="ouro").changed  # a second run is a no-op
    for event in HOST.events:
        assert install.installed_command(plan.new_doc, HOST, event) is not None


def test_write_plugin_writes_an_extension_with_hooks_mcp_and_the_guide(tmp_path: Path) -> None:
    folder = tmp_path / "ext"
    written = write_plugin(folder, command="/opt/ouro venv/bin/python -m ouro.cli")
    assert sorted(p.relative_to(folder).as_posix() for p in written) == [
        "GEMINI.md", "gemini-extension.json", "hooks/hooks.json",
    ]  # fmt: skip
    manifest = json.loads((folder / "gemini-extension.json").read_text())
    assert manifest["name"] == "ouro" and manifest["contextFileName"] == "GEMINI.md"
    assert manifest["mcpServers"]["ouro"] == {
        "command": "/opt/ouro",
        "args": ["venv/bin/python", "-m", "ouro.cli", "mcp"],
    }
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())
    assert (
        hooks
        == install.plan(
            HOST, tmp_path / "empty", base="/opt/ouro venv/bin/python -m ouro.cli"
        ).new_doc
    )
    assert (folder / "GEMINI.md").read_text().strip() == guide.render().strip()
    assert {p.parent for p in folder.rglob("*") if p.is_file()} <= {folder, folder / "hooks"}


def test_write_plugin_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(InvalidInput, match="symbolic link"):
        write_plugin(link, command="ouro")
    assert not any(real.iterdir())
    inside = tmp_path / "ext"
    inside.mkdir()
    (inside / "hooks").symlink_to(real)  # a link inside that leads out
    with pytest.raises(InvalidInput, match="symbolic link"):
        write_plugin(inside, command="ouro")
    assert not any(real.iterdir()) and not (inside / "gemini-extension.json").exists()


def _after_tool(command: str, llm: str, **extra: Any) -> dict[str, Any]:
    return {
        "tool_name": "run_shell_command",
        "tool_input": {"command": command},
        "tool_response": {"llmContent": llm, "returnDisplay": llm, **extra},
    }


@pytest.mark.parametrize(
    ("llm", "extra", "code"),
    [
        ("<untrusted_context>\nOutput: ok\nProcess Group PGID: 17157\n</untrusted_context>", {}, 0),
        ("Output: (empty)\nExit Code: 2\nProcess Group PGID: 9", {"error": {"message": "x"}}, 2),
        ("Output: (empty)\nSignal: 15\nProcess Group PGID: 9", {"error": {"message": "x"}}, None),
        ("Command was cancelled by user before it could complete.", {}, None),
    ],
)
def test_gemini_shell_results_give_the_exit_status_gemini_states(
    llm: str, extra: dict[str, Any], code: int | None
) -> None:
    seen = observation("PostToolUse", _after_tool("make test", llm, **extra), "gemini")
    assert seen is not None and seen.command == "make test"
    assert seen.exit_code == code


def test_a_gemini_receipt_is_asserted_the_payload_names_no_tool_call(bundle: Bundle) -> None:
    from ouro.hooks.common import parse_input
    from ouro.hooks.witness import ASSERTED, witness
    from ouro.models.clock import utc_now

    stdin = payload("AfterTool", bundle.root.parent, **_after_tool("make test", "Output: ok"))
    inp = parse_input(stdin)
    verdict = witness(HOST, inp, "make test", 0, {}, now=utc_now())
    assert verdict.kind == ASSERTED and "tool_use_id" in verdict.reason
    assert Options().budget <= HOST.context_limit


def test_doctor_reads_geminis_folder_trust_as_gemini_does(tmp_path: Path) -> None:
    from ouro.hooks.doctor import gemini_trust

    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    rules = tmp_path / "trustedFolders.json"
    env = {"GEMINI_CLI_TRUSTED_FOLDERS_PATH": str(rules), "HOME": str(tmp_path)}
    assert gemini_trust(project, env).status == "problem"  # no file: not trusted
    rules.write_text(json.dumps({str(project / "x"): "TRUST_PARENT"}))
    assert gemini_trust(project, env).status == "ok"  # the rule's parent is the project
    rules.write_text(
        json.dumps({str(tmp_path / "work"): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"})
    )
    check = gemini_trust(project, env)
    assert check.status == "problem" and "DO_NOT_TRUST" in check.detail  # the longest rule wins
    rules.write_text("{not json")
    assert "trust unknown" in gemini_trust(project, env).detail
    assert gemini_trust(project, env | {"GEMINI_CLI_TRUST_WORKSPACE": "true"}).status == "ok"
