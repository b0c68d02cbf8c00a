"""``about`` refs are resolved through symlinks at write (issue 26, item 12).

docs/arc.md: refs refuse absolute paths, ``..``, NUL, backslashes and symlink
escapes at write time. A claim's or a task's ``about`` ref that leaves the
repository root (or, for a bundle locator, the bundle) through a symlink --
to a file or a folder -- is refused with the field named, and nothing is
written; a symlink that stays inside is followed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ouro.arc import claims
from ouro.bundle import Bundle
from ouro.desk.tasks import add_task, update_task
from ouro.desk.tracks import add_track
from ouro.errors import InvalidInput
from tests.conftest import ouro_json, run_ouro, snapshot


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Bundle, Path]:
    """A repository holding the bundle, with symlinks that leave it."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("A = 1\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the project's\n")
    (root / "out-file").symlink_to(outside / "secret.txt")
    (root / "out-dir").symlink_to(outside)
    (root / "in-link").symlink_to(root / "src" / "app.py")
    bundle = Bundle.init(root / "agent.ouro", agent="tester")
    (bundle.desk / "evil").symlink_to(outside / "secret.txt")
    add_track(bundle, "ops")
    return bundle, outside


ESCAPES = [
    ("out-file", "outside the repository root"),
    ("out-dir/secret.txt", "outside the repository root"),
    ("out-dir", "outside the repository root"),
    ("desk/evil", "outside the bundle"),
    ("../elsewhere/secret.txt", "'..' segment"),
    ("src/../../elsewhere/secret.txt", "'..' segment"),
]


def test_a_claim_about_ref_that_leaves_is_refused(repo: tuple[Bundle, Path]) -> None:
    bundle, _ = repo
    before = snapshot(bundle.root)
    for ref, said in ESCAPES:
        proc = run_ouro("claim", "add", "it holds", "--about", ref, bundle=bundle)
        assert proc.returncode == 2, (ref, proc.stdout)
        assert "about:" in proc.stderr and said in proc.stderr, (ref, proc.stderr)
        with pytest.raises(InvalidInput, match="about:"):
            claims.add_claim(bundle, "it holds", about=["src/app.py", ref])
    assert snapshot(bundle.root) == before


def test_a_task_about_ref_follows_the_same_rule(repo: tuple[Bundle, Path]) -> None:
    bundle, _ = repo
    task = add_task(bundle, "ops", "fix it", about=["src/app.py"])
    before = snapshot(bundle.root)
    for ref, said in ESCAPES:
        added = run_ouro("desk", "task", "add", "ops", "other", "--about", ref, bundle=bundle)
        assert added.returncode == 2, (ref, added.stdout)
        assert "about:" in added.stderr and said in added.stderr, (ref, added.stderr)
        with pytest.raises(InvalidInput, match="about:"):
            update_task(bundle, task.id, about=[ref])
    assert snapshot(bundle.root) == before


def test_a_claim_with_its_own_repo_is_confined_to_that_repo(
    repo: tuple[Bundle, Path], tmp_path: Path
) -> None:
    bundle, outside = repo
    other = tmp_path / "other"
    other.mkdir()
    (other / "leak").symlink_to(outside / "secret.txt")
    with pytest.raises(InvalidInput, match=f"outside the repository root {other}"):
        claims.add_claim(bundle, "x", about=["leak"], repo=str(other))


def test_refs_that_stay_inside_are_accepted(repo: tuple[Bundle, Path]) -> None:
    bundle, _ = repo
    claim = ouro_json(
        "claim",
        "add",
        "app is one",
        "--about",
        "in-link",
        "--about",
        "src/app.py",
        "--about",
        "src/not-yet.py",
        bundle=bundle,
    )
    assert claim["about"] == ["in-link", "src/app.py", "src/not-yet.py"]
    task = ouro_json("desk", "task", "add", "ops", "t", "--about", "in-link", bundle=bundle)
    assert task["task"]["about"] == ["in-link"]
