from __future__ import annotations

import os
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.errors import InvalidLocator
from ouro.store.locator import Locator


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/etc/passwd",
        "../outside",
        "desk/../../x",
        "desk/./x",
        "desk//x",
        "desk/x\x00.md",
        "desk\\x.md",
        "C:/x",
        "desk/x.jsonl#",
    ],
)
def test_bad_locators_are_refused(text: str) -> None:
    with pytest.raises(InvalidLocator) as info:
        Locator.parse(text)
    assert info.value.hint


def test_parse_and_format_round_trip() -> None:
    loc = Locator.parse("desk/_record/diary/facts.jsonl#f-01")
    assert loc.path == "desk/_record/diary/facts.jsonl" and loc.fragment == "f-01"
    assert str(loc) == "desk/_record/diary/facts.jsonl#f-01"
    assert str(Locator.parse("desk/a/b/task.md")) == "desk/a/b/task.md"


def test_symlink_escape_is_refused(bundle: Bundle, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    os.symlink(outside, bundle.desk / "link")
    with pytest.raises(InvalidLocator, match="outside the bundle"):
        bundle.path("desk/link/secret.md")
    # a symlink that stays inside is fine
    os.symlink(bundle.desk / "_meta", bundle.desk / "inside")
    assert (
        bundle.path("desk/inside/featured.md") == (bundle.desk / "_meta" / "featured.md").resolve()
    )


def test_locator_for_path(bundle: Bundle) -> None:
    path = bundle.record / "diary" / "facts.jsonl"
    assert bundle.locator(path, "f-1") == "desk/_record/diary/facts.jsonl#f-1"
    with pytest.raises(InvalidLocator):
        bundle.locator(Path("/tmp"))
