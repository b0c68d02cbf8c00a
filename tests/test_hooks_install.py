"""``ouro hook install claude|codex``: merge without clobbering, back up, idempotent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ouro.errors import CorruptFile
from ouro.hooks import install
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from tests.conftest import record_snapshot, run_ouro

EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]
HOST_OBJ = {"claude": CLAUDE, "codex": CODEX}


def install_json(*args: str) -> dict[str, Any]:
    proc = run_ouro("hook", "install", *args, "--command", "ouro", "--json")
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def handlers(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for group in doc["hooks"][event] for h in group["hooks"]]


@pytest.mark.parametrize(
    ("host", "rel"), [("claude", ".claude/settings.json"), ("codex", ".codex/hooks.json")]
)
def test_fresh_install_writes_every_event_then_is_a_no_op(
    host: str, rel: str, tmp_path: Path
) -> None:
    first = install_json(host, "--project", str(tmp_path))
    path = tmp_path / rel
    assert first["path"] == str(path) and first["written"] and first["backup"] is None
    doc = json.loads(path.read_text())
    events = list(HOST_OBJ[host].events)
    assert list(doc["hooks"]) == events
    for event in events:
        [h] = handlers(doc, event)
        assert h == {
            "type": "command",
            "command": f"ouro hook {host} {event}",
            "timeout": (CLAUDE if host == "claude" else CODEX).timeouts[event],
        }
    assert doc["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert "matcher" not in doc["hooks"]["Stop"][0]
    assert doc["hooks"]["PostToolUse"][0]["matcher"] == "Bash"  # shell commands only
    text, mtime = path.read_text(), path.stat().st_mtime_ns
    second = install_json(host, "--project", str(tmp_path))
    assert (second["changed"], second["written"], second["diff"]) == (False, False, "")
    assert (path.read_text(), path.stat().st_mtime_ns) == (text, mtime)
    assert list(path.parent.iterdir()) == [path]  # no backup for a no-op


def test_merge_keeps_other_hooks_and_settings_and_backs_up(tmp_path: Path) -> None:
    path = tmp_path / ".claude/settings.json"
    path.parent.mkdir()
    original = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
        },
    }
    original_text = json.dumps(original, indent=4)
    path.write_text(original_text)
    result = install_json("claude", "--project", str(tmp_path))
    doc = json.loads(path.read_text())
    assert doc["permissions"] == original["permissions"]
    # the user's own PreToolUse group is kept as it was; ouro's edit warning is added beside it
    assert doc["hooks"]["PreToolUse"][0] == original["hooks"]["PreToolUse"][0]
    assert [h["command"] for h in handlers(doc, "PreToolUse")] == [
        "guard",
        "ouro hook claude PreToolUse",
    ]
    assert [h["command"] for h in handlers(doc, "Stop")] == [
        "notify-send done",
        "ouro hook claude Stop",
    ]
    backup = Path(result["backup"])
    assert backup.parent == path.parent and backup.name.startswith("settings.json.bak-")
    assert backup.read_text() == original_text
    # Formatting differences alone are not a change: the second run is a no-op.
    assert install_json("claude", "--project", str(tmp_path))["changed"] is False


def test_an_older_ouro_hook_is_updated_in_place_and_duplicates_removed(tmp_path: Path) -> None:
    path = tmp_path / ".codex/hooks.json"
    path.parent.mkdir()
    stale = {
        "type": "command",
        "command": "/old/venv/bin/ouro hook codex Stop",
        "statusMessage": "x",
    }
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": "lint"}, stale]},
                        {"hooks": [dict(stale)]},
                    ]
                }
            }
        )
    )
    install_json("codex", "--project", str(tmp_path), "--block-on-debt")
    doc = json.loads(path.read_text())
    assert doc["hooks"]["Stop"] == [
        {
            "hooks": [
                {"type": "command", "command": "lint"},
                {
                    "type": "command",
                    "command": "ouro hook codex Stop --block-on-debt",
                    "statusMessage": "x",
                    "timeout": 10,
                },
            ]
        }
    ]
    # --block-on-debt only touches Stop.
    assert handlers(doc, "SessionEnd")[0]["command"] == "ouro hook codex SessionEnd"


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    proc = run_ouro("hook", "install", "claude", "--project", str(tmp_path), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert '+    "SessionStart": [' in proc.stdout
    assert "dry run:" in proc.stdout
    assert "warning: as the host will run it" in proc.stdout
    assert "no ouro bundle found" in proc.stdout
    assert not (tmp_path / ".claude").exists()


def test_bundle_option_writes_a_relative_pointer_not_a_path_in_the_commands(
    tmp_path: Path,
) -> None:
    from ouro.bundle import Bundle

    project = tmp_path / "proj"
    project.mkdir()
    bundle = Bundle.init(tmp_path / "shared" / "my bundle.ouro")
    result = install_json("claude", "--project", str(project), "--bundle", str(bundle.root))
    assert result["pointer"]["written"] is True
    assert (project / ".ouro").read_text() == "../shared/my bundle.ouro\n"
    doc = json.loads((project / ".claude/settings.json").read_text())
    for event in EVENTS:
        assert handlers(doc, event)[0]["command"] == f"ouro hook claude {event}"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{broken", "not valid JSON (line 1"),
        ("[]", "must hold a JSON object"),
        ('{"hooks": []}', "'hooks' must be an object"),
        ('{"hooks": {"Stop": {}}}', "'hooks.Stop' must be a list"),
    ],
)
def test_a_malformed_config_is_refused_and_left_untouched(
    tmp_path: Path, content: str, needle: str
) -> None:
    path = tmp_path / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(CorruptFile) as info:
        install.plan(CLAUDE, tmp_path, base="ouro")
    assert needle in info.value.message
    assert path.read_text() == content
    assert list(path.parent.iterdir()) == [path]


def test_cli_reports_a_malformed_config_with_exit_3(tmp_path: Path) -> None:
    path = tmp_path / ".codex/hooks.json"
    path.parent.mkdir()
    path.write_text("{broken")
    proc = run_ouro("hook", "install", "codex", "--project", str(tmp_path))
    assert proc.returncode == 3
    assert "not valid JSON" in proc.stderr and "ouro left it untouched" in proc.stderr
    assert path.read_text() == "{broken"


def test_is_ours_matches_only_ouro_commands_for_that_host_and_event() -> None:
    assert install.is_ours({"command": "ouro hook codex Stop"}, CODEX, "Stop")
    assert install.is_ours({"command": "/x/bin/python -m ouro.cli hook codex Stop"}, CODEX, "Stop")
    assert not install.is_ours({"command": "ouro hook claude Stop"}, CODEX, "Stop")
    assert not install.is_ours({"command": "ouro hook codex StopFailure"}, CODEX, "Stop")
    assert not install.is_ours({"command": "other hook codex Stop"}, CODEX, "Stop")
    assert not install.is_ours("ouro hook codex Stop", CODEX, "Stop")


def test_default_command_is_runnable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    command = install.default_command()
    assert command.endswith("/ouro") or command.endswith("-m ouro.cli")


PY = f"{sys.executable} -m ouro.cli"


def test_install_checks_the_hidden_layout_as_the_host_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'ouro init agent.ouro' at the project root, install with no flags and no
    environment: the check runs the hook from the project and finds the bundle."""
    from ouro.bundle import Bundle

    project = tmp_path / "proj"
    project.mkdir()
    found = Bundle.init(project / "agent.ouro")
    elsewhere = Bundle.init(tmp_path / "installer.ouro")
    before = record_snapshot(found.root)
    # The installer's own OURO_BUNDLE must not be what the check sees.
    proc = run_ouro(
        "hook",
        "install",
        "codex",
        "--project",
        str(project),
        "--command",
        PY,
        env={"OURO_BUNDLE": str(elsewhere.root)},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"bundle {found.root} (found by the *.ouro folder here)" in proc.stdout
    assert str(elsewhere.root) not in proc.stdout
    assert "trust the project" in proc.stdout and "/hooks" in proc.stdout
    assert record_snapshot(found.root) == before  # the check is a dry run: it wrote nothing
    doctor = run_ouro("hook", "doctor", "codex", "--project", str(project), "--json")
    checks = {c["check"]: c["status"] for c in json.loads(doctor.stdout)["hosts"][0]["checks"]}
    assert checks["bundle"] == checks["packet"] == checks["config"] == "ok"
    assert checks["codex project trust"] == "problem" and doctor.returncode == 1


def test_reinstall_warns_when_it_changes_a_trusted_codex_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.hooks import codex_trust

    home = tmp_path / "codex-home"
    home.mkdir()
    install_json("codex", "--project", str(tmp_path))
    hooks_file = tmp_path / ".codex/hooks.json"
    doc = json.loads(hooks_file.read_text())
    lines = []
    for e, g, h, m, handler in install._ours(doc, CODEX):
        key = codex_trust.entry_key(hooks_file, e, g, h)
        lines += [
            f'[hooks.state."{key}"]',
            f'trusted_hash = "{codex_trust.entry_hash(e, m, handler)}"',
        ]
    (home / "config.toml").write_text("\n".join(lines) + "\n")
    env = {"CODEX_HOME": str(home)}
    same = run_ouro(
        "hook",
        "install",
        "codex",
        "--project",
        str(tmp_path),
        "--command",
        "ouro",
        "--json",
        env=env,
    )
    assert json.loads(same.stdout)["trustLost"] == []
    changed = run_ouro(
        "hook",
        "install",
        "codex",
        "--project",
        str(tmp_path),
        "--command",
        "ouro",
        "--block-on-debt",
        env=env,
    )
    assert "warning: Codex had trusted the Stop entry" in changed.stdout
    assert changed.stdout.count("had trusted") == 1


def test_install_says_when_the_command_is_not_portable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    from tests.conftest import cli_run

    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    result = cli_run(["hook", "install", "claude", "--project", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "'ouro' is not on PATH" in result.output
    assert "specific to this machine" in result.output


def test_doctor_names_each_broken_part(tmp_path: Path) -> None:

    from tests.conftest import cli_run

    # The exit status is the outcome's (ouro.cli.render.EXITS: 1 when a host has a problem).
    missing = cli_run(["hook", "doctor", "claude", "--project", str(tmp_path), "--json"],
    )  # fmt: skip
    assert missing.exit_code == 1
    [check] = json.loads(missing.output)["hosts"][0]["checks"]
    assert check["check"] == "config" and "does not exist" in check["detail"]
    # An old install: SessionEnd over Claude's cap, a command not on PATH, no bundle.
    path = tmp_path / ".claude/settings.json"
    path.parent.mkdir()
    doc = {
        "hooks": {
            e: [{"hooks": [{"type": "command", "command": f"no-such-ouro hook claude {e}",
                            "timeout": 10}]}]
            for e in EVENTS
        }
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    result = cli_run(["hook", "doctor", "claude", "--project", str(tmp_path)])
    assert result.exit_code == 1
    assert "PROBLEM timeouts: over the host's cap: SessionEnd 10s (cap 1s)" in result.output
    assert "PROBLEM command: 'no-such-ouro' is not on the PATH" in result.output
    assert "PROBLEM bundle: no bundle reachable" in result.output
    assert "problem(s)" in result.output


def test_doctor_is_healthy_for_the_readme_layout(tmp_path: Path) -> None:

    from ouro.bundle import Bundle
    from tests.conftest import cli_run

    Bundle.init(tmp_path / "agent.ouro")
    before = record_snapshot(tmp_path / "agent.ouro")
    assert cli_run(["hook", "install", "claude", "--project", str(tmp_path),
                               "--command", PY]).exit_code == 0  # fmt: skip
    result = cli_run(["hook", "doctor", "--project", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("healthy")
    assert (
        "ok      packet: a dry SessionStart gave the packet ('# orient — agent')" in result.output
    )
    assert record_snapshot(tmp_path / "agent.ouro") == before


def test_doctor_tells_ouro_missing_from_the_hosts_path_apart_from_no_bundle(
    tmp_path: Path,
) -> None:
    """Issue 26 #8a: with only ``ouro`` missing from the host's PATH, doctor also said "no
    bundle reachable" and suggested 'ouro init' (a second bundle)."""
    project = tmp_path / "project"
    project.mkdir()
    assert run_ouro("init", str(project / "agent.ouro"), "--link").returncode == 0
    assert run_ouro("hook", "install", "claude", "--project", str(project),
                    "--command", "ouro").returncode == 0  # fmt: skip
    empty = tmp_path / "empty-bin"  # a PATH on which no ouro runs
    empty.mkdir()
    env = {"PATH": str(empty)}
    proc = run_ouro("hook", "doctor", "claude", "--project", str(project), "--json", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = {c["check"]: c for c in json.loads(proc.stdout)["hosts"][0]["checks"]}
    command = checks["command"]
    assert command["status"] == "problem"
    assert "not on the PATH the host gives its hooks" in command["detail"]
    assert str(empty) in command["detail"]  # the PATH the host gives hooks, named
    assert "--command" in command["fix"] and "ouro" in command["fix"]
    bundle = checks["bundle"]
    assert bundle["status"] == "ok", bundle
    assert str((project / "agent.ouro").resolve()) in bundle["detail"]
    assert "found by" in bundle["detail"]
    assert checks["packet"]["status"] == "problem"
    assert not any("ouro init" in (c["fix"] or "") + c["detail"] for c in checks.values())
    text = run_ouro("hook", "doctor", "claude", "--project", str(project), env=env).stdout
    assert "no bundle reachable" not in text and "ouro init" not in text
    # No bundle as well: that is reported as its own problem, with its own fix.
    (project / "agent.ouro").rename(tmp_path / "elsewhere.ouro")
    proc = run_ouro("hook", "doctor", "claude", "--project", str(project), "--json", env=env)
    checks = {c["check"]: c for c in json.loads(proc.stdout)["hosts"][0]["checks"]}
    assert checks["command"]["status"] == "problem"
    assert checks["bundle"]["status"] == "problem"
    assert "no bundle reachable" in checks["bundle"]["detail"]
    assert "ouro init" in checks["bundle"]["fix"]
