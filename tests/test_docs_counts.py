"""The tool counts and exit codes the docs state are the code's (issue 28, measured 8).

Measured: ``ouro mcp --help`` and ``ouro --help`` said "Serve every ouro tool"
(the default served 19 of 58); docs/mcp.md said ``--tools all`` serves 48 (it
was 58); ``sentinel refresh --help`` said it gathers git signals and
docs/sentinel.md described a git check (no git runs); ``migrate --help`` said
``--journal migrate`` makes notes (the default triages into tasks, facts, notes
and drops); docs/migrating.md said a refused migrate exits 1 (it exits 2);
docs/mcp.md said a legacy bundle makes the server exit 1 (it is 3).

Every number is read from the docs and compared with what the code does now,
counted from the registry at test time: nothing here is hard-coded."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ouro.bundle import Bundle
from tests.conftest import REPO, run_ouro

DOCS = REPO / "docs"


def _stated(doc: str, pattern: str) -> int:
    text = " ".join((DOCS / doc).read_text().split())
    found = re.findall(pattern, text)
    assert len(found) == 1, f"{doc}: expected one statement matching {pattern!r}, got {found}"
    return int(found[0])


def _served(tool_set: str) -> int:
    from ouro import mcp

    return len(mcp.served(tool_set))


def test_docs_mcp_states_the_served_tool_counts() -> None:
    assert _stated("mcp.md", r"\*\*`ouro mcp` serves (\d+) tools\*\*") == _served("lean")
    assert _stated("mcp.md", r"\*\*`ouro mcp --tools all` serves all (\d+)\*\*") == _served("all")
    assert _served("lean") < _served("all")


def test_help_says_what_the_server_serves() -> None:
    for args in (("--help",), ("mcp", "--help")):
        out = run_ouro(*args).stdout
        assert "Serve every ouro tool" not in out, args
        assert "Serve ouro's tools" in " ".join(out.split())
    mcp_help = " ".join(run_ouro("mcp", "--help").stdout.split())
    assert "By default the lean set" in mcp_help and "--tools all serves every tool" in mcp_help


def test_sentinel_refresh_help_and_docs_name_no_git_check() -> None:
    out = " ".join(run_ouro("sentinel", "refresh", "--help").stdout.split())
    assert "git" not in out and "readiness checks" in out
    doc = " ".join((DOCS / "sentinel.md").read_text().split())
    assert "the git check" not in doc and "git state" not in doc and "`git status`" not in doc


def test_migrate_help_describes_the_journal_triage() -> None:
    out = " ".join(run_ouro("migrate", "--help").stdout.split())
    assert "make them Desk record notes (default)" not in out
    assert "triage each entry into Desk tasks, diary facts, a note or a drop" in out


def _legacy(tmp_path: Path) -> Bundle:
    legacy = Bundle.init(tmp_path / "old.ouro", agent="old")
    (legacy.root / "journal").mkdir()
    (legacy.root / "journal" / "2025-01-17.md").write_text("# a day\n\n- [ ] call Ari\n")
    return legacy


def test_a_refused_migrate_exits_as_docs_migrating_says(tmp_path: Path) -> None:
    stated = _stated("migrating.md", r"without `--yes` it refuses\*\* \(exit (\d+)")
    legacy = _legacy(tmp_path)
    out = run_ouro("migrate", bundle=legacy, input="")  # no terminal, no --yes
    assert out.returncode == stated, out.stderr
    assert (legacy.root / "journal").is_dir()  # and it changed nothing


def test_a_legacy_bundle_stops_the_server_with_the_exit_docs_mcp_states(tmp_path: Path) -> None:
    stated = _stated("mcp.md", r"and exits with status (\d+) \(the bundle is unusable")
    legacy = _legacy(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", "mcp", "--bundle", str(legacy.root)],
        input="", capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == stated, proc.stderr
    assert "ouro migrate" in proc.stderr
