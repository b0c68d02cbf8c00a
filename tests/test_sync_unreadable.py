"""Files sync reads from the bundle: a FIFO is refused, never waited on; a symlink
leading outside is reported or refused, never followed.

The sync state (``state/sync/*.json``), conflict records, ``.gitignore`` /
``.gitattributes`` and the working copies a merge reads. A FIFO with no writer
blocks a plain ``open()`` for ever, so every FIFO case runs ``ouro`` as a real
process with a timeout: a hang fails the test instead of stalling the suite.
Outside files hold a marker that must reach no output, record or commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from tests.sync_support import git, ouro, remote_and_clones

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SECRET = "SECRET-OUTSIDE-THE-BUNDLE"
FACTS = "desk/_record/diary/facts.jsonl"
TASK = "desk/work/ship-it/task.md"


def _ouro(bundle: Bundle, *args: str) -> subprocess.CompletedProcess[str]:
    """``ouro --json ARGS`` as a process; a read that blocks on a FIFO times out."""
    return subprocess.run(
        [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "OURO_BUNDLE"},
    )


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _error(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The error a refused command printed (exit 1, or 3 for a corrupt file)."""
    assert proc.returncode in (1, 3), (proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)["error"]


def _outside(tmp: Path, name: str, text: str) -> Path:
    folder = tmp / "outside"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["config.json", "status.json"])
def test_a_sync_state_file_that_is_a_fifo_is_refused(tmp_path: Path, name: str) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    bundle = Bundle.init(tmp_path / "a.ouro", agent="ann")
    ouro(bundle, "sync", "init", "--remote", str(remote))
    ouro(bundle, "sync")
    _fifo(bundle.root / "state" / "sync" / name)
    for args in (("sync", "status"), ("sync",)):
        error = _error(_ouro(bundle, *args))
        assert name in error["message"] and "FIFO" in error["message"], (args, error)


def test_conflict_records_that_are_fifos_or_lead_outside_are_reported_never_read(
    tmp_path: Path,
) -> None:
    bundle = Bundle.init(tmp_path / "a.ouro", agent="ann")
    folder = bundle.root / "arc" / "sync" / "conflicts"
    folder.mkdir(parents=True)
    record = {"id": "cf-ok", "path": "x.json", "kind": "document", "resolved": False}
    (folder / "cf-ok.json").write_text(json.dumps(record))
    os.mkfifo(folder / "cf-fifo.json")
    secret = json.dumps({**record, "id": "cf-out", "path": SECRET})
    outside = _outside(tmp_path, "record.json", secret)
    (folder / "cf-out.json").symlink_to(outside)

    status = _ouro(bundle, "sync", "status")
    assert status.returncode == 0, status.stderr
    result = json.loads(status.stdout)
    assert [c["id"] for c in result["openConflicts"]] == ["cf-ok"]
    problems = " | ".join(result["problems"])
    assert "cf-fifo.json: unreadable (a FIFO" in problems, problems
    assert "cf-out.json resolves outside the bundle" in problems, problems
    assert SECRET not in status.stdout + status.stderr
    orient = _ouro(bundle, "orient")
    assert orient.returncode == 0 and SECRET not in orient.stdout + orient.stderr

    fifo = _error(_ouro(bundle, "sync", "resolve", "cf-fifo"))
    assert "cf-fifo.json" in fifo["message"] and "FIFO" in fifo["message"], fifo
    refused = _ouro(bundle, "sync", "resolve", "cf-out")
    error = _error(refused)
    assert "outside the bundle" in error["message"] and SECRET not in refused.stdout, error
    assert outside.read_text() == secret  # not rewritten through the link
    assert (folder / "cf-fifo.json").is_fifo() and (folder / "cf-out.json").is_symlink()


def test_a_conflicts_folder_leading_outside_is_reported(tmp_path: Path) -> None:
    bundle = Bundle.init(tmp_path / "a.ouro", agent="ann")
    record = {"id": "cf-out", "path": SECRET, "kind": "document", "resolved": False}
    away = tmp_path / "outside" / "conflicts"
    away.mkdir(parents=True)
    (away / "cf-out.json").write_text(json.dumps(record))
    (bundle.root / "arc" / "sync").mkdir(parents=True)
    (bundle.root / "arc" / "sync" / "conflicts").symlink_to(away)
    result = ouro(bundle, "sync", "status")
    assert result["openConflicts"] == [] and SECRET not in json.dumps(result)
    assert any("arc/sync/conflicts resolves outside" in p for p in result["problems"]), result


