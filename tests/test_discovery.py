"""Bundle discovery: --bundle, $OURO_BUNDLE, a pointer file upwards, bundle.json
upwards, one *.ouro child of the cwd; ``ouro init --link``; hooks that find the
README's layout and fail visibly (once per session) when they cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro.bundle import Bundle, write_pointer
from ouro.errors import BundleExists, BundleNotFound
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS
from tests.conftest import cli_run, record_snapshot


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_one_ouro_child_of_the_cwd_is_found(project: Path) -> None:
    made = Bundle.init(project / "agent.ouro")
    found = Bundle.discover(None, env={}, cwd=project)
    assert found.bundle.root == made.root and found.how == "the *.ouro folder here"
    # ...but only directly in the cwd: from a subfolder it takes a pointer.
    with pytest.raises(BundleNotFound, match="no ouro bundle found"):
        Bundle.discover(None, env={}, cwd=project / "src")


def test_two_ouro_children_are_refused_by_name(project: Path) -> None:
    Bundle.init(project / "a.ouro")
    Bundle.init(project / "b.ouro")
    with pytest.raises(BundleNotFound, match=r"several bundles \(a.ouro, b.ouro\)") as err:
        Bundle.discover(None, env={}, cwd=project)
    assert "--link" in (err.value.hint or "")


def test_a_pointer_file_names_the_bundle_relative_to_itself(project: Path) -> None:
    made = Bundle.init(project / "agent.ouro")
    pointer, written = write_pointer(project, made.root)
    assert written and pointer.read_text() == "agent.ouro\n"
    found = Bundle.discover(None, env={}, cwd=project / "src" / "deep")
    assert found.bundle.root == made.root and found.how == f"pointer {pointer}"
    # Moving the whole project keeps it working: the path is relative.
    moved = project.parent / "moved"
    project.rename(moved)
    assert Bundle.locate(None, env={}, cwd=moved / "src").root == moved / "agent.ouro"


def test_ouro_toml_pointer_and_its_errors(project: Path) -> None:
    made = Bundle.init(project.parent / "elsewhere" / "x.ouro")
    (project / "ouro.toml").write_text('bundle = "../elsewhere/x.ouro"\n')
    assert Bundle.locate(None, env={}, cwd=project / "src").root.resolve() == made.root.resolve()
    (project / "ouro.toml").write_text("bundle = [1]\n")
    with pytest.raises(BundleNotFound, match=r"ouro\.toml: needs a string key bundle"):
        Bundle.locate(None, env={}, cwd=project)
    (project / "ouro.toml").write_text("bundle = \n")
    with pytest.raises(BundleNotFound, match="not valid TOML"):
        Bundle.locate(None, env={}, cwd=project)


def test_a_broken_pointer_is_an_error_not_a_fall_through(project: Path) -> None:
    Bundle.init(project / "agent.ouro")  # would be found by the child rule
    (project / ".ouro").write_text("gone.ouro\n")
    with pytest.raises(BundleNotFound, match=r"the pointer .*\.ouro names .*gone\.ouro"):
        Bundle.discover(None, env={}, cwd=project)


def test_order_bundle_then_env_then_pointer_then_bundle_json_then_child(
    project: Path, tmp_path: Path
) -> None:
    child = Bundle.init(project / "child.ouro")
    other = Bundle.init(tmp_path / "other.ouro")
    env_b = Bundle.init(tmp_path / "env.ouro")
    inside = child.root / "desk"
    # Inside a bundle: bundle.json upwards beats nothing else.
    assert Bundle.discover(None, env={}, cwd=inside).how == "bundle.json above"
    write_pointer(project, other.root)
    # A pointer upwards comes before bundle.json upwards.
    assert Bundle.locate(None, env={}, cwd=inside).root == other.root
    assert Bundle.locate(None, env={"OURO_BUNDLE": str(env_b.root)}, cwd=inside) == env_b
    assert Bundle.locate(str(child.root), env={"OURO_BUNDLE": str(env_b.root)}) == child
    # A relative --bundle is taken from the given cwd, not the process's.
    assert Bundle.locate("child.ouro", env={}, cwd=project) == child


def test_write_pointer_is_idempotent_and_never_replaces_another(project: Path) -> None:
    a = Bundle.init(project / "a.ouro")
    b = Bundle.init(project / "b.ouro")
    write_pointer(project, a.root)
    assert write_pointer(project, a.root) == (project / ".ouro", False)
    with pytest.raises(BundleExists, match="does not point at"):
        write_pointer(project, b.root)
    assert (project / ".ouro").read_text() == "a.ouro\n"


def test_init_link_writes_the_pointer_and_links_an_existing_bundle(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    made = cli_run(["init", "agent.ouro", "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["pointer"] is None
    plain = cli_run(["init", "more.ouro"])
    assert "--link" in plain.output
    linked = cli_run(["init", "agent.ouro", "--link", "--json"])
    assert linked.exit_code == 0, linked.output
    result = json.loads(linked.output)
    assert result["created"] is False and result["pointerWritten"] is True
    assert (project / ".ouro").read_text() == "agent.ouro\n"
    monkeypatch.chdir(project / "src" / "deep")
    info = cli_run(["info", "--json"])
    assert info.exit_code == 0, info.output
    assert json.loads(info.output)["bundle"] == str(project / "agent.ouro")


def _stdin(cwd: Path, event: str = "SessionStart", session: str = "s-1") -> str:
    return json.dumps(
        {"session_id": session, "cwd": str(cwd), "hook_event_name": event, "source": "startup"}
    )


@pytest.mark.parametrize("host", [CLAUDE, CODEX])
def test_hooks_find_the_readme_layout_from_the_host_cwd(host: object, project: Path) -> None:
    made = Bundle.init(project / "agent.ouro")
    out = run_hook(
        host, "SessionStart", _stdin(project), bundle_path=None, env={}, handlers=HANDLERS
    )  # type: ignore[arg-type]
    assert out.stderr == []
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(f"# orient — {made.read_meta()['agent']}")


def test_failure_notice_is_shown_once_per_session(project: Path, tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "xdg")}

    def run(event: str, session: str) -> tuple[str, list[str]]:
        out = run_hook(
            CLAUDE,
            event,
            _stdin(project, event, session),
            bundle_path=None,
            env=env,
            handlers=HANDLERS,
        )
        return out.stdout, out.stderr

    first, err = run("SessionStart", "s-1")
    notice = json.loads(first)["systemMessage"]
    assert "no ouro bundle found" in notice and "ouro hook doctor claude" in notice
    assert json.loads(first)["hookSpecificOutput"]["additionalContext"] == notice
    # Later events of the same session: stderr only.
    for event in ("UserPromptSubmit", "Stop", "PreCompact"):
        stdout, err = run(event, "s-1")
        assert stdout == "" and len(err) == 1 and "no ouro bundle found" in err[0]
    # A new session is told again (Stop: the user sees it; no model context there).
    stdout, _ = run("Stop", "s-2")
    assert set(json.loads(stdout)) == {"systemMessage"}
    # SessionEnd output is never shown by the host: nothing printed.
    assert run("SessionEnd", "s-3")[0] == ""


def test_a_dry_session_start_writes_nothing(project: Path) -> None:
    from ouro.hooks.common import Options

    made = Bundle.init(project / "agent.ouro")
    before = record_snapshot(made.root)
    out = run_hook(
        CODEX,
        "SessionStart",
        _stdin(project),
        bundle_path=None,
        env={},
        options=Options(dry_run=True),
        handlers=HANDLERS,
    )
    assert "# orient" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert record_snapshot(made.root) == before


def test_a_long_reason_is_cut_but_the_fix_command_stays() -> None:
    from ouro.hooks.common import NOTICE_LIMIT, notice_text

    text = notice_text(CODEX, "x" * 2000)
    assert len(text) == NOTICE_LIMIT and "\n" not in text
    assert text.endswith("check the install with 'ouro hook doctor codex'.")
