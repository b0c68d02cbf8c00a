"""Journal triage in ``ouro migrate``: routes, the review file, the report, the backup of
merge targets, and a user-edited plan honoured entry by entry (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.desk.tasks import iter_tasks
from ouro.errors import InvalidInput
from ouro.migrate import triage
from ouro.migrate.engine import migrate
from ouro.store.jsonl import read_jsonl
from tests.conftest import run_ouro
from tests.migrate_helpers import copy_example, report, snap, tree

# The example's journal, triaged by the documented rules.
EXPECTED_ROUTES = {
    "task": {"entries": 3, "bytes": 266, "rules": {"open-checklist": 2, "todo-line": 1}},
    "facts": {"entries": 2, "bytes": 285, "rules": {"fact-marker": 2}},
    "note": {"entries": 3, "bytes": 945, "rules": {"reference-prose": 2, "titled": 1}},
    "drop": {"entries": 12, "bytes": 854, "rules": {"empty": 1, "log-like": 10, "scratch": 1}},
}


@pytest.fixture
def example(tmp_path: Path) -> Path:
    return copy_example(tmp_path / "example.ouro")


def _entry_lines(root: Path) -> list[dict[str, Any]]:
    return [r for r in report(root) if "route" in r]


def _journal_text_files(root: Path) -> dict[str, bytes]:
    return {
        p: b
        for p, b in tree(root, "journal").items()
        if p.endswith((".md", ".txt")) and not b.startswith(b"->") and "broken" not in p
    }


def test_entries_partition_every_byte_of_a_file() -> None:
    data = (
        b"# Notebook\n\n## 2025-01-20 a\n\nx\n\n## 2025-01-20 again\n\ny\n"
        b"### 2025-01-21\n- [ ] z\n\xc3\xa9"
    )
    entries = triage.split_entries("journal/n.md", data)
    assert [e.locator for e in entries] == [
        "journal/n.md#2025-01-20",
        "journal/n.md#2025-01-20-2",
        "journal/n.md#2025-01-21",
    ]
    assert b"".join(data[e.start : e.end] for e in entries) == data
    assert [e.text.encode() for e in entries] == [data[e.start : e.end] for e in entries]
    assert entries[0].title == "2025-01-20 a"
    # One dated heading, or front matter: the whole file is one entry.
    one = triage.split_entries("journal/d.md", b"# 2025-01-07\n\nhello\n")
    assert [(e.locator, e.whole) for e in one] == [("journal/d.md", True)]


@pytest.mark.parametrize(
    ("body", "meta", "rule"),
    [
        ("# 2025-01-01\n\n", {}, "empty"),
        ("Scratch: maybe TODO this?\n- [ ] or not\n", {}, "scratch"),
        ("Plan.\n- [x] done\n- [ ] open item\n", {}, "open-checklist"),
        ("todo: call the bank\n", {}, "todo-line"),
        ("Next: book the room\n", {}, "todo-line"),
        ("- Learned: caches lie\n- Decided: no caches\n", {}, "fact-marker"),
        ("Learned a lot. " + "word " * 300 + "\n", {}, "reference-prose"),
        ("short\n", {"title": "Retro"}, "titled"),
        ("word " * 60 + "\n", {}, "reference-prose"),
        ("Quiet day.\n", {}, "log-like"),
    ],
)
def test_rules_fire_in_documented_order(body: str, meta: dict[str, Any], rule: str) -> None:
    assert triage.classify(body, meta) == rule
    assert triage.RULE_ROUTE[rule] in triage.ROUTES


def test_example_counts_per_route_report_and_second_run(example: Path) -> None:
    journal = _journal_text_files(example)
    desk_facts_before = (example / "desk/_record/diary/facts.jsonl").read_bytes()
    entities_before = (example / "desk/_record/diary/entities.json").read_bytes()
    day_before = (example / "desk/_record/diary/daily/2025-01-06.md").read_bytes()
    meta_before = (example / "bundle.json").read_bytes()
    proc = run_ouro("--bundle", str(example), "migrate", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["triage"]["routes"] == EXPECTED_ROUTES
    assert result["triage"]["facts"] == {"deduplicated": 1, "merged": 3, "near-duplicate": 1}

    # The report: one line per entry, naming route and rule; per file the bytes add up.
    lines = _entry_lines(example)
    by_file: dict[str, int] = {}
    for line in lines:
        by_file[line["source"]] = by_file.get(line["source"], 0) + line["bytes"]
        assert line["rule"] in triage.RULE_ROUTE
        assert triage.RULE_ROUTE[line["rule"]] == line["route"]
    assert by_file == {p: len(b) for p, b in journal.items()}
    per_route: dict[str, list[int]] = {}
    for line in lines:
        slot = per_route.setdefault(line["route"], [0, 0])
        slot[0] += 1
        slot[1] += line["bytes"]
    assert per_route == {r: [v["entries"], v["bytes"]] for r, v in EXPECTED_ROUTES.items()}

    # Dropped entries: listed with their bytes, kept in the verified backup.
    backup = example / result["backup"]
    for line in lines:
        if line["route"] == "drop":
            assert line["action"] == "dropped"
            assert line["destination"] == f"{result['backup']}/{line['source']}"
            assert (backup / line["source"]).read_bytes() == journal[line["source"]]

    # Tasks: in the journal-import track, with the source locator, body untouched.
    tasks = iter_tasks(Bundle.open(example), track="journal-import").tasks
    assert sorted(t.meta["title"] for t in tasks) == [
        "Draft the lantern launch email",
        "Write the rollback runbook for harbor",
        "rotate the staging credentials before Friday",
    ]
    runbook = next(t for t in tasks if t.meta["title"].startswith("Write"))
    assert runbook.meta["source"] == "journal/2025-01-17.md"
    assert runbook.meta["status"] == "open"
    assert "- [ ] Ask Dana to review the DNS change" in runbook.body
    email = next(t for t in tasks if t.meta["title"].startswith("Draft"))
    assert email.meta["source"] == "journal/notebook.md#2025-01-22"

    # Facts: trust migrated, source = the journal line; duplicates not written twice.
    facts = read_jsonl(example / "desk/_record/diary/facts.jsonl").records
    from_journal = [f for f in facts if str(f["source"]).startswith("journal/")]
    assert sorted(f["source"] for f in from_journal) == [
        "journal/2025-01-19.md:3",
        "journal/2025-01-19.md:5",
        "journal/notebook.md:17",
    ]
    assert {f["provenance"]["trust"] for f in from_journal} == {"migrated"}
    assert {f["provenance"]["tool"] for f in from_journal} == {"migrate"}
    assert sum(1 for f in facts if "lantern beta opens in march" in f["text"].lower()) == 1
    fact_entry = next(r for r in lines if r["entry"] == "journal/2025-01-19.md")
    fates = {f["line"]: f["action"] for f in fact_entry["facts"]}
    assert fates == {
        "journal/2025-01-19.md:3": "merged",
        "journal/2025-01-19.md:4": "deduplicated",
        "journal/2025-01-19.md:5": "merged",
        "journal/2025-01-19.md:6": "near-duplicate",
    }

    # Notes keep the original title.
    notes = example / "desk/_record/notes"
    assert "title: How the deploy pipeline works" in (notes / "deploy-pipeline.md").read_text()
    assert (
        "title: 2025-01-20 Cache design for harbor"
        in (notes / "notebook-2025-01-20.md").read_text()
    )
    assert "title: Q1 retro" in (notes / "2025-retro-q1.md").read_text()

    # The backup covers the merge targets as they were before the run.
    assert (backup / "desk/_record/diary/facts.jsonl").read_bytes() == desk_facts_before
    assert (backup / "desk/_record/diary/entities.json").read_bytes() == entities_before
    assert (backup / "desk/_record/diary/daily/2025-01-06.md").read_bytes() == day_before
    assert (backup / "bundle.json").read_bytes() == meta_before
    manifest = orjson.loads((backup / "MANIFEST.json").read_bytes())
    assert "desk/_record/diary/facts.jsonl" in {t["path"] for t in manifest["targets"]}

    # A second run changes nothing.
    before = snap(example)
    again = run_ouro("--bundle", str(example), "migrate", "--yes", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["status"] == "nothing"
    after = snap(example)
    for s in (before, after):
        s.pop("state/locks/migrate.lock", None)
    assert after == before


def _write_plan(root: Path, path: Path) -> dict[str, Any]:
    before = snap(root)
    proc = run_ouro("--bundle", str(root), "migrate", "--dry-run", "--plan", str(path))
    assert proc.returncode == 0, proc.stderr
    assert snap(root) == before  # the dry run writes nothing in the bundle
    doc: dict[str, Any] = orjson.loads(path.read_bytes())
    return doc


def test_user_edited_plan_is_honoured_entry_by_entry(example: Path, tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    doc = _write_plan(example, plan_path)
    assert {e["route"] for e in doc["entries"]} == set(triage.ROUTES)
    assert len(doc["entries"]) == 20
    # Give every entry another route than the proposed one.
    turn = {"drop": "note", "note": "task", "task": "facts", "facts": "drop"}
    chosen: dict[str, str] = {}
    for entry in doc["entries"]:
        route = turn[entry["proposed"]]
        if entry["rule"] == "empty":
            route = "task"  # an empty entry has no line to file as a fact either way
        entry["route"] = chosen[entry["entry"]] = route
    plan_path.write_bytes(orjson.dumps(doc))
    proc = run_ouro(
        "--bundle", str(example), "migrate", "--yes", "--plan", str(plan_path), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    lines = {r["entry"]: r for r in _entry_lines(example)}
    assert set(lines) == set(chosen)
    for loc, route in chosen.items():
        line = lines[loc]
        assert line["route"] == route, loc
        assert line["rule"] == "plan"
        assert str(plan_path) in line["why"]
        dest = str(line["destination"])
        if route == "task":
            assert dest.startswith("desk/journal-import/") and dest.endswith("/task.md")
            assert f"source: {loc}" in (example / dest).read_text()
        elif route == "note":
            assert dest.startswith("desk/_record/notes/")
            assert f"source: {loc}" in (example / dest).read_text()
        elif route == "facts":
            assert dest == "desk/_record/diary/facts.jsonl"
            assert line["facts"]
        else:
            assert line["action"] == "dropped"
    facts = read_jsonl(example / "desk/_record/diary/facts.jsonl").records
    assert any(f["source"] == "journal/2025-01-17.md:3" for f in facts)  # was a task
    assert not any(f["source"].startswith("journal/2025-01-19.md") for f in facts)  # dropped


def test_bad_plan_is_refused_naming_the_entry_and_nothing_is_written(
    example: Path, tmp_path: Path
) -> None:
    plan_path = tmp_path / "plan.json"
    doc = _write_plan(example, plan_path)
    before = snap(example)

    def refused(edit: dict[str, Any], *needles: str) -> None:
        plan_path.write_bytes(orjson.dumps(edit))
        proc = run_ouro("--bundle", str(example), "migrate", "--yes", "--plan", str(plan_path))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        for needle in needles:
            assert needle in proc.stderr, proc.stderr
        assert snap(example) == before

    bad = json.loads(json.dumps(doc))
    bad["entries"][3]["route"] = "tsak"
    refused(bad, "entries[3]", bad["entries"][3]["entry"], "'tsak'")
    unknown = json.loads(json.dumps(doc))
    unknown["entries"][0]["entry"] = "journal/nope.md"
    refused(unknown, "journal/nope.md")
    empty_as_facts = json.loads(json.dumps(doc))
    for entry in empty_as_facts["entries"]:
        if entry["rule"] == "empty":
            entry["route"] = "facts"
    refused(empty_as_facts, "journal/2025-01-24.md", "no lines to file as facts")
    refused({"kind": "something else"}, "not a journal routes file")
    # The unedited file applies as proposed.
    plan_path.write_bytes(orjson.dumps(doc))
    assert migrate(example, plan_file=plan_path)["triage"]["routes"] == EXPECTED_ROUTES


def test_report_accounts_for_every_byte_of_every_legacy_file(example: Path) -> None:
    before = tree(example, "journal", "diary", "notes")
    result = migrate(example)
    removed = {r["source"]: r for r in report(example) if r["action"] == "removed"}
    assert set(removed) == set(before)
    for path, line in removed.items():
        size = len(before[path]) if not before[path].startswith(b"->") else line["bytes"]
        assert line["bytes"] == size, path
        assert sum(line["placed"].values()) == size, (path, line["placed"])
    acc = result["accounting"]
    assert acc["unaccounted"] == []
    assert acc["files"] == len(before)
    assert sum(acc["byAction"].values()) == acc["bytes"]
    assert acc["byAction"]["dropped"] == EXPECTED_ROUTES["drop"]["bytes"]


def test_dry_run_keeps_the_edits_of_an_existing_plan_file(example: Path, tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    doc = _write_plan(example, plan_path)
    target = next(e for e in doc["entries"] if e["entry"] == "journal/deploy-pipeline.md")
    target["route"] = "drop"
    plan_path.write_bytes(orjson.dumps(doc))
    again = _write_plan(example, plan_path)  # a second dry run over the edited file
    routes = {e["entry"]: e["route"] for e in again["entries"]}
    assert routes["journal/deploy-pipeline.md"] == "drop"
    assert sum(1 for e in again["entries"] if e["route"] != e["proposed"]) == 1
    # A file that is not a routes file is refused, not overwritten.
    plan_path.write_bytes(b"my notes")
    proc = run_ouro("--bundle", str(example), "migrate", "--dry-run", "--plan", str(plan_path))
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    assert plan_path.read_bytes() == b"my notes"


def test_fact_lines_below_front_matter_name_their_file_line(example: Path) -> None:
    (example / "journal/decisions.md").write_text(
        "---\ntags: [work]\n---\n# Decisions\n\n- Decided: the kiln API keeps v1 until June.\n",
        encoding="utf-8",
    )
    migrate(example)
    facts = read_jsonl(example / "desk/_record/diary/facts.jsonl").records
    fact = next(f for f in facts if str(f["source"]).startswith("journal/decisions.md"))
    assert fact["source"] == "journal/decisions.md:6"
    assert fact["text"] == "the kiln API keeps v1 until June."


def test_interrupted_run_with_an_edited_plan_resumes_with_it(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.migrate import engine

    plan_path = tmp_path / "plan.json"
    doc = _write_plan(example, plan_path)
    for entry in doc["entries"]:
        if entry["entry"] == "journal/deploy-pipeline.md":
            entry["route"] = "task"
    plan_path.write_bytes(orjson.dumps(doc))
    real = engine._advance

    def advance(files: Any, state: Any, phase: str) -> None:
        real(files, state, phase)
        if phase == "applied":
            raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_advance", advance)
    with pytest.raises(KeyboardInterrupt):
        migrate(example, plan_file=plan_path)
    monkeypatch.setattr(engine, "_advance", real)
    # Another edit than the interrupted run's is refused; the run's own plan finishes.
    other = tmp_path / "other.json"
    doc["entries"][0]["route"] = "note"
    other.write_bytes(orjson.dumps(doc))
    with pytest.raises(InvalidInput, match="interrupted run"):
        migrate(example, plan_file=other)
    result = migrate(example, plan_file=plan_path)
    assert result["resumed"] is True
    line = next(r for r in _entry_lines(example) if r["entry"] == "journal/deploy-pipeline.md")
    assert (line["route"], line["rule"]) == ("task", "plan")
    assert "How the deploy pipeline works" in (example / str(line["destination"])).read_text()
