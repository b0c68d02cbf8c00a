"""Notes and their manifest; daily reflections."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import orjson
import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import daily, notes
from ouro.errors import InvalidInput
from ouro.models.hashing import hash_file
from ouro.store import frontmatter
from tests.conftest import ouro_json, run_ouro, snapshot


def manifest(bundle: Bundle) -> list[dict]:
    return orjson.loads(notes.manifest_path(bundle).read_bytes())["notes"]


def test_note_write_and_update(bundle: Bundle) -> None:
    out = tools.call(
        "notes_write",
        bundle,
        {"title": "How releases work", "body": "Step one.", "tags": ["Release"]},
    )
    path = bundle.root / out["locator"]
    assert out["slug"] == "how-releases-work" and out["created"] is True
    meta, body = frontmatter.parse(path.read_text())
    assert list(meta) == ["title", "tags", "created", "updated"] and body == "Step one.\n"
    assert manifest(bundle) == [
        {
            "slug": "how-releases-work",
            "title": "How releases work",
            "tags": ["release"],
            "updated": meta["updated"],
            "hash": hash_file(path),
        }
    ]
    tools.call("notes_write", bundle, {"title": "A first", "body": "x"})
    again = tools.call("notes_write", bundle, {"title": "How releases work", "body": "Two."})
    assert again["created"] is False and again["note"]["created"] == meta["created"]
    assert [e["slug"] for e in manifest(bundle)] == ["a-first", "how-releases-work"]
    assert manifest(bundle)[1]["hash"] == hash_file(path) and manifest(bundle)[1]["tags"] == []


def test_note_bad_input_writes_nothing(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    for args in (
        {"title": "", "body": "x"},
        {"title": "t", "body": "  "},
        {"title": "!!!", "body": "x"},
    ):
        with pytest.raises(InvalidInput):
            tools.call("notes_write", bundle, args)
    assert snapshot(bundle.root) == before


def test_regenerate_manifest_reports_broken_notes(bundle: Bundle) -> None:
    tools.call("notes_write", bundle, {"title": "Good", "body": "x"})
    broken = notes.notes_dir(bundle) / "broken.md"
    broken.write_text("---\ntitle: [oops\n---\nbody\n")
    notes.manifest_path(bundle).write_text("not json")
    entries, problems = notes.regenerate_manifest(bundle)
    assert [e["slug"] for e in entries] == ["broken", "good"]
    assert entries[0]["title"] is None and "broken.md" in problems[0]
    assert manifest(bundle) == entries
    assert broken.read_text() == "---\ntitle: [oops\n---\nbody\n"


def _note_writer(root: str, n: int) -> None:
    bundle = Bundle(Path(root))
    for i in range(10):
        notes.write_note(bundle, f"note {n} {i}", "body")


def test_concurrent_note_writers_keep_the_manifest_whole(bundle: Bundle) -> None:
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_note_writer, args=(str(bundle.root), n)) for n in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(manifest(bundle)) == 40


def test_cli_notes_from_stdin_and_reflect(bundle: Bundle) -> None:
    out = ouro_json(
        "notes", "write", "Stdin note", "--tag", "x", bundle=bundle, input="from stdin\n"
    )
    assert out["slug"] == "stdin-note"
    assert (bundle.root / out["locator"]).read_text().endswith("---\nfrom stdin\n")
    run_ouro("diary", "reflect", "first thought", bundle=bundle, check=True)
    r = ouro_json("diary", "reflect", "second thought", bundle=bundle)
    text = (bundle.root / r["locator"]).read_text()
    day = r["locator"].rsplit("/", 1)[1][:-3]
    assert text.startswith(f"# {day}\n\n## ")
    assert text.count("\n## ") == 2 and text.endswith("\n\nsecond thought\n")
    assert "first thought\n\n## " in text
    with pytest.raises(InvalidInput):
        daily.reflect(bundle, "   ")