def test_policy_files_that_are_fifos_or_lead_outside_are_refused_by_sync_init(
    tmp_path: Path,
) -> None:
    bundle = Bundle.init(tmp_path / "a.ouro", agent="ann")
    _fifo(bundle.root / ".gitignore")
    error = _error(_ouro(bundle, "sync", "init"))
    assert ".gitignore" in error["message"] and "FIFO" in error["message"], error
    assert not (bundle.root / ".git").exists()  # the repository it made is gone again
    (bundle.root / ".gitignore").unlink()
    outside = _outside(tmp_path, "attributes", f"# {SECRET}\n")
    (bundle.root / ".gitattributes").unlink()
    (bundle.root / ".gitattributes").symlink_to(outside)
    refused = _ouro(bundle, "sync", "init")
    error = _error(refused)
    assert ".gitattributes" in error["message"] and "outside the bundle" in error["message"]
    assert SECRET not in refused.stdout + refused.stderr
    assert outside.read_text() == f"# {SECRET}\n"


def test_a_git_that_is_a_fifo_is_refused_by_every_sync_verb(tmp_path: Path) -> None:
    bundle = Bundle.init(tmp_path / "a.ouro", agent="ann")
    os.mkfifo(bundle.root / ".git")
    for args in (("sync", "init"), ("sync", "resolve", "cf-none")):
        error = _error(_ouro(bundle, *args))
        assert error["type"] == "foreign_repository", (args, error)
        assert "neither a folder nor a gitfile" in error["message"], (args, error)
    assert (bundle.root / ".git").is_fifo()


def _interrupted_merge(tmp: Path, path: str) -> tuple[Path, Bundle, Bundle]:
    """Both machines changed ``path``; B's merge of A's changes stopped before its commit
    (what a sync killed mid-merge leaves)."""
    remote, a, b = remote_and_clones(tmp)
    if path == FACTS:
        ouro(a, "diary", "write", "ann's fact")
        ouro(b, "diary", "write", "bob's fact")
    else:
        ouro(a, "desk", "task", "update", "work/ship-it", "--title", "ann's title")
        ouro(b, "desk", "task", "update", "work/ship-it", "--title", "bob's title")
    ouro(a, "sync")
    git(b.root, "add", "-A")
    git(b.root, "commit", "-qm", "bob's side")
    git(b.root, "fetch", "-q", "origin")
    subprocess.run(
        ["git", "-C", str(b.root), "merge", "--no-commit", "--no-edit", "origin/main"],
        capture_output=True,
        check=False,
    )
    assert (b.root / ".git" / "MERGE_HEAD").exists()
    return remote, a, b


def test_a_stopped_merge_whose_log_is_now_a_fifo_finishes_from_both_sides(
    tmp_path: Path,
) -> None:
    remote, _, b = _interrupted_merge(tmp_path, FACTS)
    _fifo(b.root / FACTS)
    proc = _ouro(b, "sync")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    result = json.loads(proc.stdout)
    assert any(f"{FACTS}: a FIFO" in note for note in result["notes"]), result["notes"]
    assert result["pushed"]
    facts = git(remote, "show", f"main:{FACTS}")
    assert "ann's fact" in facts and "bob's fact" in facts
    assert (b.root / FACTS).is_file()


@pytest.mark.parametrize(("path", "behind"), [(FACTS, "file"), (FACTS, "fifo"), (TASK, "file")])
def test_a_stopped_merge_never_reads_a_working_copy_leading_outside(
    tmp_path: Path, path: str, behind: str
) -> None:
    """Refused (the merged file cannot replace what the link names), and what the link
    names is never opened: an outside FIFO would hang a follower, an outside file's
    bytes would land in the merged log or the conflict record."""
    remote, _, b = _interrupted_merge(tmp_path, path)
    text = f'{{"id": "zz", "text": "{SECRET}"}}\n'
    outside = _outside(tmp_path, "secret", text)
    if behind == "fifo":
        _fifo(outside)
    (b.root / path).unlink()
    (b.root / path).symlink_to(outside)
    proc = _ouro(b, "sync")
    error = _error(proc)
    assert error["type"] == "outside_bundle" and path in error["message"], error
    assert SECRET not in proc.stdout + proc.stderr
    assert outside.is_fifo() if behind == "fifo" else outside.read_text() == text
    records = b.root / "arc" / "sync" / "conflicts"
    for record in records.glob("*.json") if records.is_dir() else []:
        assert SECRET not in record.read_text()
    listed = subprocess.run(
        ["git", "--git-dir", str(remote), "grep", "-q", SECRET, "main"], check=False
    )
    assert listed.returncode == 1  # not in the remote's tree


def test_a_stopped_merge_whose_conflict_record_is_a_fifo_is_refused(tmp_path: Path) -> None:
    """Finishing a merge twice keeps the first record: one that is a FIFO is named."""
    from ouro.sync.conflicts import conflict_id

    _, _, b = _interrupted_merge(tmp_path, TASK)
    sides = [
        subprocess.run(
            ["git", "-C", str(b.root), "show", f"{rev}:{TASK}"], capture_output=True, check=True
        ).stdout
        for rev in ("HEAD", "MERGE_HEAD")
    ]
    record = b.root / "arc" / "sync" / "conflicts" / f"{conflict_id(TASK, *sides)}.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(record)
    error = _error(_ouro(b, "sync"))
    assert error["type"] == "corrupt_file" and record.name in error["message"], error
    assert "FIFO" in error["message"] and record.is_fifo()
