"""The packet carries the record the work points at (issue 28, measured 3).

Measured: an ask made with ``--ref desk/_record/diary/facts.jsonl#f-…`` showed
the locator, not the fact; nothing in ouro was called a lesson; open and ready
tasks disappeared from the packet while an ask existed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.orient import build_packet

SECRET = "sk-live-" + "abcdefghijklmnopqrstuvwx"
#: ouro.desk.record_orientation's section, priority and text cut (spelled out: the
#: test must run, and fail, on code that has no such module)
SECTION = "Record: what the ask points at"
PRIORITY = 8
TEXT = 400


def _fact(bundle: Bundle, text: str) -> str:
    out = invoke("diary_write", bundle, {"text": text, "about": ["parser"], "force": True})
    return str(out["locator"])


def _note(bundle: Bundle, title: str, body: str) -> str:
    return str(invoke("notes_write", bundle, {"title": title, "body": body})["locator"])


def test_the_packet_shows_the_fact_note_and_lesson_an_ask_points_at(bundle: Bundle) -> None:
    fact = _fact(bundle, f"the staging key is {SECRET}, rotate it monthly")
    note = _note(bundle, "Parser notes", "Use the Pratt loop for precedence.\n\nDetails.")
    lesson = invoke("desk_tip_add", bundle, {"title": "Run pytest with -x", "body": "stop early"})
    invoke("arc_ask", bundle, {"text": "fix the parser", "refs": [fact, note]})
    invoke("arc_next", bundle, {"text": "read the notes", "refs": [lesson["locator"], fact]})
    packet = build_packet(bundle)
    text = packet.text
    assert f"## {SECTION}" in text
    assert "fact f-" in text and "rotate it monthly" in text and "(about parser)" in text
    assert SECRET not in text and "[redacted:" in text  # the fact as written, redacted
    assert "note Parser notes: Use the Pratt loop for precedence. Details." in text
    assert "lesson Run pytest with -x: stop early" in text
    assert text.count("rotate it monthly") == 1  # a ref named twice is shown once


def test_a_superseded_or_missing_fact_is_said(bundle: Bundle) -> None:
    old = _fact(bundle, "the parser is recursive descent")
    fid = old.split("#")[1]
    newer = invoke(
        "diary_write",
        bundle,
        {"text": "the parser is Pratt", "about": ["parser"], "supersedes": fid},
    )
    invoke("arc_ask", bundle, {"text": "check the parser", "refs": [old]})
    text = build_packet(bundle).text
    assert f"superseded by {newer['fact']['id']}" in text
    facts = bundle.root / "desk/_record/diary/facts.jsonl"
    facts.write_text("")  # the fact is gone from the file (edited by hand)
    assert f"fact {fid}: not in facts.jsonl any more" in build_packet(bundle).text


def test_the_record_is_dropped_before_any_arc_item(bundle: Bundle) -> None:
    refs = [_fact(bundle, f"fact number {n} " + "detail " * 60) for n in range(4)]
    invoke("arc_ask", bundle, {"text": "use the facts", "refs": refs})
    invoke("arc_next", bundle, {"text": "read them"})
    full = build_packet(bundle, budget=20_000)
    record = [i for i in full.items if i.section == SECTION]
    assert len(record) == 4 and all(i.priority == PRIORITY for i in record)
    tight = build_packet(bundle, budget=len(full.text) - 100)  # one record line too many
    assert tight.dropped.get(SECTION, 0) == 1
    others = {k: v for k, v in tight.dropped.items() if k != SECTION}
    assert others == {}, others  # nothing else went while record lines were dropped
    assert "+" in tight.text and "`ouro arc query doing`" in tight.text


_words = st.text(alphabet="abcdefghijklmnop qrstuvwxyz", min_size=3, max_size=300).filter(
    lambda t: t.strip() != ""
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    facts=st.lists(st.tuples(_words, st.booleans()), min_size=1, max_size=4),
    notes=st.lists(st.tuples(_words, st.booleans()), min_size=0, max_size=3),
    pick=st.data(),
    budget=st.integers(min_value=1200, max_value=6000),
)
def test_random_asks_with_refs_show_the_records_text_within_budget_redacted(
    facts: list[tuple[str, bool]],
    notes: list[tuple[str, bool]],
    pick: st.DataObject,
    budget: int,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Bundle.init(Path(tmp) / "p.ouro", agent="p")
        texts: dict[str, str] = {}
        for n, (words, secret) in enumerate(facts):
            text = f"fact {n} {words}" + (f" key {SECRET}" if secret else "")
            texts[_fact(bundle, text)] = text
        for n, (words, secret) in enumerate(notes):
            body = f"note body {n} {words}" + (f" token {SECRET}" if secret else "")
            texts[_note(bundle, f"note {n}", body)] = body
        refs = list(texts)
        ask_refs = pick.draw(st.lists(st.sampled_from(refs), min_size=1, max_size=4))
        next_refs = pick.draw(st.lists(st.sampled_from(refs), max_size=3))
        invoke("arc_ask", bundle, {"text": "work on it", "refs": ask_refs})
        invoke("arc_next", bundle, {"text": "go on", "refs": next_refs})
        packet = build_packet(bundle, budget=budget)
        assert len(packet.text) <= budget
        assert SECRET not in packet.text
        shown = {i.locator for i in packet.items if i.section == SECTION}
        wanted = list(dict.fromkeys([*ask_refs, *next_refs]))
        lost = packet.dropped.get(SECTION, 0)
        assert len(shown) + lost == len(wanted)
        for ref in shown:
            start = " ".join(texts[ref].split())[: TEXT // 2].replace(SECRET, "")
            first_words = start.split(" [redacted")[0][:40]
            assert first_words in packet.text, (ref, first_words)
        if lost:  # the record goes first: no Arc section lost anything meanwhile
            arc = ("status", "ask", "next safe action", "gaps", "obligations", "claims")
            assert not any(packet.dropped.get(name) for name in arc), packet.dropped


def test_featured_notes_and_lessons_are_listed_and_lessons_are_searchable(bundle: Bundle) -> None:
    from ouro.errors import NotFound
    from tests.conftest import ouro_json, run_ouro

    note = _note(bundle, "Release checklist", "tag, build, publish")
    lesson = invoke("desk_tip_add", bundle, {"title": "Pin the SDK version", "body": "it broke"})
    invoke("desk_tip_add", bundle, {"title": "Read the log first", "body": "saves time"})
    out = ouro_json(
        "desk", "feature", "--note", "release-checklist", "--lesson", lesson["locator"],
        bundle=bundle,
    )  # fmt: skip
    assert out["featured"]["notes"] == ["release-checklist"]
    assert out["featured"]["lessons"] == ["pin-the-sdk-version"]
    with pytest.raises(NotFound, match="no note"):
        invoke("desk_feature", bundle, {"notes": ["no-such-note"]})
    text = build_packet(bundle).text
    assert f"- note Release checklist  [{note}]" in text
    assert f"- lesson Pin the SDK version  [{lesson['locator']}]" in text
    assert "## Desk: lessons" in text and "Read the log first" in text
    # desk_search covers lessons under that name
    found = ouro_json("desk", "search", "SDK", "--kind", "lesson", bundle=bundle)["results"]
    assert [(r["kind"], r["locator"]) for r in found] == [("lesson", lesson["locator"])]
    every = ouro_json("desk", "search", "first", bundle=bundle)["results"]
    assert {r["kind"] for r in every} == {"lesson"}
    assert run_ouro("desk", "search", "x", "--kind", "lessons", bundle=bundle).returncode == 2


def test_the_spelled_out_constants_are_the_modules() -> None:
    from ouro.desk import record_orientation as ro

    assert (ro.SECTION, ro.PRIORITY, ro.TEXT) == (SECTION, PRIORITY, TEXT)
