"""Search: the result shape, filters, hostile queries, purity."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.index.query import to_match
from ouro.index.search import consult_diary, consult_notes, desk_search, search_facts
from ouro.index.sync import sync
from tests.conftest import snapshot
from tests.index_support import append_fact, write_note, write_task

FACTS = "desk/_record/diary/facts.jsonl"


@pytest.fixture
def filled(bundle: Bundle) -> Bundle:
    write_task(bundle, "rel", "parser", "Ship the parser", "Parsers parse release notes.")
    write_task(bundle, "ops", "deploy", "Deploy the parser", "Roll out.", status="done")
    write_note(bundle, "howto", "How the release works", "Deploy on fridays.", ["release"])
    write_note(bundle, "misc", "Misc", "parser trivia", ["other"])
    append_fact(bundle, "f-1", "Ari prefers short replies", ["ari"])
    append_fact(bundle, "f-2", "Ari prefers very short replies", ["ari"], supersedes="f-1",
                created="2026-01-02T00:00:00.000Z")  # fmt: skip
    append_fact(bundle, "f-3", "Bo ships the parser weekly", ["bo"],
                created="2026-01-03T00:00:00.000Z")  # fmt: skip
    sync(bundle)
    return bundle


def test_result_shape_is_exact(filled: Bundle) -> None:
    out = desk_search(filled.root, "ship parser")
    assert set(out) == {"query", "total", "results", "index"}
    assert out["query"] == "ship parser" and out["index"]["state"] == "fresh"
    assert [r["locator"] for r in out["results"]] == [
        "desk/rel/parser/task.md",
        f"{FACTS}#f-3",
    ]
    first = out["results"][0]
    assert set(first) == {"locator", "kind", "title", "snippet", "score", "updated"}
    assert first["kind"] == "task" and first["title"] == "Ship the parser"
    assert "**parser**" in first["snippet"] and first["score"] > out["results"][1]["score"]
    assert first["updated"] == "2026-01-02T00:00:00.000Z"
    assert out["total"] == 2


def test_filters(filled: Bundle) -> None:
    root = filled.root
    assert [r["kind"] for r in desk_search(root, "parser", kinds=["note"])["results"]] == ["note"]
    assert desk_search(root, "parser", track="ops")["results"][0]["locator"] == (
        "desk/ops/deploy/task.md"
    )
    assert [r["locator"] for r in desk_search(root, "parser", status="done")["results"]] == [
        "desk/ops/deploy/task.md"
    ]
    assert desk_search(root, "parser", limit=1)["total"] == 4
    assert len(desk_search(root, "parser", limit=1)["results"]) == 1
    assert consult_notes(root, "deploy", tag="release")["total"] == 1
    assert consult_notes(root, "deploy", tag="other")["total"] == 0
    # superseded facts are hidden unless history
    assert [r["locator"] for r in search_facts(root, "short replies")["results"]] == [
        f"{FACTS}#f-2"
    ]
    assert consult_diary(root, "short", history=True)["total"] == 2
    assert search_facts(root, "replies", about=" ARI ")["total"] == 1
    assert search_facts(root, "ari")["total"] == 1  # entities are searchable
    newest = consult_diary(root)
    assert [r["locator"] for r in newest["results"]] == [f"{FACTS}#f-3", f"{FACTS}#f-2"]
    assert newest["results"][0]["score"] is None and newest["query"] is None
    since = consult_diary(root, since="2026-01-03")
    assert [r["locator"] for r in since["results"]] == [f"{FACTS}#f-3"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("parser timeout", '"parser" "timeout"'),
        ('"release plan" deploy*', '"release plan" "deploy"*'),
        ('"unbalanced quote', '"unbalanced" "quote"'),
        ("title:x NEAR(a b)", '"title x" "NEAR a" "b"'),
        ("AND OR NOT", '"AND" "OR" "NOT"'),
        ("a\x00b", '"a" "b"'),
        ("foo_bar-baz", '"foo bar baz"'),
    ],
)
def test_query_translation(query: str, expected: str) -> None:
    assert to_match(query) == expected


def test_a_blank_query_is_no_query(filled: Bundle) -> None:
    for search_fn in (desk_search, consult_diary, search_facts, consult_notes):
        assert search_fn(filled.root, "  ") == search_fn(filled.root)
        assert search_fn(filled.root)["query"] is None


@pytest.mark.parametrize("query", ["*", '"', "()", "^-+:"])
def test_queries_without_words_get_a_helpful_error(filled: Bundle, query: str) -> None:
    with pytest.raises(InvalidInput, match="no words") as info:
        desk_search(filled.root, query)
    assert "quoted phrases" in (info.value.hint or "")


@pytest.mark.parametrize("query", ["\ud800", "\x00"])
def test_queries_that_are_not_text_are_refused_at_the_edge(filled: Bundle, query: str) -> None:
    with pytest.raises(InvalidInput, match=r"^query: "):
        desk_search(filled.root, query)


HOSTILE = [
    '"unbalanced', "NEAR(", "NEAR(a b", "*", "a*b*", "title:x", "-title:x", "{title body}:x",
    "AND", "OR NOT", "x AND", "x" * 10_000, ("word " * 2000), "a\x00b", "'; DROP TABLE docs;--",
    "^start", "+x", "a:b:c", "((a)", 'x"y"z', "ø*", "日本語", "🙂 parser",
]  # fmt: skip


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_crash(filled: Bundle, query: str) -> None:
    try:
        out = desk_search(filled.root, query)
    except InvalidInput as exc:
        assert exc.hint
    else:
        assert out["total"] >= 0


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=60))
def test_any_text_is_a_safe_query(text: str) -> None:
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('some text')")
    try:
        match = to_match(text)
    except InvalidInput:
        return
    conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone()


def test_search_writes_nothing_outside_state_index(filled: Bundle) -> None:
    write_note(filled, "late", "Late", "written after the last sync")  # forces a sync
    before = {k: v for k, v in snapshot(filled.root).items() if not k.startswith("state/")}
    assert desk_search(filled.root, "late")["total"] == 1
    consult_diary(filled.root)
    after = {k: v for k, v in snapshot(filled.root).items() if not k.startswith("state/")}
    assert after == before
