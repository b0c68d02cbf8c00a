"""Help that teaches: every command's --help is whole (summary at a sentence
boundary, every option described, an example), every group is described, and
every example in ``ouro.cli.examples`` runs against a scratch bundle."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ouro.cli.examples import EXAMPLES
from ouro.cli.help import summary
from ouro.cli.helptopics import TOPICS
from ouro.cli.parse import flags_of
from ouro.cli.run import parser_of, run
from ouro.cli.tree import GROUP_HELP, children, entries
from ouro.spec import spec_of
from tests.git_env import run_git

LEAVES = entries()
GROUPS = {p[:n] for p in LEAVES for n in range(1, len(p))}
TREE = sorted(set(LEAVES) | GROUPS)


def test_every_group_is_described() -> None:
    for path in GROUPS:
        assert GROUP_HELP.get(path), f"group 'ouro {' '.join(path)}' has no description"
    assert set(GROUP_HELP) - {()} <= set(TREE)


@pytest.mark.parametrize("path", TREE, ids=lambda p: " ".join(p))
def test_help_is_whole(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    text = summary(path)
    assert text, path
    assert text.endswith((".", ")")), f"summary not a sentence: {text!r}"
    assert not text.endswith("..."), f"summary truncated: {text!r}"
    if path in LEAVES:
        for param in spec_of(LEAVES[path].function()):
            assert param.p.help, f"ouro {' '.join(path)} {param.name} has no help"
        parser_of(LEAVES[path])  # builds
    assert run([*path, "--help"]) == 0
    out = capsys.readouterr().out
    if path in LEAVES:
        assert "Examples:" in out and f"ouro {' '.join(path)}" in out, out
        for param in spec_of(LEAVES[path].function()):
            for flag in flags_of(param):
                assert flag in out or param.p.file, (path, flag)
    # the listing of a group shows each child's whole summary, never cut
    if path in GROUPS:
        flat = "".join(out.split())
        for name in children(path):
            assert "".join(summary((*path, name)).split()) in flat


def test_a_group_without_a_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["desk"]) == 2
    assert "Usage: ouro desk" in capsys.readouterr().err
    assert run(["desk", "bogus"]) == 2
    assert "No such command 'bogus'" in capsys.readouterr().err
    assert run([]) == 2
    assert run(["--help"]) == 0
    assert "Commands:" in capsys.readouterr().out


def test_every_command_has_an_example_and_no_example_is_stale() -> None:
    runnable = set(LEAVES)
    assert runnable - set(EXAMPLES) == set(), "commands without an example"
    assert set(EXAMPLES) - runnable == set(), "examples for commands that do not exist"


def test_help_topics(capsys: pytest.CaptureFixture[str]) -> None:
    assert {"bundle", "arc", "desk", "locators", "drills"} <= set(TOPICS)
    assert run(["help"]) == 0
    listing = capsys.readouterr().out
    for topic in TOPICS:
        assert run(["help", topic]) == 0
        assert TOPICS[topic][0] in capsys.readouterr().out
        assert topic in listing
    assert run(["help", "desk", "search"]) == 0
    assert "Usage: ouro desk search" in capsys.readouterr().out
    assert run(["help", "claim"]) == 0
    assert "Commands:" in capsys.readouterr().out
    assert run(["help", "nonsense"]) == 2
    assert "locators" in capsys.readouterr().err


def _json_of(capsys: pytest.CaptureFixture[str], argv: list[str], status: int = 0) -> Any:
    assert run(argv) == status, argv
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # one JSON object, one line
    return json.loads(out)


def test_json_help_is_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    listing = _json_of(capsys, ["--json", "help"])
    assert [t["name"] for t in listing["topics"]] == list(TOPICS)
    assert [c["name"] for c in listing["commands"]] == children(())
    assert _json_of(capsys, ["--json", "--help"]) == listing
    topic = _json_of(capsys, ["help", "locators", "--json"])
    assert topic["topic"] == "locators" and topic["summary"] == TOPICS["locators"][0]
    assert "bundle-relative" in topic["text"]
    record = _json_of(capsys, ["--json", "help", "desk", "search"])
    assert record == _json_of(capsys, ["--json", "desk", "search", "--help"])
    assert record["command"] == "desk search" and record["group"] is False
    assert record["summary"] == summary(("desk", "search"))
    assert record["agentTool"] == "desk_search"
    assert record["usage"].startswith("ouro desk search [-h]")
    assert [a["name"] for a in record["arguments"]] == ["query"]
    options = {o["name"]: o for o in record["options"]}
    assert options["limit"]["flags"] == ["--limit"] and options["limit"]["kind"] == "int"
    assert options["mode"]["choices"] == ["lexical", "semantic", "hybrid"]
    assert record["examples"] and record["examples"][0]["line"].startswith("ouro desk search")
    add = _json_of(capsys, ["--json", "help", "desk", "task", "add"])
    assert {a["name"]: a["required"] for a in add["arguments"]} == {"track": True, "title": True}
    assert "--body-file" in {f for o in add["options"] for f in o["flags"]}
    group = _json_of(capsys, ["--json", "desk", "task", "--help"])
    assert group["group"] is True and group["command"] == "desk task"
    assert [c["name"] for c in group["commands"]] == [
        f"desk task {n}" for n in children(("desk", "task"))
    ]
    assert _json_of(capsys, ["--json", "desk", "-h"])["command"] == "desk"  # the group
    assert _json_of(capsys, ["--json", "help", "desk"])["topic"] == "desk"  # the topic
    error = _json_of(capsys, ["--json", "help", "nonsense"], status=2)["error"]
    assert error["type"] == "usage" and "locators" in error["message"]
    assert run(["help", "desk", "search"]) == 0  # without --json: the text, as before
    assert capsys.readouterr().out.startswith("Usage: ouro desk search")


def test_completion_scripts_and_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    for shell in ("bash", "zsh", "fish"):
        assert run(["completion", shell]) == 0
        assert "ouro __complete" in capsys.readouterr().out
    assert run(["__complete", "desk", "ta"]) == 0
    assert capsys.readouterr().out.split() == ["task"]
    assert run(["__complete", "desk", "search", "--li"]) == 0
    assert capsys.readouterr().out.split() == ["--limit"]
    assert run(["__complete", "--js"]) == 0
    assert capsys.readouterr().out.split() == ["--json"]
    assert run(["completion", "tcsh"]) == 2


#: examples that cannot end in success in a scratch bundle, with why
EXPECTED_EXIT = {
    ("sync", "resolve"): (2, "a scratch bundle has no conflict to resolve"),
    ("hook", "doctor"): (1, "nothing is installed in a scratch project"),
    ("message", "reply"): (1, "a scratch bundle's inbox has no message to answer"),
    ("surface", "ack"): (1, "nothing was surfaced to a scratch bundle"),
}
#: long-running commands: started, given a moment, and must still be running
SERVERS = {("watch",), ("mcp",), ("workbench",)}


def _fill(line: str, ids: dict[str, str]) -> list[str]:
    words = shlex.split(line.split(" < ")[0])
    return [ids.get(w, w) for w in words]


def test_every_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(tmp_path)
    assert run(["init", str(home / "agent.ouro"), "--agent", "ada"]) == 0
    bundle = home / "agent.ouro"
    monkeypatch.setenv("OURO_BUNDLE", str(bundle))
    (home / "README.md").write_text("Install with pip; test with pytest.\n")  # the claim example's
    (bundle / "habits" / "tidy.yaml").write_text("title: tidy\ncadence: 1d\nrun: 'true'\n")
    (tmp_path / "payload.json").write_text('{"hook_event_name": "SessionStart"}')
    remote = tmp_path / "remote.git"
    run_git("init", "-q", "--bare", str(remote))
    ids = {"<remote>": str(remote), "<conflict-id>": "sc-none"}
    for path, examples in EXAMPLES.items():
        if path == ("init",):
            continue  # ran above
        for line, _what in examples:
            argv = _fill(line, ids)
            if path in SERVERS:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "ouro.cli", *argv],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                try:
                    proc.wait(timeout=1.5)
                except subprocess.TimeoutExpired:
                    proc.terminate()
                    proc.wait()
                    continue
                raise AssertionError(f"ouro {line} exited early: {proc.stderr.read()!r}")
            stdin = (tmp_path / "payload.json").open() if " < " in line else None
            if stdin is not None:
                monkeypatch.setattr("sys.stdin", stdin)
            elif path == ("notes", "write"):
                import io

                monkeypatch.setattr("sys.stdin", io.StringIO("Tag, build, publish.\n"))
            want, why = EXPECTED_EXIT.get(path, (0, ""))
            code = run(["--json", *argv])
            assert code == want, f"ouro {line} exited {code} (expected {want} {why})"
            if stdin is not None:
                stdin.close()
            if path == ("claim", "add"):
                out = json.loads(run_json(["claim", "list"]))
                ids["<older-claim-id>"] = ids.get("<claim-id>", "")
                ids["<claim-id>"] = out["claims"][-1]["id"]
            if path == ("obligation", "add"):
                out = json.loads(run_json(["obligation", "list"]))
                ids["<obligation-id>"] = out["obligations"][-1]["id"]


def run_json(argv: list[str]) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert run(["--json", *argv]) == 0
    return buf.getvalue()


def test_every_priority_option_states_the_range_the_code_checks() -> None:
    from ouro.desk.tasks import check_priority

    helps = {
        " ".join(path): param.p.help
        for path, entry in LEAVES.items()
        for param in spec_of(entry.function())
        if param.name == "priority"
    }
    assert {"desk task add", "desk task update"} <= set(helps)
    for where, text in helps.items():  # 0 is the most urgent, 9 the least (desk.tasks)
        assert "0 (most urgent) .. 9" in text, (where, text)
    from ouro.errors import InvalidInput

    assert (check_priority(0), check_priority(9)) == (0, 9)
    for outside in (-1, 10):
        with pytest.raises(InvalidInput, match=r"outside 0\.\.9"):
            check_priority(outside)
