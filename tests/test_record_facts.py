"""Diary facts: line format, duplicates, near-duplicates, supersede, bad lines."""

from __future__ import annotations

import os

import orjson
import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import factnorm, record
from ouro.desk.record import FactDraft
from ouro.errors import Conflict, InvalidInput, NotFound
from tests.conftest import ouro_json, snapshot


def write(bundle: Bundle, text: str, *about: str, **kw: object) -> dict:
    args = {"text": text, "about": list(about), **kw}
    return tools.call("diary_write", bundle, args)


def lines(bundle: Bundle) -> list[dict]:
    return [orjson.loads(x) for x in record.facts_path(bundle).read_bytes().splitlines() if x]


def test_normalization_and_overlap_are_as_documented() -> None:
    assert (
        factnorm.normalize_text("  Ari   PREFERS short replies!! ") == "ari prefers short replies"
    )
    assert factnorm.normalize_text("«Hello», world…") == "hello», world"
    assert factnorm.normalize_entity("  Ari   Smith ") == "ari smith"
    a, b = factnorm.tokens("a b c d e"), factnorm.tokens("a b c d f")
    assert factnorm.overlap(a, b) == 4 / 6
    assert factnorm.overlap(frozenset(), b) == 0.0


def test_fact_line_has_the_documented_shape(bundle: Bundle) -> None:
    out = write(
        bundle,
        "Ari prefers short replies",
        "Ari",
        " ari ",
        source="chat",
        trust="told",
        channel="sms",
        friend="ari",
        friend_name="Ari",
    )
    fact = out["fact"]
    assert out["duplicate"] is False and out["locator"] == f"{record.FACTS_LOCATOR}#{fact['id']}"
    [line] = lines(bundle)
    assert line == fact
    assert list(line) == [
        "schemaVersion",
        "id",
        "text",
        "about",
        "source",
        "createdAt",
        "provenance",
        "hash",
    ]
    assert line["about"] == ["ari"]
    assert line["provenance"] == {
        "tool": "diary_write",
        "channel": "sms",
        "friendId": "ari",
        "friendName": "Ari",
        "trust": "told",
    }
    assert line["hash"] == factnorm.fact_hash("ari prefers short replies")
    entities = record.read_entities(bundle)
    assert entities == {
        "ari": {"count": 1, "factIds": [fact["id"]], "lastSeenAt": fact["createdAt"]}
    }


def test_exact_duplicate_returns_existing_and_writes_nothing(bundle: Bundle) -> None:
    first = write(bundle, "The deploy key rotates monthly", "deploy")
    before = snapshot(bundle.desk)
    again = write(bundle, "  the DEPLOY key rotates   monthly. ", "other")
    assert again["duplicate"] is True and again["fact"] == first["fact"]
    assert snapshot(bundle.desk) == before


def test_near_duplicate_refused_unless_forced(bundle: Bundle) -> None:
    first = write(bundle, "Ari prefers short replies in chat", "ari")
    before = snapshot(bundle.desk)
    with pytest.raises(Conflict) as err:
        write(bundle, "Ari prefers very short replies in chat", "ari")
    assert f"{record.FACTS_LOCATOR}#{first['fact']['id']}" in err.value.message
    assert "--supersedes" in (err.value.hint or "") and "--force" in (err.value.hint or "")
    assert snapshot(bundle.desk) == before
    # the same words about a different entity are not "about the same entity"
    assert write(bundle, "Ari prefers very short replies in chat", "bo")["duplicate"] is False
    forced = write(bundle, "Ari prefers rather short replies in chat", "ari", force=True)
    assert forced["duplicate"] is False and len(lines(bundle)) == 3


def test_overlap_exactly_at_threshold_is_allowed(bundle: Bundle) -> None:
    write(bundle, "alpha beta gamma delta", "x")
    # tokens {alpha,beta,gamma,epsilon}: overlap 3/5 = 0.6, not > 0.6
    assert write(bundle, "alpha beta gamma epsilon", "x")["duplicate"] is False


def test_supersede_retires_the_old_fact_without_rewriting_it(bundle: Bundle) -> None:
    old = write(bundle, "The API limit is 100 requests per minute", "api")["fact"]
    raw_before = record.facts_path(bundle).read_bytes()
    new = write(bundle, "The API limit is 120 requests per minute", "api", supersedes=old["id"])[
        "fact"
    ]
    assert new["supersedes"] == old["id"]
    assert record.facts_path(bundle).read_bytes().startswith(raw_before)
    active, bad = record.active_facts(bundle)
    assert [f["id"] for f in active] == [new["id"]] and bad == []
    assert [f["id"] for f in record.iter_facts(bundle)[0]] == [old["id"], new["id"]]
    with pytest.raises(Conflict, match=f"already superseded by {new['id']}"):
        write(bundle, "The API limit is 130", "api", supersedes=old["id"])
    with pytest.raises(NotFound):
        write(bundle, "Something new", supersedes="f-0000000000000000zz")
    # the retired text may be filed again: it is no longer an active duplicate
    again = write(bundle, "The API limit is 100 requests per minute", "other")
    assert again["duplicate"] is False
    assert record.read_entities(bundle)["api"]["count"] == 2


