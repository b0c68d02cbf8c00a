"""``ouro migrate`` on bundles/legacy-example.ouro and friends: accounting,
de-duplication, quarantine, report, idempotence, dry-run purity, both sides kept."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.errors import Conflict
from ouro.index.sync import rebuild
from ouro.migrate import apply as apply_mod
from ouro.migrate import engine as migrate_engine
from ouro.migrate.engine import MigrationIncomplete
from ouro.models.hashing import content_hash
from ouro.store.jsonl import read_jsonl
from tests.conftest import run_ouro
from tests.migrate_helpers import build_legacy, copy_example, normalized, report, snap, tree


def migrate(root: Path, **kwargs: Any) -> dict[str, Any]:
    """The engine as ``ouro migrate`` drives it: the index's rebuild passed in."""
    return migrate_engine.migrate(root, rebuild_index=rebuild, **kwargs)


LEGACY = ("journal", "diary", "notes")


def _facts(root: Path) -> list[dict[str, object]]:
    return read_jsonl(root / "desk/_record/diary/facts.jsonl").records


@pytest.fixture
def example(tmp_path: Path) -> Path:
    return copy_example(tmp_path / "example.ouro")


def test_example_migrates_with_every_byte_accounted(example: Path) -> None:
    before = tree(example, *LEGACY)
    proc = run_ouro("--bundle", str(example), "migrate", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "migrated"
    assert not any(os.path.lexists(example / n) for n in LEGACY)
    assert Bundle.open(example).read_meta()["layoutVersion"] == 2

    # Every legacy entry is in the verified backup, byte for byte.
    backup = example / result["backup"]
    assert tree(backup, *LEGACY) == before
    lines = report(example)
    assert {r["runId"] for r in lines} == {result["runId"]}
    # The report has a "removed" line for every legacy entry and a placing line for each.
    removed = {r["source"] for r in lines if r["action"] == "removed"}
    assert removed == set(before)
    placed = {r["source"].split(":")[0] for r in lines if r["action"] != "removed"}
    assert set(before) <= placed | {"diary/facts.jsonl"}
    for r in lines:
        if r["action"] in ("moved", "quarantined") and r["source"] in before and "route" not in r:
            dest = example / r["destination"]
            if before[r["source"]].startswith(b"->"):
                assert os.readlink(dest).encode() == before[r["source"]][2:]
            elif r["sourceHash"] == r["destinationHash"]:
                assert dest.read_bytes() == before[r["source"]]
            else:  # front matter added around an untouched body
                assert before[r["source"]].split(b"\n---\n")[-1] in dest.read_bytes()


def test_facts_merge_once_with_provenance_and_malformed_lines_quarantined(example: Path) -> None:
    legacy_lines = (example / "diary/facts.jsonl").read_bytes().split(b"\n")
    desk_ids = [f["id"] for f in _facts(example)]
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    facts = _facts(example)
    ids = [f["id"] for f in facts]
    assert len(ids) == len(set(ids))
    assert ids[: len(desk_ids)] == desk_ids  # the Desk side is untouched, first
    hashes = [f["hash"] for f in facts]
    assert len(hashes) == len(set(hashes)), "a duplicate fact was merged twice"
    lines = report(example)
    dups = [r for r in lines if r["action"] == "deduplicated" and ":" in str(r["source"])]
    assert len(dups) == 13
    for dup in dups:
        fid = dup["destination"].split("#")[1]
        assert fid in ids
    migrated = [
        f
        for f in facts
        if f["provenance"]["tool"] == "migrate" and f["source"].startswith("diary/facts.jsonl:")
    ]
    merged = [r for r in lines if r["action"] == "merged" and ":" in str(r["source"])]
    assert len(migrated) == len(merged) == 307
    sample = next(f for f in migrated if f["legacy"].get("id") == "fact_00003")
    assert sample["source"] == "diary/facts.jsonl:3"
    assert sample["about"] == ["dana", "kestrel"]  # "Dana, kestrel" string split and normalized
    assert sample["legacy"]["tags"] == ["legacy"]  # unknown fields are kept
    # Malformed lines: quarantined with their original line numbers and raw bytes.
    quarantine = example / "state/migration/quarantine/diary/facts.malformed.jsonl"
    bad = read_jsonl(quarantine).records
    assert [b["line"] for b in bad] == [42, 92]
    for b in bad:
        raw = b["raw"].encode() if "raw" in b else base64.b64decode(b["rawBase64"])
        assert raw == legacy_lines[b["line"] - 1]
    q = [r for r in lines if r["action"] == "quarantined" and ":" in str(r["source"])]
    assert sorted(r["source"] for r in q) == ["diary/facts.jsonl:42", "diary/facts.jsonl:92"]


def test_entities_conflicts_daily_notes_and_journal(example: Path) -> None:
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    rec = example / "desk/_record"
    entities = orjson.loads((rec / "diary/entities.json").read_bytes())
    facts = _facts(example)
    for name, entry in entities.items():
        assert entry["factIds"] == [f["id"] for f in facts if name in f["about"]]
    conflicts = orjson.loads((rec / "diary/entities.migration-conflicts.json").read_bytes())
    assert sorted(conflicts) == ["ari", "harbor", "kestrel-team"]
    assert "exceeds" in conflicts["ari"][0]["reason"]
    assert conflicts["kestrel-team"][0]["entry"]["factIds"] == ["fact_99999"]
    # Same-day daily file: both texts, joined by a separator, nothing overwritten.
    day = (rec / "diary/daily/2025-01-06.md").read_text()
    assert day.startswith("# 2025-01-06\n\n## 18:00:00Z\n\nWrote the desk note.\n")
    assert "<!-- migrated from diary/daily/2025-01-06.md" in day
    assert day.endswith("Shipped step 1 of the release. Paired with Ari.\n")
    # Name collision: the Desk note stays, the legacy one gets a suffix and a report line.
    assert "1. Freeze" in (rec / "notes/release-checklist.md").read_text()
    assert "(old)" in (rec / "notes/release-checklist-2.md").read_text()
    renamed = [r for r in report(example) if r["source"] == "notes/Release Checklist.md"]
    assert renamed[0]["destination"] == "desk/_record/notes/release-checklist-2.md"
    assert "name taken" in renamed[0]["why"]
    manifest = orjson.loads((rec / "notes/.index.json").read_bytes())["notes"]
    assert {"release-checklist", "release-checklist-2", "people-ari"} <= {
        n["slug"] for n in manifest
    }
    # Journal: reference prose becomes a note with provenance; the rest is quarantined.
    entry = (rec / "notes/deploy-pipeline.md").read_text()
    assert "source: journal/deploy-pipeline.md" in entry and "tool: migrate" in entry
    assert "title: How the deploy pipeline works" in entry
    q = example / "state/migration/quarantine/journal"
    assert (q / "whiteboard.jpg").read_bytes()[:4] == b"\xff\xd8\xff\xe0"
    assert os.readlink(q / "latest.md") == "2025-01-07.md"
    assert (q / "broken-front-matter.md").is_file()


def test_second_run_is_a_noop(example: Path) -> None:
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    before = snap(example)
    proc = run_ouro("--bundle", str(example), "migrate", "--yes")
    assert proc.returncode == 0
    assert "nothing to migrate" in proc.stdout
    after = snap(example)
    after.pop("state/locks/migrate.lock", None)
    before.pop("state/locks/migrate.lock", None)
    assert after == before


def test_dry_run_writes_nothing(example: Path) -> None:
    before = snap(example)
    proc = run_ouro("--bundle", str(example), "migrate", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "notes/Release Checklist.md -> desk/_record/notes/release-checklist-2.md" in proc.stdout
    assert "malformed lines quarantined: 42, 92" in proc.stdout
    data = json.loads(run_ouro("--bundle", str(example), "migrate", "--dry-run", "--json").stdout)
    sources = {i["source"] for i in data["plan"]["items"]}
    assert set(tree(example, *LEGACY)) <= sources
    assert snap(example) == before


def test_without_yes_and_without_a_terminal_it_refuses(example: Path) -> None:
    before = snap(example)
    proc = run_ouro("--bundle", str(example), "migrate")
    assert proc.returncode == 2
    assert "--yes" in proc.stderr
    assert snap(example) == before


def test_other_commands_refuse_the_legacy_bundle(example: Path) -> None:
    proc = run_ouro("--bundle", str(example), "info")
    assert proc.returncode == 3
    assert "ouro migrate" in proc.stderr
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    assert run_ouro("--bundle", str(example), "info").returncode == 0


def test_both_sides_survive(bundle: Bundle, tmp_path: Path) -> None:
    """A current bundle with a populated record gains legacy roots: nothing is lost."""
    legacy = build_legacy(tmp_path / "src", facts=60, notes=5, journal=3, desk=False)
    from ouro.desk.record import FactDraft, append_facts_batch

    append_facts_batch(bundle, [FactDraft(text="The desk side keeps this fact", about=["desk"])])
    (bundle.record / "notes/kestrel-notes-1.md").write_text(
        "---\ntitle: Desk copy\ntags: []\ncreated: x\nupdated: x\n---\nDesk body.\n"
    )
    for name in LEGACY:
        os.rename(legacy / name, bundle.root / name)
    desk_before = tree(bundle.root, "desk")
    migrate(bundle.root)
    facts = _facts(bundle.root)
    assert facts[0]["text"] == "The desk side keeps this fact"
    assert len(facts) > 50
    assert (bundle.record / "notes/kestrel-notes-1.md").read_text().endswith("Desk body.\n")
    assert "Remember" in (bundle.record / "notes/kestrel-notes-1-2.md").read_text()
    entities = orjson.loads((bundle.record / "diary/entities.json").read_bytes())
    assert entities["desk"]["count"] == 1
    for rel, data in desk_before.items():
        if rel.endswith((".jsonl", "entities.json", ".index.json")):
            continue
        assert (bundle.root / rel).read_bytes() == data, rel
    assert (
        (bundle.record / "diary/facts.jsonl")
        .read_bytes()
        .startswith(desk_before["desk/_record/diary/facts.jsonl"])
    )


def test_legacy_bundle_without_bundle_json_or_scaffold(tmp_path: Path) -> None:
    root = build_legacy(tmp_path / "old.ouro", facts=20, notes=2, journal=2, desk=False)
    (root / "bundle.json").unlink()
    proc = run_ouro("migrate", "--yes", env={"OURO_BUNDLE": str(root)})
    assert proc.returncode == 0, proc.stderr
    meta = Bundle.open(root).read_meta()
    assert meta["layoutVersion"] == 2 and meta["agent"] == "old"
    for rel in ("arc/claims/.keep", "desk/_meta/featured.md", "habits/.keep"):
        assert (root / rel).exists(), rel


def test_journal_quarantine_mode(tmp_path: Path) -> None:
    root = build_legacy(tmp_path / "j.ouro", facts=10, notes=1, journal=4, desk=False)
    entries = {k for k in tree(root, "journal")}
    migrate(root, journal="quarantine")
    assert not (root / "desk/_record/notes/journal").exists()
    kept = {k.removeprefix("state/migration/quarantine/") for k in
            tree(root, "state/migration/quarantine/journal")}  # fmt: skip
    assert kept == entries


def test_failed_accounting_removes_nothing_and_names_the_file(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = apply_mod._write_new

    def lossy(root: Path, item: apply_mod.Item, data: bytes) -> None:
        real(root, item, data[:-5] if item.source == "notes/ouro-notes-3.md" else data)

    monkeypatch.setattr(apply_mod, "_write_new", lossy)
    with pytest.raises(MigrationIncomplete) as err:
        migrate(example)
    assert "notes/ouro-notes-3.md" in err.value.message
    assert all((example / n).is_dir() for n in LEGACY)
    # Repair the damage (move the bad copy aside) and re-run: it completes.
    monkeypatch.setattr(apply_mod, "_write_new", real)
    (example / "desk/_record/notes/ouro-notes-3.md").unlink()
    result = migrate(example)
    assert result["status"] == "migrated" and result["resumed"] is True
    assert not any((example / n).exists() for n in LEGACY)


def test_destination_with_other_content_is_never_overwritten(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = apply_mod.backup

    def then_someone_writes(root: Path, plan: apply_mod.Plan, progress: object) -> None:
        real(root, plan, apply_mod._noop)
        (root / "desk/_record/notes/ouro-notes-7.md").write_text("someone else\n")

    monkeypatch.setattr(apply_mod, "backup", then_someone_writes)
    with pytest.raises(Conflict) as err:
        migrate(example)
    assert "desk/_record/notes/ouro-notes-7.md" in err.value.message
    assert (example / "desk/_record/notes/ouro-notes-7.md").read_text() == "someone else\n"
    assert all((example / n).is_dir() for n in LEGACY)


def test_nothing_to_migrate_on_a_current_bundle(bundle: Bundle) -> None:
    before = snap(bundle.root)
    proc = run_ouro("--bundle", str(bundle.root), "migrate", "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["status"] == "nothing"
    assert snap(bundle.root) == before


def test_interrupted_run_equals_uninterrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process variant of the kill test: stop after each phase, resume, compare."""
    reference = copy_example(tmp_path / "ref.ouro")
    migrate(reference)
    expected = normalized(reference)
    from ouro.migrate import engine

    real = engine._advance
    for stop_after in ("backed_up", "applied", "verified", "removed"):
        root = copy_example(tmp_path / f"stop-{stop_after}.ouro")

        def advance(files: object, state: object, phase: str, stop: str = stop_after) -> None:
            real(files, state, phase)  # type: ignore[arg-type]
            if phase == stop:
                raise KeyboardInterrupt

        monkeypatch.setattr(engine, "_advance", advance)
        with pytest.raises(KeyboardInterrupt):
            migrate(root)
        monkeypatch.setattr(engine, "_advance", real)
        assert migrate(root)["resumed"] is True
        assert normalized(root) == expected, stop_after


def test_report_hashes_match_the_bytes(example: Path) -> None:
    before = tree(example, *LEGACY)
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    for r in report(example):
        if r["action"] == "removed":
            assert r["sourceHash"] == content_hash(before[r["source"]].removeprefix(b"->"))
            assert r["bytes"] == len(before[r["source"]].removeprefix(b"->"))


def test_sentinel_desk_record_check_passes_after_migrating(example: Path) -> None:
    from ouro.sentinel.checks import check_desk_record

    assert check_desk_record(Bundle(example)).status == "fail"
    migrate(example)
    check = check_desk_record(Bundle(example))
    assert check.status == "pass", check.detail


def test_clear_temps_removes_only_leftovers_of_that_file(tmp_path: Path) -> None:
    from ouro.migrate.tidy import clear_temps

    folder = tmp_path / "notes"
    folder.mkdir()
    target = folder / ".index.json"
    leftovers = ["..index.json.ab_9x2kq.tmp", "..index.json.4711.tmp", "..index.json.migrate.tmp"]
    kept = [
        ".index.json",
        "..index.json.tmp",  # no middle part
        "..index.json.notes.tmp",  # not a writer's middle part
        "..index.json.ab_9x2kq.txt",
        ".index.json.ab_9x2kq.tmp",  # no leading dot: not a temp name
        ".other.json.ab_9x2kq.tmp",  # another file's leftover
    ]
    for name in leftovers + kept:
        (folder / name).write_bytes(b"x")
    removed = clear_temps(target)
    assert sorted(p.name for p in removed) == sorted(leftovers)
    assert sorted(p.name for p in folder.iterdir()) == sorted(kept)
    assert clear_temps(tmp_path / "missing" / "x.json") == []


def test_a_run_killed_before_recording_itself_leaves_no_run_folder(tmp_path: Path) -> None:
    root = build_legacy(tmp_path / "b.ouro", facts=10, notes=3, journal=2)
    state = root / "state/migration"
    # What a kill between writing the plan and writing current.json leaves, next
    # to a finished earlier run (kept: it has run.json).
    orphan, finished = state / "run-mig-orphan", state / "run-mig-old"
    orphan.mkdir(parents=True)
    (orphan / "plan.json").write_bytes(b"{}")
    (orphan / "facts.staged.jsonl").write_bytes(b"")
    finished.mkdir()
    (finished / "run.json").write_bytes(b"{}")
    (state / ".current.json.k2j4_0aa.tmp").write_bytes(b"{")
    result = migrate(root)
    assert result["status"] == "migrated"
    assert not orphan.exists()
    assert (finished / "run.json").read_bytes() == b"{}"
    assert sorted(p.name for p in state.iterdir()) == sorted(
        ["quarantine", "run-mig-old", f"run-{result['runId']}", result["backup"].split("/")[-1]]
    )


def test_migrated_journal_notes_are_in_the_manifest_and_found_by_consult_notes(
    example: Path,
) -> None:
    run_ouro("--bundle", str(example), "migrate", "--yes", check=True)
    rec = example / "desk/_record"
    manifest = orjson.loads((rec / "notes/.index.json").read_bytes())["notes"]
    assert "deploy-pipeline" in {n["slug"] for n in manifest}
    body = (rec / "notes/deploy-pipeline.md").read_text()
    word = next(w for w in body.split("---")[-1].split() if w.isalpha() and len(w) > 5)
    out = json.loads(
        run_ouro("--bundle", str(example), "notes", "consult", word, "--json", check=True).stdout
    )
    assert any(
        r["locator"].startswith("desk/_record/notes/deploy-pipeline") for r in out["results"]
    )


def test_a_legacy_bundle_json_without_an_agent_migrates_to_one_that_opens(example: Path) -> None:
    meta = json.loads((example / "bundle.json").read_text())
    del meta["agent"]  # an older ouro did not always write it; open now needs it
    (example / "bundle.json").write_text(json.dumps(meta))
    proc = run_ouro("--bundle", str(example), "migrate", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    after = Bundle.open(example).check_meta()
    assert after["agent"] == "example"  # the name ouro init would give the folder
    assert run_ouro("--bundle", str(example), "info").returncode == 0
