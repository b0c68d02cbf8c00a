"""The exit-code contract (``ouro.cli.exits``, docs/cli.md), over every command:
2 for a usage error wherever it is detected, 3 when the bundle is unusable, 1
for a negative outcome the user asked about, 0 for success (every example runs
with 0 in tests/test_cli_help.py); ``--json`` gives the same code and the
error object carries it."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.cli.examples import EXAMPLES
from ouro.cli.exits import CODE_BY_KIND, TABLE
from ouro.cli.run import run
from tests.test_cli_help import LEAVES

#: commands that work without a bundle, and why
NO_BUNDLE = {
    ("init",): "creates one",
    ("demo",): "makes its own scratch bundle",
    ("sync", "clone"): "makes its bundle from a remote",
    ("help",): "explains concepts",
    ("config", "get"): "global and env settings need no bundle",
    ("config", "list"): "global and env settings need no bundle",
    ("config", "set"): "--global / --project need no bundle; bundle scope says so",
    ("config", "unset"): "as config set",
    ("hook", "claude"): "a host hook fails open: exit 0, one line for the user",
    ("hook", "codex"): "a host hook fails open: exit 0, one line for the user",
    ("hook", "pi"): "a host hook fails open: exit 0, one line for the user",
    ("hook", "gemini"): "a host hook fails open: exit 0, one line for the user",
    ("hook", "opencode"): "a host hook fails open: exit 0, one line for the user",
    ("hook", "plugin"): "writes a plugin folder; it needs no bundle",
    ("hook", "install"): "edits the project's host config",
    ("habits", "install"): "prints a scheduler entry",
    ("guide",): "prints the operating guide",
    ("completion",): "prints a shell script",
    ("hook", "doctor"): "an unreachable bundle is a problem it reports (exit 1)",
}


def _line(path: tuple[str, ...]) -> list[str]:
    line = EXAMPLES[path][0][0].split(" < ")[0]
    words = shlex.split(line)
    fill = {"<claim-id>": "cl-x", "<older-claim-id>": "cl-y", "<obligation-id>": "ob-x"}
    return [fill.get(w, w) for w in words]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("path", sorted(LEAVES), ids=lambda p: " ".join(p))
def test_a_usage_error_exits_2_everywhere(path: tuple[str, ...], bundle: Bundle) -> None:
    code, _out, _err = _run(["--bundle", str(bundle.root), *path, "--no-such-option"])
    assert code == 2
    code, out, _err = _run(["--bundle", str(bundle.root), "--json", *path, "--no-such-option"])
    assert code == 2
    assert json.loads(out)["error"] == {
        "type": "usage",
        "message": json.loads(out)["error"]["message"],
        "hint": f"see 'ouro {' '.join(path)} --help'",
        "exitCode": 2,
    }


@pytest.mark.parametrize("path", sorted(LEAVES), ids=lambda p: " ".join(p))
def test_an_unusable_bundle_exits_3_everywhere(
    path: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    missing = tmp_path / "nowhere"
    legacy = Bundle.init(tmp_path / "old.ouro", agent="old").root
    (legacy / "journal").mkdir()
    torn = Bundle.init(tmp_path / "torn.ouro", agent="torn").root
    (torn / "bundle.json").write_text("{torn")
    if path in NO_BUNDLE or path == ("migrate",):
        pytest.skip(NO_BUNDLE.get(path, "migrate is the command for a legacy bundle"))
    monkeypatch.setattr("sys.stdin", io.StringIO("a body on stdin\n"))
    for root in (missing, legacy, torn):
        code, out, err = _run(["--bundle", str(root), "--json", *_line(path)])
        assert code == 3, (root.name, out, err)
        assert json.loads(out)["error"]["exitCode"] == 3
        code, _out, err = _run(["--bundle", str(root), *_line(path)])
        assert code == 3 and "error:" in err and "hint:" in err


def test_negative_outcomes_exit_1_with_the_same_status_in_json(bundle: Bundle) -> None:
    base = ["--bundle", str(bundle.root)]
    (bundle.root.parent / "README.md").write_text("nothing here\n")
    code, out, _ = _run([*base, "--json", "claim", "add", "x", "--check", "grep -q y README.md"])
    claim = json.loads(out)["id"]
    for extra in ([], ["--json"]):
        assert _run([*base, *extra, "claim", "verify", claim])[0] == 1  # the check failed
        assert _run([*base, *extra, "sentinel", "status"])[0] == 1  # no receipt: unknown
        assert _run([*base, *extra, "desk", "task", "show", "nope/nothing"])[0] == 1  # not found
    code, out, _ = _run([*base, "--json", "desk", "task", "show", "nope/nothing"])
    assert json.loads(out)["error"]["exitCode"] == 1
    _run([*base, "arc", "blocker", "waiting for keys"])
    code, out, _ = _run([*base, "--json", "sentinel", "refresh"])
    assert json.loads(out)["verdict"] == "blocked" and code == 1
    (bundle.root.parent / "README.md").write_text("y\n")
    assert _run([*base, "claim", "verify", claim])[0] == 0


def test_usage_errors_found_late_exit_2(bundle: Bundle) -> None:
    base = ["--bundle", str(bundle.root)]
    assert _run([*base, "arc", "query", "bogus"])[0] == 2
    assert _run([*base, "desk", "search", "x", "--limit", "0"])[0] == 2
    assert _run([*base, "--config", "color=purple", "info"])[0] == 2


def test_the_table_covers_every_code() -> None:
    assert [row[0] for row in TABLE] == [0, 1, 2, 3, 130]
    assert set(CODE_BY_KIND.values()) <= {1, 2, 3}
