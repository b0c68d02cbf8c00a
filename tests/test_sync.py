"""ouro sync with real git: two clones of one bundle and a bare remote (a path remote)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.orient import build_packet
from ouro.sentinel.signals import git_signals
from ouro.sync.jsonl import merge_lines
from tests.sync_support import IDENTITY, git, jsonl_ids, ouro, remote_and_clones, tracked_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

EVENTS = "arc/flight-recorder/events"
FACTS = "desk/_record/diary/facts.jsonl"


def _write_side(bundle: Bundle, tag: str) -> dict[str, list[str]]:
    facts = [
        ouro(bundle, "diary", "write", f"{tag} learned thing {i}")["fact"]["id"] for i in range(3)
    ]
    ouro(bundle, "arc", "ask", f"{tag} asks")
    ouro(bundle, "desk", "task", "add", "work", f"{tag} task")
    return {"facts": facts}


@pytest.mark.parametrize("first", ["a", "b"])
def test_two_clones_converge_with_every_record_once(tmp_path: Path, first: str) -> None:
    _, a, b = remote_and_clones(tmp_path)
    wrote = {"a": _write_side(a, "alpha"), "b": _write_side(b, "beta")}
    one, two = (a, b) if first == "a" else (b, a)
    ouro(one, "sync")
    second = ouro(two, "sync")
    assert second["pulledCommits"] >= 1 and second["pushed"]
    ouro(one, "sync")
    again = ouro(two, "sync")  # in step: nothing to pull, commit or push
    assert (again["pulledCommits"], again["pushed"], again["committed"]) == (0, False, {})
    assert git(a.root, "status", "--porcelain") == "" == git(b.root, "status", "--porcelain")
    assert tracked_files(a) == tracked_files(b)
    facts = jsonl_ids(a, "desk/_record/diary")
    assert sorted(facts) == sorted(set(facts))
    assert set(wrote["a"]["facts"]) | set(wrote["b"]["facts"]) <= set(facts)
    events = jsonl_ids(a, EVENTS)
    assert len(events) == len(set(events))
    assert build_packet(a).text == build_packet(b).text
    tasks = {t["title"] for t in ouro(a, "desk", "task", "list")["tasks"]}
    assert {"alpha task", "beta task", "ship it"} <= tasks


def test_commit_message_and_event_say_what_was_pushed(tmp_path: Path) -> None:
    _, a, _ = remote_and_clones(tmp_path)
    ouro(a, "diary", "write", "one fact")
    ouro(a, "diary", "write", "another fact")
    result = ouro(a, "sync")
    assert result["committed"]["facts"] == 2 and result["pushed"]
    message = git(a.root, "log", "-1", "--format=%s")
    assert message.startswith("ouro sync: ") and "2 facts" in message
    lines = [json.loads(x) for x in git(a.root, "show", f"HEAD:{EVENTS}/" + _day(a)).splitlines()]
    pushed = [e for e in lines if e["kind"] == "sync_pushed"]
    assert pushed[-1]["id"] == result["eventId"]
    assert pushed[-1]["meta"]["counts"]["facts"] == 2


def _day(bundle: Bundle) -> str:
    return sorted(p.name for p in (bundle.root / EVENTS).glob("*.jsonl"))[-1]


def test_conflicting_claim_status_keeps_both_versions_and_surfaces(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    claim = ouro(a, "claim", "add", "the build passes")["id"]
    ouro(a, "sync")
    ouro(b, "sync")
    ouro(a, "claim", "evidence", claim, "--command", "make", "--exit-code", "0")
    ouro(b, "claim", "evidence", claim, "--command", "make", "--exit-code", "1")  # newer
    ouro(a, "sync")
    result = ouro(b, "sync")
    [conflict] = result["conflicts"]
    assert conflict["path"] == f"arc/claims/{claim}.json" and conflict["kind"] == "claim"
    record = json.loads((b.root / conflict["recordPath"]).read_text())
    exits = sorted(
        json.loads(record["versions"][side]["text"])["evidence"][-1]["exitCode"]
        for side in ("ours", "theirs")
    )
    assert exits == [0, 1]  # both versions kept
    assert record["kept"] == "ours"  # B's evidence is the newest event
    kept = json.loads((b.root / f"arc/claims/{claim}.json").read_text())
    assert kept["evidence"][-1]["exitCode"] == 1
    ouro(a, "sync")
    for side in (a, b):
        kinds = [e["kind"] for e in _events(side)]
        assert "sync_conflict" in kinds
        [sig] = [s for s in git_signals(side) if s.status == "sync-conflict"]
        assert sig.verdict_impact == "watch"
        assert "sync conflict in arc/claims/" in build_packet(side).text
    ouro(a, "sync", "resolve", conflict["id"])
    assert ouro(a, "sync", "status")["openConflicts"] == []


def _events(bundle: Bundle) -> list[dict[str, object]]:
    out = []
    for path in sorted((bundle.root / EVENTS).glob("*.jsonl")):
        out += [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return out


def test_double_task_claim_is_flagged_and_in_the_packet(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    ouro(a, "desk", "task", "take", "work/ship-it", "--agent", "laptop-agent")
    ouro(b, "desk", "task", "take", "work/ship-it", "--agent", "server-agent")
    ouro(a, "sync")
    result = ouro(b, "sync")
    [conflict] = result["conflicts"]
    assert conflict["kind"] == "double-claim"
    text = (b.root / "desk/work/ship-it/task.md").read_text()
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert f"syncConflict: {conflict['id']}" in text
    record = json.loads((b.root / conflict["recordPath"]).read_text())
    holders = {h["agent"] for h in record["doubleClaim"]["holders"]}
    assert holders == {"laptop-agent", "server-agent"}
    ouro(a, "sync")
    packet = build_packet(a).text
    assert "double claim on desk/work/ship-it/task.md" in packet
    assert "laptop-agent" in packet and "server-agent" in packet


def test_markdown_conflict_never_leaves_markers(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    for side, words in ((a, "laptop words"), (b, "server words")):
        note = side.root / "desk/_meta/featured.md"
        note.write_text(note.read_text() + f"\n{words}\n")
    ouro(a, "sync")
    result = ouro(b, "sync")
    [conflict] = result["conflicts"]
    record = json.loads((b.root / conflict["recordPath"]).read_text())
    texts = {record["versions"][s]["text"] for s in ("ours", "theirs")}
    assert any("laptop words" in t for t in texts) and any("server words" in t for t in texts)
    for path in b.root.rglob("*.md"):
        assert "<<<<<<<" not in path.read_text(), path


def test_pull_only_and_push_only(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    ouro(a, "diary", "write", "from a")
    pushed = ouro(a, "sync", "--push-only")
    assert pushed["pushed"] and pushed["pulledCommits"] == 0
    ouro(b, "diary", "write", "from b")
    pulled = ouro(b, "sync", "--pull-only")
    assert pulled["pulledCommits"] >= 1 and not pulled["pushed"]
    assert "from a" in (b.root / FACTS).read_text()
    assert git(b.root, "rev-list", "--count", "origin/main..HEAD").strip() != "0"


def test_failed_sync_is_recorded_and_watched(tmp_path: Path) -> None:
    remote, a, _ = remote_and_clones(tmp_path)
    shutil.rmtree(remote)
    ouro(a, "diary", "write", "cannot travel yet")

    from tests.conftest import cli_run

    out = cli_run(["--bundle", str(a.root), "sync"])
    assert out.exit_code != 0
    assert [e["kind"] for e in _events(a)][-1] == "sync_failed"
    status = ouro(a, "sync", "status")["last"]
    assert status["lastResult"] == "failed" and status["lastError"]
    assert [s.status for s in git_signals(a)] == ["sync-failed"]
    assert "last sync failed" in build_packet(a).text


def test_init_adopts_a_repository_and_untracks_derived_files(tmp_path: Path) -> None:
    bundle = Bundle.init(tmp_path / "c.ouro", agent="agent")
    ouro(bundle, "arc", "ask", "something")  # writes the derived checkpoint
    (bundle.root / ".gitignore").write_text("my-own-rule\n")
    git(bundle.root, "init", "-q", "-b", "main")
    git(bundle.root, "add", "-A", "-f")
    git(bundle.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "mine")
    result = ouro(bundle, "sync", "init")
    assert result["repository"] == "adopted"
    assert "arc/flight-recorder/latest.json" in result["untracked"]
    assert (bundle.root / "arc/flight-recorder/latest.json").exists()
    ignore = (bundle.root / ".gitignore").read_text()
    assert ignore.startswith("my-own-rule\n") and "/state/" in ignore
    assert "*.jsonl merge=union" in (bundle.root / ".gitattributes").read_text()
    assert git(bundle.root, "status", "--porcelain") == ""
    again = ouro(bundle, "sync", "init")
    assert again["committed"] is False and again["policyFilesChanged"] == []


def test_sync_habit_template_is_a_valid_habit(tmp_path: Path) -> None:
    bundle = Bundle.init(tmp_path / "h.ouro", agent="agent")
    ouro(bundle, "sync", "init", "--interval", "15m")
    written = ouro(bundle, "sync", "habit")
    assert written == {"habit": "sync", "locator": "habits/sync.yaml", "cadence": "15m"}
    listed = ouro(bundle, "habits", "list")
    [habit] = [h for h in listed["habits"] if h["name"] == "sync"]
    assert habit["cadence"] == "15m" and habit["run"] == ["ouro", "sync"]


def test_sync_habit_with_a_bad_cadence_is_a_usage_error_naming_the_option(
    tmp_path: Path,
) -> None:
    from tests.conftest import run_ouro

    bundle = Bundle.init(tmp_path / "h.ouro", agent="agent")
    ouro(bundle, "sync", "init", "--interval", "90s")  # a sync interval, not a habit cadence
    proc = run_ouro("--json", "sync", "habit", "--cadence", "never", bundle=bundle)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["type"] == "invalid_input" and error["message"].startswith("cadence: 'never'")
    assert "--cadence" in error["hint"]
    text = run_ouro("sync", "habit", bundle=bundle)
    assert text.returncode == 2 and "Traceback" not in text.stderr
    assert "the sync interval '90s' is not a habit cadence" in text.stderr
    assert "--cadence" in text.stderr
    assert not (bundle.root / "habits" / "sync.yaml").exists()


def test_sync_init_interval_out_of_range_names_the_interval(tmp_path: Path) -> None:
    from tests.conftest import run_ouro

    bundle = Bundle.init(tmp_path / "h.ouro", agent="agent")
    proc = run_ouro("sync", "init", "--interval", "0s", bundle=bundle)
    assert proc.returncode == 2
    assert "hint: choose an interval between 1s and 7d" in proc.stderr
    assert "lease" not in proc.stderr


def test_jsonl_union_is_symmetric_dedupes_and_keeps_malformed() -> None:
    ours = b'{"id":"ev-2","x":1}\n{"id":"ev-1"}\nnot json\n'
    theirs = b'{"id":"ev-1"}\n{"id":"ev-3"}\n[1,2]\n'
    merged, bad = merge_lines([ours, theirs], "events.jsonl")
    assert merged == merge_lines([theirs, ours], "events.jsonl")[0]
    assert merged.splitlines() == [
        b'{"id":"ev-1"}',
        b'{"id":"ev-2","x":1}',
        b'{"id":"ev-3"}',
        b"[1,2]",
        b"not json",
    ]
    assert [(m.line, m.reason.split(" (")[0]) for m in bad] == [
        (4, "not a JSON object"),
        (5, "not valid JSON"),
    ]


def test_a_merge_left_stopped_with_markers_is_finished_not_aborted(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    ouro(a, "diary", "write", "fact from a")
    ouro(a, "desk", "task", "take", "work/ship-it", "--agent", "agent-a")
    ouro(a, "sync")
    ouro(b, "diary", "write", "fact from b")
    ouro(b, "desk", "task", "take", "work/ship-it", "--agent", "agent-b")
    # What a sync killed inside its merge leaves: local work committed, the
    # merge stopped with git's conflict markers in task.md.
    git(b.root, "add", "-A")
    git(b.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "local")
    git(b.root, "fetch", "-q", "origin")
    subprocess.run(  # git merge needs an identity even with --no-commit: the test's own
        ["git", "-C", str(b.root), "merge", "--no-commit", "origin/main"],
        capture_output=True,
        env={**os.environ, **IDENTITY},
    )
    task = b.root / "desk/work/ship-it/task.md"
    assert "<<<<<<<" in task.read_text()
    ouro(b, "diary", "write", "written while the merge was stopped")
    result = ouro(b, "sync")
    assert "finished a merge an interrupted sync had left stopped" in result["notes"]
    assert "<<<<<<<" not in task.read_text()
    assert not (b.root / ".git" / "MERGE_HEAD").exists()
    facts = (b.root / FACTS).read_text()
    for text in ("fact from a", "fact from b", "written while the merge was stopped"):
        assert facts.count(text) == 1, text
    assert git(b.root, "status", "--porcelain") == ""


def test_only_the_tasks_a_merge_writes_are_locked(tmp_path: Path) -> None:
    from ouro.store.git import Git
    from ouro.sync.locks import incoming_task_ids

    _, a, b = remote_and_clones(tmp_path)
    ouro(a, "desk", "task", "add", "work", "untouched")
    ouro(a, "sync")
    ouro(b, "sync")
    ouro(a, "desk", "task", "take", "work/ship-it", "--agent", "agent-a")
    ouro(a, "desk", "task", "add", "work", "brand new")
    ouro(a, "sync")
    git(b.root, "fetch", "-q", "origin")
    ids = incoming_task_ids(b, Git(b.root), ["refs/remotes/origin/main"])
    by_title = {t["title"]: t["id"] for t in ouro(a, "desk", "task", "list")["tasks"]}
    assert ids == sorted([by_title["ship it"], by_title["brand new"]])


def test_the_index_catches_up_after_a_merge(tmp_path: Path) -> None:
    from ouro.index.sync import status

    _, a, b = remote_and_clones(tmp_path)
    ouro(b, "index", "sync")
    ouro(a, "diary", "write", "the zeppelin hangar is in hall seven")
    ouro(a, "desk", "task", "add", "work", "inspect the zeppelin")
    ouro(a, "sync")
    ouro(b, "diary", "write", "unrelated local fact")
    ouro(b, "sync")
    # ouro sync itself brought the index up to the merged files (no index sync
    # ran since); the folder check may still call it racy-stale for a moment.
    counts = status(b)["counts"]
    assert counts["fact"] == 2 and counts["task"] == 2
    found = json.dumps(ouro(b, "desk", "search", "zeppelin"))
    assert "hall seven" in found and "inspect the zeppelin" in found
    assert (
        not (b.root / "state/index").joinpath("ouro.sqlite3").exists()
        or git(b.root, "ls-files", "state") == ""
    )  # the index is never committed


def test_malformed_log_lines_travel_and_are_reported(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    for side, junk in ((a, b"{torn line from a\n"), (b, b"not json from b\n")):
        ouro(side, "diary", "write", f"good fact from {side.root.name}")
        with (side.root / FACTS).open("ab") as fh:
            fh.write(junk)
    ouro(a, "sync")
    result = ouro(b, "sync")
    assert len(result["malformed"]) == 2
    assert all(FACTS in m and "(kept)" in m for m in result["malformed"])
    ouro(a, "sync")
    for side in (a, b):
        text = (side.root / FACTS).read_bytes()
        assert b"{torn line from a\n" in text and b"not json from b\n" in text
        assert text.count(b"good fact from") == 2
