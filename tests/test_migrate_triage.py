"""Journal triage in ``ouro migrate``: routes, the review file, the report, the backup of
merge targets, and a user-edited plan honoured entry by entry (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouro.bundle import Bundle
from ouro.desk.tasks import iter_tasks
from ouro.errors import InvalidInput
from ouro.index.sync import rebuild
from ouro.migrate import engine as migrate_engine
from ouro.migrate import triage
from ouro.store.jsonl import read_jsonl
from tests.conftest import run_ouro
from tests.migrate_helpers import copy_example, report, snap, tree


def migrate(root: Path, **kwargs: Any) -> dict[str, Any]:
    """The engine as ``ouro migrate`` drives it: the index's rebuild passed in."""
    return migrate_engine.migrate(root, rebuild_index=rebuild, **kwargs)


# The example's journal, triaged by the documented rules.
# journal/2025-01-17.md is one entry with two open items (two tasks) and a done one
# (dropped: it stays in the backup), so it counts under task and under drop.
EXPECTED_ROUTES = {
    "task": {
        "entries": 3,
        "items": 4,
        "bytes": 232,
        "rules": {"open-checklist": 3, "todo-line": 1},
    },
    "facts": {"entries": 2, "items": 2, "bytes": 285, "rules": {"fact-marker": 2}},
    "note": {"entries": 3, "items": 3, "bytes": 945, "rules": {"reference-prose": 2, "titled": 1}},
    "drop": {
        "entries": 13,
        "items": 13,
        "bytes": 888,
        "rules": {"done-item": 1, "empty": 1, "log-like": 10, "scratch": 1},
    },
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

    # The report: one line per entry (per item of a task entry), naming route and rule;
    # per file the bytes add up.
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
    assert per_route == {r: [v["items"], v["bytes"]] for r, v in EXPECTED_ROUTES.items()}

    # Dropped entries: listed with their bytes, kept in the verified backup.
    backup = example / result["backup"]
    for line in lines:
        if line["route"] == "drop":
            assert line["action"] == "dropped"
            assert (line["rule"] == "done-item") == ("item" in line)
            assert line["destination"] == f"{result['backup']}/{line['source']}"
            assert (backup / line["source"]).read_bytes() == journal[line["source"]]

    # Tasks: in the journal-import track, one per open item, with the item's locator;
    # the body is the item's lines, then the entry's context, never its other items.
    tasks = iter_tasks(Bundle.open(example), track="journal-import").tasks
    assert sorted(t.meta["title"] for t in tasks) == [
        "Ask Dana to review the DNS change",
        "Draft the lantern launch email",
        "Write the rollback runbook for harbor",
        "rotate the staging credentials before Friday",
    ]
    runbook = next(t for t in tasks if t.meta["title"].startswith("Write"))
    assert runbook.meta["source"] == "journal/2025-01-17.md:5"
    assert runbook.meta["status"] == "open"
    assert runbook.body.startswith("- [ ] Write the rollback runbook for harbor\n")
    assert "Planning the harbor cutover." in runbook.body
    assert "Ask Dana" not in runbook.body and "maintenance window" not in runbook.body
    email = next(t for t in tasks if t.meta["title"].startswith("Draft"))
    assert email.meta["source"] == "journal/notebook.md:13"
    done = next(r for r in lines if r.get("item") == "journal/2025-01-17.md:6")
    assert (done["action"], done["rule"]) == ("dropped", "done-item")
    assert "Book the maintenance window" in (backup / "journal/2025-01-17.md").read_text()

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


def _one_journal_file(root: Path, name: str, text: str) -> Path:
    """A minimal legacy bundle: bundle.json (layout 1) and one journal file."""
    root.mkdir()
    (root / "bundle.json").write_text('{"schemaVersion": 1, "layoutVersion": 1, "agent": "wren"}')
    (root / "journal").mkdir()
    (root / "journal" / name).write_text(text, encoding="utf-8")
    return root


def test_each_open_item_and_todo_line_is_its_own_task_and_a_done_item_is_never_open_work(
    tmp_path: Path,
) -> None:
    """Issue 26 #11: ``- [ ] a``, ``- [ ] b``, ``- [x] c``, ``TODO: d`` became one open task
    titled "a" whose body held b, c (done) and d."""
    text = "Planning.\n\n- [ ] a\n- [ ] b\n  with a detail line\n- [x] c\nTODO: d\n"
    root = _one_journal_file(tmp_path / "j.ouro", "list.md", text)
    plan_path = tmp_path / "plan.json"
    doc = _write_plan(root, plan_path)
    [entry] = doc["entries"]
    assert entry["route"] == "task"
    assert [(i["line"], i["kind"], i["becomes"]) for i in entry["items"]] == [
        ("journal/list.md:3", "open", "task"),
        ("journal/list.md:4", "open", "task"),
        ("journal/list.md:6", "done", "drop"),
        ("journal/list.md:7", "todo", "task"),
    ]

    result = migrate(root, plan_file=plan_path)
    assert result["accounting"]["unaccounted"] == []
    tasks = {
        t.meta["title"]: t for t in iter_tasks(Bundle.open(root), track="journal-import").tasks
    }
    assert sorted(tasks) == ["a", "b", "d"]
    assert {t.meta["status"] for t in tasks.values()} == {"open"}
    assert {title: t.meta["source"] for title, t in tasks.items()} == {
        "a": "journal/list.md:3",
        "b": "journal/list.md:4",
        "d": "journal/list.md:7",
    }
    assert tasks["b"].body.startswith("- [ ] b\n  with a detail line\n")
    for task in tasks.values():
        assert "Planning." in task.body  # the entry's own text travels with each item
        assert "- [x] c" not in task.body  # finished work never sits inside open work
    item_lines = {"a": "- [ ] a", "b": "- [ ] b", "d": "TODO: d"}
    for title, task in tasks.items():
        assert task.body.startswith(item_lines[title] + "\n")
        others = [line for t, line in item_lines.items() if t != title]
        assert not any(line in task.body for line in others), (title, task.body)

    # The report: one line per task, and the done item's line says where it went.
    lines = _entry_lines(root)
    done = next(r for r in lines if r.get("item") == "journal/list.md:6")
    assert done["action"] == "dropped" and done["route"] == "drop" and done["rule"] == "done-item"
    assert done["destination"] == f"{result['backup']}/journal/list.md"
    assert "done" in done["why"] and "backup" in done["why"]
    assert (root / result["backup"] / "journal/list.md").read_text() == text
    created = sorted(r["item"] for r in lines if r["action"] == "created")
    assert created == ["journal/list.md:3", "journal/list.md:4", "journal/list.md:7"]
    removed = next(r for r in report(root) if r["action"] == "removed")
    assert sum(removed["placed"].values()) == len(text.encode())

    # A second run changes nothing.
    before = snap(root)
    assert migrate(root)["status"] == "nothing"
    after = snap(root)
    for s in (before, after):
        s.pop("state/locks/migrate.lock", None)
    assert after == before


_LINES = st.sampled_from(
    [
        "- [ ] open item <{n}>\n",
        "  - [ ] nested open <{n}>\n",
        "- [x] done item <{n}>\n",
        "* [X] done too <{n}>\n",
        "TODO: call ari <{n}>\n",
        "Next: book the room <{n}>\n",
        "    an indented detail <{n}>\n",
        "plain prose line <{n}>\n",
        "## 2025-03-0{d} heading\n",
        "\n",
        "- [ ]   \n",
        "ünïcode line <{n}>\n",
    ]
)


@given(st.lists(_LINES, min_size=1, max_size=12), st.booleans())
def test_items_cover_every_byte_and_each_task_carries_only_its_own_item(
    lines: list[str], front_matter: bool
) -> None:
    from ouro.migrate.journal_tasks import task_items
    from ouro.migrate.scan import SourceFile

    body = "".join(line.format(n=n, d=n % 9 + 1) for n, line in enumerate(lines))
    text = ("---\ntags: [x]\n---\n" if front_matter else "") + body
    data = text.encode("utf-8")
    src = SourceFile("journal/x.md", "file", len(data), "sha256:0", True, 0)
    taken: set[str] = set()

    def free(pattern: str, slug: str) -> str:
        n = 1
        while pattern.format(slug=f"{slug}-{n}") in taken:
            n += 1
        taken.add(pattern.format(slug=f"{slug}-{n}"))
        return pattern.format(slug=f"{slug}-{n}")

    entries = triage.split_entries("journal/x.md", data)
    placed = 0
    for entry in entries:
        parts = triage.split_items(entry)
        assert b"".join(data[p.start : p.end] for p in parts) == data[entry.start : entry.end]
        items = task_items(
            data,
            src,
            entry,
            {"entry": entry.locator, "route": "task", "rule": "open-checklist"},
            None,
            created="2025-03-01T00:00:00.000Z",
            backup="state/migration/backup-x",
            task_id=lambda loc, created: "t-" + loc,
            free=free,
        )
        placed += sum(i.bytes for i in items)
        work = [p for p in parts if p.kind in ("open", "todo")]
        tasks = [i for i in items if i.action == "created"]
        assert len(tasks) == max(1, len(work))  # one item, one task
        for item in tasks:
            text_of = triage.task_body(data, item.detail["range"], item.detail["context"])
            assert "[x]" not in text_of.lower()  # a done item never sits inside open work
            others = [p for p in work if [p.start, p.end] != item.detail["range"]]
            assert not any(p.text.splitlines()[0] in text_of for p in others), text_of
    assert placed == len(data)  # every byte placed exactly once
