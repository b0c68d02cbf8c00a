"""`ouro index rebuild`: its two phases (the word index, then the vectors),
`--no-vectors`, and the embedding step's progress in bounded steps."""

from __future__ import annotations

import sqlite3

import pytest

from ouro import embedding
from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.index import semantic
from ouro.index.db import db_path
from ouro.index.search import desk_search
from tests.conftest import ouro_json
from tests.index_support import dump_index

needs_model = pytest.mark.skipif(
    not embedding.available(), reason="ouro-bundle[semantic] not installed"
)


def _write(bundle: Bundle) -> None:
    for n, text in enumerate(
        ["webhook secrets rotate every 90 days", "the build uses ruff", "never deploy on fridays"]
    ):
        invoke("diary_write", bundle, {"text": text, "about": [f"e{n}"]})
    invoke("notes_write", bundle, {"title": "Signing keys", "body": "how we change signing keys"})
    invoke("desk_tip_add", bundle, {"title": "Use jq to filter JSON"})


def _vector_rows(bundle: Bundle) -> dict[str, bytes]:
    conn = sqlite3.connect(db_path(bundle.root))
    try:
        return dict(
            conn.execute("SELECT d.locator, v.vec FROM vectors v JOIN docs d ON d.id = v.doc_id")
        )
    finally:
        conn.close()


@needs_model
def test_no_vectors_builds_the_word_index_and_sync_adds_the_same_vectors(bundle: Bundle) -> None:
    _write(bundle)
    full = ouro_json("index", "rebuild", bundle=bundle)
    assert full["semantic"]["state"] == "fresh" and full["semantic"]["embedded"] == 5
    rows, vectors = dump_index(bundle), _vector_rows(bundle)
    hybrid = desk_search(bundle.root, "how often do we change passwords", mode="hybrid")

    words = ouro_json("index", "rebuild", "--no-vectors", bundle=bundle)
    assert words["semantic"] == {"state": "not computed", "missing": 5}
    assert dump_index(bundle) == rows  # the word index is the same
    assert _vector_rows(bundle) == {}  # no vector computed, none left from before

    synced = ouro_json("index", "sync", bundle=bundle)
    assert synced["semantic"]["embedded"] == 5
    assert _vector_rows(bundle) == vectors
    again = desk_search(bundle.root, "how often do we change passwords", mode="hybrid")
    assert again["results"] == hybrid["results"]


@needs_model
def test_embedding_reports_progress_in_bounded_steps(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(bundle)
    ouro_json("index", "rebuild", "--no-vectors", bundle=bundle)
    monkeypatch.setattr(semantic, "BATCH", 1)
    monkeypatch.setattr(semantic, "PROGRESS_STEP", 2)
    calls: list[tuple[int, int]] = []
    out = semantic.embed_bundle(
        bundle.root, progress=lambda done, total: calls.append((done, total))
    )
    assert out is not None and out["embedded"] == 5
    assert calls == [(2, 5), (4, 5), (5, 5)]
    assert len(_vector_rows(bundle)) == 5


@pytest.mark.parametrize(
    "text",
    [
        "plain single-spaced words",
        "",
        " leading space",
        "trailing space ",
        "two  spaces",
        "tab\there",
        "line\nbreak",
        "no-break\xa0space",
        "ideographic\u3000space",
        "separator\u2028line",
        "control\x1cchar",
        "x" * 80,
        "x" * 81,
        "word " * 20,
    ],
)
def test_a_fact_title_is_its_text_on_one_line_cut_at_80(text: str) -> None:
    """``shorten``'s fast path (text returned as it is) gives what the general
    one gives: whitespace runs as one space, trimmed, at most 80 characters."""
    from ouro.index.extract import shorten

    flat = " ".join(text.split())
    assert shorten(text) == (flat if len(flat) <= 80 else flat[:79].rstrip() + "…")


def test_rebuild_loads_fts_with_a_larger_hash_and_leaves_the_default(bundle: Bundle) -> None:
    """A rebuild raises FTS5's pending-terms limit for its load only: the index
    it leaves has the default (1 MB), so later writes flush as before."""
    from ouro.index import sync

    _write(bundle)
    ouro_json("index", "rebuild", "--no-vectors", bundle=bundle)
    conn = sqlite3.connect(db_path(bundle.root))
    config = dict(conn.execute("SELECT k, v FROM docs_fts_config").fetchall())
    conn.close()
    assert config["hashsize"] == sync.FTS_HASHSIZE == 1 << 20
    assert sync.FTS_LOAD_HASHSIZE > sync.FTS_HASHSIZE


@pytest.mark.parametrize(
    "about",
    [[], ["ops"], [" ops"], ["ops "], [""], [None], [1], ["a", "b"], ["a", "a"], "ops", None],
)
def test_a_fact_s_entities_fast_path_reads_as_the_general_one(about: object) -> None:
    """``_about`` returns a one-entity list as it is only when ``_labels`` would."""
    from ouro.index.extract import _about, _labels

    assert _about(about) == _labels(about)
