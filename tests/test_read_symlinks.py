"""Readers never open a record file or folder behind a symlink leading outside the bundle.

A hostile bundle (a cloned repository) can hold symlinks. Each reader skips a
path that resolves outside, reports it naming the bundle-relative path, and
still answers for everything else; nothing of the outside file (not even a
field name) reaches its output. A symlink that stays inside is read as before.
Every symlink here is a real ``os.symlink``; every outside file lies in
``tmp_path``, outside the bundle.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ouro.arc import stores
from ouro.arc.claims import add_claim
from ouro.arc.obligations import add_obligation
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle

SECRET = "s3cr3tfield"


def _outside_json(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    target = folder / name
    target.write_text(json.dumps({SECRET: "outside-value"}))
    return target


def _said(value: object) -> str:
    return json.dumps(value, default=str)


# --- claims and obligations (ouro.arc.stores) --------------------------------


def test_a_claim_symlink_to_an_outside_file_is_never_opened(bundle: Bundle, tmp_path: Path) -> None:
    kept = add_claim(bundle, "kept claim")["id"]
    read_resume(bundle)  # a cached summary exists before the symlink appears
    link = bundle.arc / "claims" / "cl-evil.json"
    os.symlink(_outside_json(tmp_path, "cl-evil.json"), link)
    for _ in range(2):  # the scan, then the cached summary's fast path
        answer = read_resume(bundle)
        text = _said(answer)
        assert SECRET not in text and "outside-value" not in text
        assert answer["unreadableClaimIds"] == ["cl-evil"]
        assert kept in answer["recentClaimIds"]
        assert (
            "claims: cl-evil unknown (arc/claims/cl-evil.json resolves outside the bundle "
            "through a symlink; it was not read)"
        ) in answer["missing"]
    summary = stores.scan_claims(bundle)
    assert SECRET not in _said(summary)
    assert summary["errors"]["cl-evil"].startswith("arc/claims/cl-evil.json resolves outside")


def test_a_claim_file_swapped_for_an_outside_symlink_drops_its_cached_entry(
    bundle: Bundle, tmp_path: Path
) -> None:
    claim = add_claim(bundle, "moved out")["id"]
    path = bundle.arc / "claims" / f"{claim}.json"
    cached = stores.scan_claims(bundle)
    assert claim in cached["items"]
    # the very same file, moved out and linked back: same stamp, now outside
    target = tmp_path / "outside.json"
    os.replace(path, target)
    os.symlink(target, path)
    summary = stores.refresh_claims(bundle, cached)
    assert claim not in summary["items"]
    assert "resolves outside the bundle through a symlink" in summary["errors"][claim]


def test_a_claims_folder_symlinked_outside_is_unknown(bundle: Bundle, tmp_path: Path) -> None:
    add_claim(bundle, "inside claim")
    outside = tmp_path / "outside-claims"
    os.replace(bundle.arc / "claims", outside)
    (outside / "cl-evil.json").write_text(json.dumps({SECRET: 1}))
    os.symlink(outside, bundle.arc / "claims")
    answer = read_resume(bundle)
    assert SECRET not in _said(answer)
    assert answer["recentClaimIds"] is None  # unknown, never "none"
    assert (
        "claims: unknown (arc/claims resolves outside the bundle through a symlink; "
        "it was not read)"
    ) in answer["missing"]


def test_claim_symlinks_inside_the_bundle_keep_working(bundle: Bundle) -> None:
    claim = add_claim(bundle, "linked inside")["id"]
    path = bundle.arc / "claims" / f"{claim}.json"
    elsewhere = bundle.root / "desk" / "kept.json"
    os.replace(path, elsewhere)
    os.symlink(elsewhere, path)
    answer = read_resume(bundle)
    assert claim in answer["recentClaimIds"]
    assert answer["unreadableClaimIds"] == []


def test_an_obligation_symlink_to_an_outside_file_is_never_opened(
    bundle: Bundle, tmp_path: Path
) -> None:
    kept = add_obligation(bundle, "reply", owed_to="user")["id"]
    folder = bundle.arc / "obligations"
    os.symlink(_outside_json(tmp_path, "ob-evil.json"), folder / "ob-evil.json")
    (folder / "inner").mkdir(exist_ok=True)
    os.symlink(_outside_json(tmp_path, "ob-inner.json"), folder / "inner" / "ob-inner.json")
    summary = stores.scan_obligations(bundle)
    assert SECRET not in _said(summary)
    assert kept in summary["items"]
    assert summary["errors"] == {
        "ob-evil": "arc/obligations/ob-evil.json resolves outside the bundle through a "
        "symlink; it was not read",
        "inner/ob-inner": "arc/obligations/inner/ob-inner.json resolves outside the bundle "
        "through a symlink; it was not read",
    }
    answer = read_resume(bundle)
    assert SECRET not in _said(answer)
    assert sorted(answer["unreadableObligationIds"]) == ["inner/ob-inner", "ob-evil"]


@pytest.mark.parametrize("sub", ["", "inner"])
def test_an_obligations_folder_symlinked_outside_is_unknown(
    bundle: Bundle, tmp_path: Path, sub: str
) -> None:
    outside = tmp_path / "outside-obligations"
    outside.mkdir()
    (outside / "ob-evil.json").write_text(json.dumps({SECRET: 1}))
    folder = bundle.arc / "obligations" / sub if sub else bundle.arc / "obligations"
    if folder.exists():
        os.replace(folder, tmp_path / "aside")
    os.symlink(outside, folder)
    summary = stores.scan_obligations(bundle)
    rel = "arc/obligations" + (f"/{sub}" if sub else "")
    assert summary == {
        "error": f"{rel} resolves outside the bundle through a symlink; it was not read"
    }


# --- notes, the index's document scan (ouro.desk.notes, ouro.index) ----------------

NOTE = "---\ntitle: Leaked\ntags: []\n---\nzebraquartz is the outside word\n"


def _note_bundle(bundle: Bundle, tmp_path: Path) -> Path:
    from ouro.desk.notes import write_note

    write_note(bundle, "Kept note", "giraffeplum stays inside\n")
    target = tmp_path / "outside" / "secret.md"
    target.parent.mkdir(exist_ok=True)
    target.write_text(NOTE)
    return target


@pytest.mark.parametrize("verb", ["sync", "rebuild"])
def test_a_note_symlinked_outside_is_skipped_and_reported_by_the_index(
    bundle: Bundle, tmp_path: Path, verb: str
) -> None:
    from ouro.desk.notes import read_manifest
    from tests.conftest import run_ouro

    target = _note_bundle(bundle, tmp_path)
    os.symlink(target, bundle.record / "notes" / "leak.md")
    proc = run_ouro("index", verb, bundle=bundle)
    assert proc.returncode == 0, proc.stderr
    assert (
        "skipped desk/_record/notes/leak.md:0: resolves outside the bundle through a "
        "symlink; it was not read"
    ) in proc.stdout
    assert "zebraquartz" not in proc.stdout + proc.stderr
    assert [e["slug"] for e in read_manifest(bundle) or []] == ["kept-note"]
    assert "Leaked" not in (bundle.record / "notes" / ".index.json").read_text()
    found = run_ouro("desk", "search", "zebraquartz", "--json", bundle=bundle)
    assert json.loads(found.stdout)["results"] == []
    kept = run_ouro("desk", "search", "giraffeplum", "--json", bundle=bundle)
    assert len(json.loads(kept.stdout)["results"]) == 1


def test_a_note_indexed_then_swapped_for_an_outside_symlink_leaves_the_index(
    bundle: Bundle, tmp_path: Path
) -> None:
    from tests.conftest import run_ouro

    target = _note_bundle(bundle, tmp_path)
    path = bundle.record / "notes" / "kept-note.md"
    run_ouro("index", "sync", bundle=bundle, check=True)
    path.unlink()
    os.symlink(target, path)
    proc = run_ouro("index", "sync", bundle=bundle, check=True)
    assert "skipped desk/_record/notes/kept-note.md:0: resolves outside" in proc.stdout
    for word in ("giraffeplum", "zebraquartz"):
        found = run_ouro("desk", "search", word, "--json", bundle=bundle)
        assert json.loads(found.stdout)["results"] == []


def test_a_folder_touched_through_an_outside_symlink_is_never_indexed(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.index.sync import sync, touch_paths
    from tests.conftest import run_ouro

    sync(bundle)
    track = tmp_path / "outside" / "evil"
    (track / "t1").mkdir(parents=True)
    (track / "track.md").write_text("---\ntitle: Evil\n---\nzebraquartz\n")
    (track / "t1" / "task.md").write_text("---\ntitle: zebraquartz\nstatus: todo\n---\nx\n")
    os.symlink(track, bundle.desk / "evil")
    touch_paths(bundle, [bundle.desk / "evil"])  # a folder walk names these files
    found = run_ouro("desk", "search", "zebraquartz", "--json", bundle=bundle)
    assert json.loads(found.stdout)["results"] == []
    proc = run_ouro("index", "rebuild", bundle=bundle, check=True)
    assert "skipped desk/evil:0: resolves outside the bundle through a symlink" in proc.stdout


def test_note_symlinks_inside_the_bundle_keep_working(bundle: Bundle, tmp_path: Path) -> None:
    from ouro.desk.notes import read_manifest, regenerate_manifest

    _note_bundle(bundle, tmp_path)
    elsewhere = bundle.desk / "kept.md"
    elsewhere.write_text(NOTE)
    os.symlink(elsewhere, bundle.record / "notes" / "linked.md")
    _entries, problems = regenerate_manifest(bundle)
    assert problems == []
    assert [e["slug"] for e in read_manifest(bundle) or []] == ["kept-note", "linked"]


# --- tasks, desk heads, friction, tips, orient ----------------------------------------

DOC = "---\nid: t-zebra\ntitle: zebraquartz\nstatus: open\nzebrafield: 1\n---\nzebraquartz\n"


def _hostile_desk(bundle: Bundle, tmp_path: Path) -> None:
    """A track with a real task, and every desk symlink shape leading outside."""
    from ouro.desk.tasks import add_task
    from ouro.desk.tracks import add_track

    add_track(bundle, "good")
    add_task(bundle, "good", "kept task")
    out = tmp_path / "outside"
    for rel in (
        "evil/track.md",
        "evil/t1/task.md",
        "taskdir/task.md",
        "task.md",
        "fr.md",
        "tip.md",
    ):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(DOC)
    desk = bundle.desk
    os.symlink(out / "evil", desk / "evil")
    os.symlink(out / "taskdir", desk / "good" / "t-evil")
    (desk / "good" / "t-link").mkdir()
    os.symlink(out / "task.md", desk / "good" / "t-link" / "task.md")
    os.symlink(out / "fr.md", desk / "_friction" / "fr-evil.md")
    os.symlink(out / "tip.md", desk / "_meta" / "tips" / "evil.md")


def _reason(rel: str) -> str:
    return f"{rel} resolves outside the bundle through a symlink; it was not read"


TASK_SKIPS = [
    _reason("desk/evil"),
    _reason("desk/good/t-evil"),
    _reason("desk/good/t-link/task.md"),
]


def test_task_listing_skips_and_reports_what_leads_outside(bundle: Bundle, tmp_path: Path) -> None:
    from ouro.desk.tasks import iter_tasks, scan_heads

    _hostile_desk(bundle, tmp_path)
    scan = iter_tasks(bundle)
    assert [t.meta["title"] for t in scan.tasks] == ["kept task"]
    assert scan.problems == TASK_SKIPS
    heads, problems = scan_heads(bundle)
    assert [h.status for h in heads] == ["open"] and problems == TASK_SKIPS


def test_desk_heads_skip_and_report_what_leads_outside_on_every_read(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.desk.heads import read_heads

    _hostile_desk(bundle, tmp_path)
    for _ in range(3):  # the scan, the healed cache, the cache again
        heads, problems = read_heads(bundle)
        assert [h.title for h in heads] == ["kept task"]
        assert problems == TASK_SKIPS


def test_friction_and_tips_skip_and_report_what_leads_outside(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.desk.friction import add_friction, list_friction
    from ouro.desk.tips import add_tip, list_tips

    _hostile_desk(bundle, tmp_path)
    add_friction(bundle, "real friction")
    add_tip(bundle, "real tip")
    items, problems = list_friction(bundle)
    assert [i["title"] for i in items] == ["real friction"]
    assert problems == [_reason("desk/_friction/fr-evil.md")]
    tips, problems = list_tips(bundle)
    assert [t["title"] for t in tips] == ["real tip"]
    assert problems == [_reason("desk/_meta/tips/evil.md")]


def test_orient_and_the_desk_commands_succeed_and_never_show_outside_content(
    bundle: Bundle, tmp_path: Path
) -> None:
    from tests.conftest import run_ouro

    _hostile_desk(bundle, tmp_path)
    for args in (("orient",), ("desk", "task", "list"), ("desk", "ready"),
                 ("desk", "friction", "list"), ("desk", "tip", "list"), ("orient", "--json")):  # fmt: skip
        proc = run_ouro(*args, bundle=bundle)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        said = proc.stdout + proc.stderr
        assert "zebra" not in said, args
    orient = run_ouro("orient", bundle=bundle).stdout
    for rel in ("desk/evil", "desk/good/t-link/task.md", "desk/_friction/fr-evil.md"):
        assert _reason(rel) in orient


def test_desk_symlinks_inside_the_bundle_keep_working(bundle: Bundle) -> None:
    from ouro.desk.heads import read_heads
    from ouro.desk.tasks import add_task, iter_tasks
    from ouro.desk.tracks import add_track

    add_track(bundle, "good")
    add_task(bundle, "good", "linked task")
    real = next(p for p in (bundle.desk / "good").iterdir() if p.is_dir())
    os.replace(real, bundle.desk / "_kept")
    os.symlink(bundle.desk / "_kept", real)
    assert [t.meta["title"] for t in iter_tasks(bundle).tasks] == ["linked task"]
    heads, problems = read_heads(bundle)
    assert [h.title for h in heads] == ["linked task"] and problems == []


# --- the event log -------------------------------------------------------------------


def test_an_event_day_file_symlinked_outside_is_never_folded(
    bundle: Bundle, tmp_path: Path
) -> None:
    add_claim(bundle, "an event today")
    target = tmp_path / "ev.jsonl"
    target.write_text(json.dumps({"id": "ev-zebra", "kind": "agent_note", SECRET: 1}) + "\n")
    os.symlink(target, bundle.arc / "flight-recorder" / "events" / "2026-01-01.jsonl")
    answer = read_resume(bundle)
    assert SECRET not in _said(answer) and "ev-zebra" not in _said(answer)
    assert {
        "code": "events_outside",
        "severity": "degraded",
        "message": _reason("arc/flight-recorder/events/2026-01-01.jsonl"),
    } in answer["recorder"]["issues"]
    assert answer["eventCount"] == 1


# --- claim list, obligation list, the facts log ----------------------------------------


def test_claim_and_obligation_lists_name_an_outside_symlink_unreadable(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.arc.claims import list_claims
    from ouro.arc.obligations import list_obligations

    kept = add_claim(bundle, "kept")["id"]
    owed = add_obligation(bundle, "reply", owed_to="user")["id"]
    os.symlink(_outside_json(tmp_path, "c.json"), bundle.arc / "claims" / "cl-evil.json")
    os.symlink(_outside_json(tmp_path, "o.json"), bundle.arc / "obligations" / "ob-evil.json")
    claims = list_claims(bundle)
    assert [c["id"] for c in claims["claims"]] == [kept]
    assert claims["unreadable"] == [
        {"file": "arc/claims/cl-evil.json", "reason": _reason("arc/claims/cl-evil.json")}
    ]
    obligations = list_obligations(bundle)
    assert [o["id"] for o in obligations["obligations"]] == [owed]
    assert obligations["unreadable"] == [
        {"file": "arc/obligations/ob-evil.json", "reason": _reason("arc/obligations/ob-evil.json")}
    ]
    assert SECRET not in _said(claims) + _said(obligations)


def test_a_facts_log_symlinked_outside_is_never_read(bundle: Bundle, tmp_path: Path) -> None:
    from ouro.desk.record import iter_facts
    from tests.conftest import run_ouro

    facts = bundle.record / "diary" / "facts.jsonl"
    target = tmp_path / "facts.jsonl"
    line = {"id": "f-zebra", "text": "zebraquartz about good", "entities": ["zebraquartz"]}
    target.write_text(json.dumps(line) + "\n")
    facts.unlink(missing_ok=True)
    os.symlink(target, facts)
    found, bad = iter_facts(bundle)
    assert found == [] and [b.reason for b in bad] == [_reason("desk/_record/diary/facts.jsonl")]
    from ouro.desk.record_view import find_fact

    assert find_fact(bundle, "f-zebra") == (None, None)
    proc = run_ouro("index", "sync", bundle=bundle)
    assert proc.returncode == 0, proc.stderr
    assert "skipped desk/_record/diary/facts.jsonl:0: resolves outside" in proc.stdout
    assert "zebra" not in (bundle.record / "diary" / "entities.json").read_text()
    for args in (("diary", "consult", "zebraquartz"), ("desk", "search", "zebraquartz")):
        said = run_ouro(*args, "--json", bundle=bundle).stdout
        assert "f-zebra" not in said, args
    refused = run_ouro("diary", "rebuild-entities", bundle=bundle)
    assert refused.returncode != 0
    assert _reason("desk/_record/diary/facts.jsonl") in refused.stderr


# --- receipts ------------------------------------------------------------------------


def test_receipt_readers_skip_and_report_an_outside_symlink(bundle: Bundle, tmp_path: Path) -> None:
    from ouro.habits.receipt import latest_receipt_for
    from ouro.habits.receipt import receipts_dir as habit_receipts
    from ouro.sentinel import paths as sentinel_paths
    from ouro.sentinel.receipts import prune

    folder = habit_receipts(bundle)
    folder.mkdir(parents=True, exist_ok=True)
    os.symlink(_outside_json(tmp_path, "h.json"), folder / "hr-zzz.json")
    receipt, problems = latest_receipt_for(bundle, "any")
    rel = "arc/flight-recorder/habit-receipts/hr-zzz.json"
    assert receipt is None and problems == [_reason(rel)]
    folder = sentinel_paths.receipts_dir(bundle)
    folder.mkdir(parents=True, exist_ok=True)
    os.symlink(_outside_json(tmp_path, "r.json"), folder / "sr-zzz.json")
    pruned, issues = prune(bundle, 0, set())
    rel = f"{sentinel_paths.RECEIPTS_DIR}/sr-zzz.json"
    assert pruned == [] and issues == [{"locator": rel, "problem": _reason(rel)}]
    assert SECRET not in _said(issues) + _said(problems)


# --- featured list, featured docs, drills ----------------------------------------


def test_a_featured_list_or_doc_symlinked_outside_is_reported_and_orient_answers(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.desk.orientation import _doc_title
    from ouro.orient import build_packet

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.md").write_text(f"---\ntracks: [{SECRET}]\n---\n# Featured\n")
    featured = bundle.desk / "_meta" / "featured.md"
    featured.unlink(missing_ok=True)
    os.symlink(outside / "f.md", featured)
    text = _said(build_packet(bundle).to_json())
    assert SECRET not in text
    assert "desk/_meta/featured.md resolves outside the bundle through a symlink" in text
    (outside / "n.md").write_text(f"---\ntitle: {SECRET}\n---\nbody\n")
    note = bundle.desk / "_record" / "notes" / "n.md"
    os.symlink(outside / "n.md", note)
    assert _doc_title(bundle, "desk/_record/notes/n.md") is None


def test_a_drill_copy_goes_without_a_symlink_leading_outside(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.drills.harness import drill_copy

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.md").write_text("# Featured\n")
    featured = bundle.desk / "_meta" / "featured.md"
    featured.unlink(missing_ok=True)
    os.symlink(outside / "f.md", featured)
    os.symlink("track.md", bundle.desk / "_meta" / "inside.md")  # stays inside: kept
    with drill_copy(bundle) as copy:
        assert not os.path.lexists(copy.desk / "_meta" / "featured.md")
        assert os.path.islink(copy.desk / "_meta" / "inside.md")


# --- the day-log viewers: timeline, sentinel history, their workbench pages ----------


def test_the_day_log_viewers_name_an_outside_day_file_and_show_the_rest(
    bundle: Bundle, tmp_path: Path
) -> None:
    from ouro.arc.timeline import event_page
    from ouro.sentinel import paths as sentinel_paths
    from ouro.sentinel.history import history_page
    from ouro.workbench.app import Workbench

    add_claim(bundle, "an event today")
    line = json.dumps({"id": "zz-zebra", "generatedAt": "2026-01-01T00:00:00Z", "kind": "agent_note",
                       SECRET: 1})  # fmt: skip
    target = tmp_path / "day.jsonl"
    target.write_text(line + "\n")
    events = bundle.arc / "flight-recorder" / "events"
    os.symlink(target, events / "2026-01-01.jsonl")
    history = sentinel_paths.history_dir(bundle)
    history.mkdir(parents=True, exist_ok=True)
    os.symlink(target, history / "2026-01-01.jsonl")

    page = event_page(bundle)
    assert page["outside"] == ["arc/flight-recorder/events/2026-01-01.jsonl"]
    assert page["events"] and SECRET not in _said(page) and "zz-zebra" not in _said(page)
    ledger = history_page(bundle)
    assert ledger["outside"] == [f"{sentinel_paths.HISTORY_DIR}/2026-01-01.jsonl"]
    assert ledger["lines"] == [] and SECRET not in _said(ledger)

    bench = Workbench(bundle, served=True)
    timeline = bench.render("timeline")
    assert "arc/flight-recorder/events/2026-01-01.jsonl resolves outside the bundle" in timeline
    assert '<li class="event' in timeline and "zz-zebra" not in timeline
    recovery = bench.render("recovery")
    assert f"{sentinel_paths.HISTORY_DIR}/2026-01-01.jsonl resolves outside the bundle" in recovery
    assert SECRET not in timeline + recovery


# --- writers that fold the log, derived files behind a link -------------------------

CANARY = "CANARY-OUTSIDE-7q"


def _bundle_holds(bundle: Bundle, needle: str) -> list[str]:
    """The bundle's own files (no symlink followed) that contain ``needle``."""
    found = []
    for folder, _dirs, files in os.walk(bundle.root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as handle:
                if needle.encode() in handle.read():
                    found.append(os.path.relpath(path, bundle.root))
    return found


def test_checkpoint_refuses_an_events_folder_outside_before_writing(
    bundle: Bundle, tmp_path: Path
) -> None:
    from tests.conftest import run_ouro

    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    events = bundle.arc / "flight-recorder" / "events"
    outside = tmp_path / "out-events"
    os.replace(events, outside)
    for day in outside.iterdir():
        day.write_text(day.read_text().replace("ship it", CANARY))
    os.symlink(outside, events)
    before = (bundle.arc / "flight-recorder" / "latest.json").read_bytes()
    proc = run_ouro("arc", "checkpoint", bundle=bundle)
    assert proc.returncode != 0
    assert (
        "arc/flight-recorder/events resolves outside the bundle through a symlink; "
        "it was not read; nothing was written"
    ) in proc.stderr
    assert CANARY not in proc.stdout + proc.stderr
    assert (bundle.arc / "flight-recorder" / "latest.json").read_bytes() == before
    assert _bundle_holds(bundle, CANARY) == []
    since = run_ouro("arc", "query", "since-checkpoint", "--json", bundle=bundle)
    assert CANARY not in since.stdout + since.stderr
    status = run_ouro("index", "status", "--json", bundle=bundle)
    assert CANARY not in status.stdout + status.stderr


def test_checkpoint_folds_around_a_day_file_outside(bundle: Bundle, tmp_path: Path) -> None:
    from tests.conftest import run_ouro

    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    target = tmp_path / "ev.jsonl"
    line = {"id": "ev-01aaaaaaaaaaaaaaaa", "kind": "ask", "currentAsk": CANARY}
    target.write_text(json.dumps(line) + "\n")
    os.symlink(target, bundle.arc / "flight-recorder" / "events" / "2026-01-01.jsonl")
    run_ouro("arc", "checkpoint", bundle=bundle, check=True)
    assert _bundle_holds(bundle, CANARY) == []
    answer = read_resume(bundle)
    assert answer["currentAsk"]["value"] == "ship it"
    assert any(i["code"] == "events_outside" for i in answer["recorder"]["issues"])


def test_a_checkpoint_symlinked_outside_is_never_read_nor_spread(
    bundle: Bundle, tmp_path: Path
) -> None:
    from tests.conftest import run_ouro

    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    run_ouro("arc", "next", "test it", bundle=bundle, check=True)
    latest = bundle.arc / "flight-recorder" / "latest.json"
    target = tmp_path / "latest.json"
    target.write_text(latest.read_text().replace("ship it", CANARY))
    latest.unlink()
    os.symlink(target, latest)
    for args in (("orient",), ("arc", "resume", "--json"), ("sentinel", "refresh")):
        proc = run_ouro(*args, bundle=bundle)
        assert CANARY not in proc.stdout + proc.stderr, args
    answer = read_resume(bundle)
    assert answer["currentAsk"]["value"] == "ship it"  # folded from the log instead
    assert {
        "code": "checkpoint_outside",
        "severity": "degraded",
        "message": _reason("arc/flight-recorder/latest.json") + "; rebuilt",
    } in answer["recorder"]["issues"]
    note = run_ouro("arc", "note", "still here", bundle=bundle)
    assert note.returncode == 0 and "latest.json is stale" in note.stdout + note.stderr
    assert _bundle_holds(bundle, CANARY) == []
    assert target.read_text().count(CANARY) >= 1  # left as it was


@pytest.mark.parametrize("name", ["latest.json", "latest-ready.json"])
def test_a_sentinel_receipt_symlinked_outside_is_never_read(
    bundle: Bundle, tmp_path: Path, name: str
) -> None:
    from tests.conftest import run_ouro

    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    run_ouro("arc", "next", "test it", bundle=bundle, check=True)
    run_ouro("sentinel", "refresh", bundle=bundle, check=True)
    path = bundle.arc / "flight-recorder" / "context-loss-sentinel" / name
    target = tmp_path / name
    receipt = json.loads(path.read_text())
    receipt["resume"]["currentAsk"]["value"] = CANARY
    target.write_text(json.dumps(receipt))
    path.unlink()
    os.symlink(target, path)
    rel = f"arc/flight-recorder/context-loss-sentinel/{name}"
    status = run_ouro("sentinel", "status", "--json", bundle=bundle)
    assert CANARY not in status.stdout + status.stderr
    assert "resolves outside the bundle through a symlink; it was not read" in status.stdout
    refresh = run_ouro("sentinel", "refresh", "--json", bundle=bundle)
    assert CANARY not in refresh.stdout + refresh.stderr
    orient = run_ouro("orient", bundle=bundle)
    assert CANARY not in orient.stdout + orient.stderr
    if name == "latest-ready.json":
        assert _reason(rel) + ": not a recovery anchor" in orient.stdout
    assert _bundle_holds(bundle, CANARY) == []


@pytest.mark.parametrize("link", ["file", "diary", "arc", "flight-recorder"])
def test_the_workbench_never_reads_through_an_outside_link(
    bundle: Bundle, tmp_path: Path, link: str
) -> None:
    import shutil

    from ouro.workbench.site import build_site
    from tests.conftest import run_ouro

    run_ouro("diary", "reflect", "ordinary day", bundle=bundle, check=True)
    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    daily = bundle.record / "diary" / "daily"
    (day,) = daily.glob("*.md")
    if link == "file":
        target = tmp_path / "day.md"
        target.write_text(CANARY)
        day.unlink()
        os.symlink(target, day)
        shown = "desk/_record/diary/daily/" + day.name
    else:
        real = {
            "diary": bundle.record / "diary",
            "arc": bundle.arc,
            "flight-recorder": bundle.arc / "flight-recorder",
        }[link]
        copy = tmp_path / "copy"
        shutil.copytree(real, copy, symlinks=True)
        for path in copy.rglob("*"):
            if path.is_file() and path.suffix in (".md", ".jsonl"):
                path.write_text(
                    path.read_text().replace("ordinary day", CANARY).replace("ship it", CANARY)
                )
        os.replace(real, tmp_path / "aside")
        os.symlink(copy, real)
        shown = {
            "diary": "desk/_record/diary/daily",
            "arc": "arc/flight-recorder/events",
            "flight-recorder": "arc/flight-recorder/events",
        }[link]
    site = tmp_path / "site"
    build_site(bundle, site)
    pages = {p.name: p.read_text() for p in site.glob("*.html")}
    for name, text in pages.items():
        assert CANARY not in text, name
    page = "record.html" if link in ("file", "diary") else "timeline.html"
    assert shown in pages[page]
    assert "outside the bundle through a symlink" in pages[page]


def test_a_habit_run_creates_no_session_folder_outside(bundle: Bundle, tmp_path: Path) -> None:
    from tests.conftest import run_ouro

    (bundle.root / "habits" / "t.yaml").write_text("title: t\ncadence: 30m\nrun: echo hi\n")
    sessions = bundle.root / "state" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "out-sessions"
    os.replace(sessions, outside)
    os.symlink(outside, sessions)
    before = sorted(p.name for p in outside.iterdir())
    proc = run_ouro("habits", "run", "t", bundle=bundle)
    assert proc.returncode != 0
    assert "outside the bundle" in proc.stderr and "nothing was written" in proc.stderr
    assert sorted(p.name for p in outside.iterdir()) == before


@pytest.mark.parametrize("where", ["featured", "note", "event", "facts", "track"])
def test_a_self_loop_symlink_is_skipped_and_the_command_goes_on(bundle: Bundle, where: str) -> None:
    from ouro.desk.notes import write_note
    from tests.conftest import run_ouro

    run_ouro("diary", "write", "staging uses EU", "--about", "staging", bundle=bundle, check=True)
    write_note(bundle, "Kept note", "giraffeplum\n")
    run_ouro("arc", "ask", "ship it", bundle=bundle, check=True)
    run_ouro("desk", "track", "add", "ops", bundle=bundle, check=True)
    path = {
        "facts": bundle.record / "diary" / "facts.jsonl",
        "track": bundle.desk / "ops" / "track.md",
        "featured": bundle.desk / "_meta" / "featured.md",
        "note": bundle.record / "notes" / "kept-note.md",
        "event": next((bundle.arc / "flight-recorder" / "events").glob("*.jsonl")),
    }[where]
    path.unlink(missing_ok=True)
    os.symlink(path.name, path)
    for index in (bundle.root / "state" / "index").glob("*"):
        index.unlink() if index.is_file() else None
    assert run_ouro("orient", bundle=bundle).returncode == 0
    rebuild = run_ouro("index", "rebuild", bundle=bundle)
    assert rebuild.returncode == 0, rebuild.stderr
    found = run_ouro("--json", "desk", "search", "staging", bundle=bundle, check=True)
    assert json.loads(found.stdout)["total"] == (0 if where == "facts" else 1)
    if where != "featured":
        rel = os.path.relpath(path, bundle.root)
        said = run_ouro("arc", "resume", "--json", bundle=bundle).stdout + rebuild.stdout
        assert rel in said


def test_a_notes_manifest_symlinked_outside_is_never_read(bundle: Bundle, tmp_path: Path) -> None:
    from ouro.desk.notes import manifest_path, read_manifest, write_note
    from ouro.workbench.site import build_site

    write_note(bundle, "Kept note", "giraffeplum\n")
    path = manifest_path(bundle)
    target = tmp_path / "index.json"
    target.write_text(json.dumps({"notes": [{"slug": "kept-note", "title": CANARY}]}))
    path.unlink()
    os.symlink(target, path)
    assert read_manifest(bundle) is None
    build_site(bundle, tmp_path / "site")
    record = (tmp_path / "site" / "record.html").read_text()
    assert CANARY not in record
    assert "desk/_record/notes/.index.json resolves outside the bundle" in record