def test_bad_input_writes_nothing(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    for kw in (
        {"text": ""},
        {"text": "x" * 5000},
        {"text": "ok", "about": [" "]},
        {"text": "ok", "supersedes": "nope"},
        {"text": "a\x00b"},
        {"text": "ok", "trust": "t" * 41},
    ):
        with pytest.raises(InvalidInput):
            tools.call("diary_write", bundle, kw)
    with pytest.raises(InvalidInput):
        tools.call("diary_write", bundle, {"text": "ok", "bogus": 1})
    assert snapshot(bundle.root) == before


def test_batch_is_all_or_nothing_and_byte_identical(bundle: Bundle) -> None:
    drafts = [
        FactDraft(
            "one two three four five",
            about=["a"],
            fact_id=f"f-{'0' * 17}{i}",
            created_at="2026-01-01T00:00:00.000Z",
        )
        for i in range(1, 3)
    ]
    with pytest.raises(Conflict):  # the second is a near-duplicate of the first
        record.append_facts_batch(
            bundle, [drafts[0], FactDraft("one two three four six", about=["a"])]
        )
    assert record.facts_path(bundle).read_bytes() == b""
    batch = record.append_facts_batch(bundle, drafts)
    assert batch.written == 1 and batch.results[1].duplicate is True
    single = Bundle.init(bundle.root.parent / "other.ouro")
    record.write_fact(single, drafts[0])
    assert record.facts_path(single).read_bytes() == record.facts_path(bundle).read_bytes()


def test_malformed_lines_are_reported_and_preserved(bundle: Bundle) -> None:
    write(bundle, "first fact here", "x")
    path = record.facts_path(bundle)
    with path.open("ab") as handle:
        handle.write(b'{"not": "a fact"}\nnot json at all\n')
    out = write(bundle, "second fact entirely different", "x")
    assert len(out["warnings"]) == 2
    assert out["warnings"][0] == (
        f"{record.FACTS_LOCATOR}:2: a fact needs a string id and text; the line is left as it is"
    )
    assert out["warnings"][1].startswith(f"{record.FACTS_LOCATOR}:3: not valid JSON")
    raw = path.read_bytes().splitlines()
    assert raw[1] == b'{"not": "a fact"}' and raw[2] == b"not json at all"
    facts, bad = record.iter_facts(bundle)
    assert len(facts) == 2 and [b.line_no for b in bad] == [2, 3]


def test_outside_append_and_rewrite_are_seen(bundle: Bundle) -> None:
    first = write(bundle, "alpha fact text", "x")["fact"]
    path = record.facts_path(bundle)
    # another tool appends a fact line without ouro
    outside = dict(
        first,
        id="f-0000000000000000zz",
        text="an outside fact",
        hash=factnorm.fact_hash("an outside fact"),
    )
    with path.open("ab") as handle:
        handle.write(orjson.dumps(outside) + b"\n")
    dup = write(bundle, "An outside fact.", "y")
    assert dup["duplicate"] is True and dup["fact"]["id"] == outside["id"]
    # rewrite the file with different bytes of the same length: the state rebuilds
    data = path.read_bytes()
    path.write_bytes(data.replace(b"alpha fact text", b"omega fact text"))
    assert write(bundle, "omega fact text", "z")["duplicate"] is True
    assert write(bundle, "alpha fact text", "z")["duplicate"] is False
    entities = record.read_entities(bundle)
    assert entities["x"]["count"] == 2 and entities["z"]["count"] == 1
    assert "y" not in entities  # the duplicate wrote nothing


def test_entities_heal_after_outside_edit_and_rebuild(bundle: Bundle) -> None:
    write(bundle, "fact one about x", "x")
    ent = record.entities_path(bundle)
    good = ent.read_bytes()
    ent.write_text("{}")
    write(bundle, "something else about y", "y")
    healed = orjson.loads(ent.read_bytes())
    assert set(healed) == {"x", "y"}
    os.utime(ent)
    assert record.rebuild_entities(bundle) == {"entities": 2, "facts": 2}
    assert ent.read_bytes().startswith(good[:-3])


def test_reads_are_pure(bundle: Bundle) -> None:
    write(bundle, "a fact", "x")
    before = snapshot(bundle.root)
    record.iter_facts(bundle)
    record.active_facts(bundle)
    record.read_entities(bundle)
    assert snapshot(bundle.root) == before


def test_cli_diary_write(bundle: Bundle) -> None:
    out = ouro_json(
        "diary",
        "write",
        "CLI fact",
        "--about",
        "Ari",
        "--about",
        "bo",
        "--trust",
        "told",
        "--friend",
        "ari",
        "--friend-name",
        "Ari",
        bundle=bundle,
    )
    assert out["fact"]["about"] == ["ari", "bo"] and out["fact"]["provenance"]["friendId"] == "ari"
    again = ouro_json("diary", "write", "cli fact!", bundle=bundle)
    assert again["duplicate"] is True
    refused = ouro_json("diary", "write", "CLI fact text", "--about", "ari", bundle=bundle)
    assert refused["error"]["type"] == "conflict"
