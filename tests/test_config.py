"""``ouro config``: the precedence global < bundle < project < env < command
line, visible with --show-origin; atomic locked writes; a corrupt file is
reported with its path and, on set, backed up."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle, write_pointer
from ouro.cli.run import run
from tests.conftest import snapshot


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundle: Bundle) -> Path:
    """A project folder with a .ouro pointer to the bundle; cwd inside it."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    write_pointer(root, bundle.root)
    monkeypatch.chdir(root / "src")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("OURO_COLOR", raising=False)
    return root


def _get(*extra: str) -> dict[str, str]:
    code, out, err = _run(["--json", "config", "get", "color", *extra])
    assert code == 0, err
    return dict(json.loads(out))


def test_each_source_overrides_the_one_below(
    project: Path, bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _get()["source"] == "default" and _get()["value"] == "auto"
    assert _run(["config", "set", "color", "never", "--global"])[0] == 0
    assert (tmp_path / "xdg" / "ouro" / "config.toml").read_text() == 'color = "never"\n'
    assert _get()["source"] == "global"
    assert _run(["config", "set", "color", "always"])[0] == 0  # bundle.json by default
    assert json.loads(bundle.meta_path.read_text())["settings"] == {"color": "always"}
    assert (_get()["source"], _get()["value"]) == ("bundle", "always")
    code, out, _ = _run(["config", "set", "color", "never", "--project"])
    assert code == 0 and str(project / "ouro.toml") in out
    toml = (project / "ouro.toml").read_text()
    assert 'color = "never"' in toml and "bundle = " in toml  # still a valid pointer
    assert (_get()["source"], _get()["value"]) == ("project", "never")
    monkeypatch.setenv("OURO_COLOR", "always")
    assert (_get()["source"], _get()["value"]) == ("env", "always")
    code, out, _ = _run(["--config", "color=never", "config", "get", "color", "--show-origin"])
    assert code == 0 and out == "never\tcommand\n"
    code, out, _ = _run(["config", "list", "--show-origin"])
    assert out.splitlines()[0].split() == ["KEY", "VALUE", "ORIGIN"]
    assert any(line.split()[:3] == ["color", "always", "env"] for line in out.splitlines())
    assert any(line.split()[:3] == ["agent", "tester", "bundle"] for line in out.splitlines()), out
    monkeypatch.delenv("OURO_COLOR")
    assert _run(["config", "unset", "color", "--project"])[0] == 0
    assert _get()["source"] == "bundle"


def test_reads_are_pure(project: Path, bundle: Bundle) -> None:
    before = snapshot(bundle.root), snapshot(project)
    _run(["config", "list", "--show-origin"])
    _run(["config", "get", "agent"])
    assert (snapshot(bundle.root), snapshot(project)) == before


def test_bad_key_and_value_are_usage_errors(project: Path) -> None:
    code, _, err = _run(["config", "set", "colour", "never"])
    assert code == 2 and "no setting named 'colour'" in err and "color" in err
    code, _, err = _run(["config", "set", "color", "purple"])
    assert code == 2 and "not one of auto, always, never" in err
    assert _run(["--config", "nonsense", "info"])[0] == 2


def test_a_corrupt_file_is_reported_and_backed_up_on_set(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "xdg" / "ouro" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("color = never\n")  # not TOML: the value is unquoted
    code, out, _ = _run(["--json", "config", "list"])
    assert code == 3
    err = json.loads(out)["error"]
    assert err["type"] == "corrupt_file" and str(path) in err["message"]
    assert path.read_text() == "color = never\n"  # reading left it alone
    _run(["desk", "tip", "add", "Use -x"])
    code, out, err = _run(["desk", "tip", "list"])  # its dates consult the dates setting
    assert code == 0 and "Use -x" in out
    assert f"warning: {path}: not valid TOML" in err  # skipped for printing, never silently
    code, out, _ = _run(["config", "set", "color", "never", "--global"])
    assert code == 0 and "not valid TOML" in out
    backups = list(path.parent.glob("config.toml.bad-*"))
    assert len(backups) == 1 and backups[0].read_text() == "color = never\n"
    assert path.read_text() == 'color = "never"\n'


def test_the_agent_setting_is_the_default_agent(
    project: Path, bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(["desk", "track", "add", "web"])[0] == 0
    assert _run(["desk", "task", "add", "web", "Do it"])[0] == 0
    monkeypatch.setenv("OURO_AGENT", "bob")
    code, out, _ = _run(["--json", "desk", "task", "take", "web/do-it"])
    assert code == 0 and json.loads(out)["task"]["heldBy"] == "bob"


@pytest.mark.slow
def test_concurrent_sets_lose_nothing(project: Path, tmp_path: Path) -> None:
    """Real processes write the global file at once; every key ends up there."""
    script = (
        "import sys; from ouro.cli.run import run\n"
        "key, value = sys.argv[1], sys.argv[2]\n"
        "for _ in range(5):\n"
        "    assert run(['config', 'set', key, value, '--global']) == 0\n"
    )
    env = {**__import__("os").environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, key, value], env=env)
        for key, value in [("color", "never"), ("dates", "absolute"), ("progress", "never")]
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    text = (tmp_path / "xdg" / "ouro" / "config.toml").read_text()
    for line in ('color = "never"', 'dates = "absolute"', 'progress = "never"'):
        assert line in text
    assert not list((tmp_path / "xdg" / "ouro").glob(".config.toml.*.tmp"))


def test_lookup_reads_a_settings_file_again_only_when_its_stamp_moves(
    project: Path, bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import time

    from ouro import config

    xdg = tmp_path / "xdg" / "ouro"
    xdg.mkdir(parents=True)
    files = {"global": xdg / "config.toml", "project": project / "ouro.toml"}
    files["global"].write_text('"diary.near" = "meaning"\n')
    old = 1_000_000_000_000_000_000  # long ago: the stamps are trusted
    for path in files.values():
        if path.exists():
            os.utime(path, ns=(old, old))
    os.utime(bundle.meta_path, ns=(old, old))
    time.sleep(0.15)  # past the racy window of the ctime utime set (ouro.store.stamp)
    reads: list[str] = []
    real_toml, real_meta = config.read_toml, Bundle.read_meta

    def counting_toml(path: Path) -> dict[str, str] | None:
        if Path(path).exists():  # a missing file is only looked for
            reads.append(Path(path).name)
        return real_toml(path)

    def counting_meta(self: Bundle) -> dict[str, object]:
        reads.append("bundle.json")
        return real_meta(self)

    monkeypatch.setattr(config, "read_toml", counting_toml)
    monkeypatch.setattr(Bundle, "read_meta", counting_meta)
    assert config.lookup("diary.near", bundle.root) == "meaning"
    first = sorted(reads)
    assert "config.toml" in first and "bundle.json" in first
    reads.clear()
    for _ in range(3):
        assert config.lookup("diary.near", bundle.root) == "meaning"
    assert reads == []  # nothing changed: no settings file read again
    files["global"].write_text('"diary.near" = "words"\n')
    os.utime(files["global"], ns=(old + 10**9, old + 10**9))  # same size, another stamp
    assert config.lookup("diary.near", bundle.root) == "words"
    assert reads == ["config.toml"]
    files["global"].write_text('"diary.near" = "meaning"\n')  # just now: racy, never kept
    assert config.lookup("diary.near", bundle.root) == "meaning"
    files["global"].write_text('"diary.near" = "words!"\n')
    assert config.lookup("diary.near", bundle.root) == "words!"
