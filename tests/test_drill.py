"""``ouro drill``: every drill passes on a healthy bundle, never mutates it, and
goes red when the guarantee it proves is deliberately broken."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ouro.api import Bundle as Library
from ouro.arc.claims import add_claim
from ouro.arc.obligations import add_obligation
from ouro.bundle import Bundle
from ouro.drills import CATALOG, DRILL_NAMES, DRILLS, run_drills
from ouro.errors import InvalidInput
from ouro.sentinel import paths
from tests.conftest import ouro_json, run_ouro, snapshot
from tests.sentinel_support import load, make_ready

ROOT = Path(__file__).resolve().parent.parent


def populate(bundle: Bundle) -> None:
    make_ready(bundle)
    (bundle.root / "desk" / "_meta" / "plan.md").write_text("the plan\n")
    add_obligation(bundle, "send the plan", owed_to="lead", desk_locator="desk/_meta/plan.md")
    add_obligation(bundle, "reply to Ari", owed_to="ari", route="slack:C01")
    add_claim(bundle, "the plan is written", about=["desk/_meta/plan.md"], authority="agent")


def only(bundle: Bundle, name: str) -> dict[str, Any]:
    [result] = run_drills(bundle, [name])
    return result


def failed_checks(result: dict[str, Any]) -> list[str]:
    return [c["what"] for c in result["checks"] if not c["ok"]]


@pytest.mark.slow
def test_all_drills_pass_and_leave_the_real_bundle_alone(bundle: Bundle) -> None:
    populate(bundle)
    before = snapshot(bundle.root)
    result = Library(bundle).drill()
    assert result["ok"], [
        (d["name"], d["detail"]) for d in result["drills"] if d["status"] != "pass"
    ]
    assert [d["name"] for d in result["drills"]] == list(DRILLS)
    after = snapshot(bundle.root)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # the receipt is the drill's one write; a read may heal a cache under state/
    assert changed and all(
        k.startswith(paths.SENTINEL_DIR) or k.startswith("state/") for k in changed
    ), changed
    assert any(k.startswith(paths.SENTINEL_DIR) for k in changed), changed
    latest = load(paths.latest_path(bundle))
    assert latest["trigger"] == "drill" and latest["id"] == result["receipt"]["receiptId"]
    assert [d["status"] for d in latest["drills"]] == ["pass"] * len(DRILLS)


def test_cli_drill_exit_status_and_where_to_look(bundle: Bundle) -> None:
    populate(bundle)
    ok = run_ouro("drill", "erase", "evidence-freshness", bundle=bundle)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS erase" in ok.stdout and "PASS evidence-freshness" in ok.stdout
    # An unreadable obligation file: the erase drill cannot derive the truth -> red.
    (bundle.root / "arc" / "obligations" / "ob-broken.json").write_text("{torn")
    bad = run_ouro("drill", "erase", bundle=bundle)
    assert bad.returncode == 1
    assert "FAIL erase" in bad.stdout and "ob-broken.json" in bad.stdout
    assert "failed: erase" in bad.stdout
    as_json = ouro_json("drill", "erase", bundle=bundle)
    assert as_json["ok"] is False and as_json["failed"] == ["erase"]
    assert as_json["receipt"]["verdict"] == "blocked"
    status = ouro_json("sentinel", "status", bundle=bundle)
    assert status["drills"][0]["name"] == "erase" and status["drills"][0]["status"] == "fail"
    assert status["recoveryAnchor"]["use"] == "current-blocker"


def test_every_drill_the_help_lists_runs_by_name_through_cli_and_mcp(
    bundle: Bundle, tmp_path: Path
) -> None:
    """Issue 26 #9: ``ouro drill edited-by-hand`` was refused (CLI and MCP) though the
    help listed it. The list is read from the one catalog the help, the validator and
    the runner read; each name must appear in every help surface and run by name."""
    import anyio

    from ouro import registry
    from tests.mcp_client import json_of, session

    populate(bundle)
    names = list(DRILL_NAMES)
    assert names == [spec.name for spec in CATALOG] == list(DRILLS)
    helps = {
        "ouro drill --help": run_ouro("drill", "--help", bundle=bundle).stdout,
        "ouro help drills": run_ouro("help", "drills", bundle=bundle).stdout,
        "the drill tool's description": registry.find("drill").description(),
        "docs/sentinel.md": (ROOT / "docs" / "sentinel.md").read_text(),
    }
    for where, text in helps.items():
        flat = " ".join(text.split())
        missing = [n for n in names if n not in flat]
        assert not missing, f"{where} does not list {missing}"
    for name in names:
        proc = run_ouro("drill", name, "--json", bundle=bundle)
        assert proc.returncode == 0, (name, proc.stdout + proc.stderr)
        assert json.loads(proc.stdout)["passed"] == [name]

    async def through_mcp() -> None:
        with anyio.fail_after(120), (tmp_path / "mcp.log").open("a") as log:
            async with session(bundle.root, errlog=log) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                schema = listed["drill"].input_schema["properties"]["names"]
                assert schema["items"]["enum"] == names
                for name in names:
                    result = json_of(await client.call_tool("drill", {"names": [name]}))
                    assert result["passed"] == [name], (name, result)
                refused = await client.call_tool("drill", {"names": ["nope"]})
                assert refused.is_error

    anyio.run(through_mcp)


def test_unknown_drill_name_is_refused(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="no drill named"):
        run_drills(bundle, ["nope"])
    proc = run_ouro("drill", "nope", bundle=bundle)
    assert proc.returncode == 2 and "names" in proc.stderr


# --- each drill goes red when its guarantee is broken --------------------------------


def _break_erase(mp: pytest.MonkeyPatch) -> None:
    import ouro.orient as orient

    real = orient.arc_items
    mp.setattr(orient, "arc_items", lambda b: [i for i in real(b) if i.section != "obligations"])


def _break_crash_after_append(mp: pytest.MonkeyPatch) -> None:
    import ouro.arc.fold as fold

    # A reader that trusts the checkpoint without catching up with the log.
    mp.setattr(fold, "behind", lambda *a, **k: False)


def _break_crash_before_index(mp: pytest.MonkeyPatch) -> None:
    import ouro.index.sync as index_sync

    real = index_sync._apply_file

    def skip_facts(conn: Any, root: str, locator: str, kind: str, report: Any) -> None:
        if kind != "facts":
            real(conn, root, locator, kind, report)

    mp.setattr(index_sync, "_apply_file", skip_facts)


def _break_truncate(mp: pytest.MonkeyPatch) -> None:
    import ouro.arc.fold as fold

    mp.setattr(fold, "_bad_line", lambda *a, **k: None)  # garbage lines vanish silently


def _break_secrets(mp: pytest.MonkeyPatch) -> None:
    import ouro.proof.redact as redact

    mp.setattr(redact, "redact", lambda text, literals=(): text)


def _break_unknown_not_zero(mp: pytest.MonkeyPatch) -> None:
    import ouro.arc.stores as stores

    def zeros(real: Callable[[Bundle, Any], dict[str, Any]]) -> Callable[[Bundle, Any], Any]:
        def scan(b: Bundle, cached: Any) -> dict[str, Any]:
            out = real(b, cached)
            return {"files": {}, "items": {}, "errors": {}} if out.get("error") else out

        return scan

    mp.setattr(stores, "refresh_claims", zeros(stores.refresh_claims))
    mp.setattr(stores, "refresh_obligations", zeros(stores.refresh_obligations))


def _break_evidence_freshness(mp: pytest.MonkeyPatch) -> None:
    import ouro.arc.claims as claims
    import ouro.proof.refs as refs

    def by_name(bundle: Bundle, ref: str, repo: str | None = None) -> str:
        return "sha256:" + ref.encode().hex()  # ignores the content

    mp.setattr(refs, "hash_ref", by_name)  # what memo_hasher calls
    mp.setattr(claims, "hash_ref", by_name)


def _break_edited_by_hand(mp: pytest.MonkeyPatch) -> None:
    import ouro.arc.stores as stores

    # Every file looks unchanged: the cached summary is trusted whatever the file says.
    mp.setattr(stores, "fp_text", lambda st: "0:0:0:0")
    mp.setattr(stores, "_digest", lambda data: "0")


BREAKS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], str]] = {
    "erase": (_break_erase, "every open obligation is named"),
    "crash-after-append": (_break_crash_after_append, "resume reflects the event"),
    "crash-before-index": (_break_crash_before_index, "search finds the fact exactly once"),
    "truncate": (_break_truncate, "the garbage line is named"),
    "secrets": (_break_secrets, "no anthropic_key in any file under arc/"),
    "unknown-not-zero": (_break_unknown_not_zero, "the resume names claims as unknown"),
    "evidence-freshness": (_break_evidence_freshness, "the claim is stale_risky"),
    "edited-by-hand": (_break_edited_by_hand, "closed by an in-place edit is no longer listed"),
}


def test_every_drill_has_a_break_test() -> None:
    assert set(BREAKS) == set(DRILLS)


@pytest.mark.parametrize("name", list(BREAKS))
def test_drill_passes_then_goes_red_when_broken(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    populate(bundle)
    healthy = only(bundle, name)
    assert healthy["status"] == "pass", healthy
    breaker, expected = BREAKS[name]
    breaker(monkeypatch)
    broken = only(bundle, name)
    assert broken["status"] == "fail"
    assert any(expected in what for what in failed_checks(broken)), broken
    assert broken["lookAt"], "a failure says where to look"


def test_erase_fails_when_the_next_action_belongs_to_an_older_ask(bundle: Bundle) -> None:
    from ouro.arc.recorder import record_event

    populate(bundle)
    assert only(bundle, "erase")["status"] == "pass"
    record_event(bundle, "turn_accepted", "ask", current_ask="a different task")
    result = only(bundle, "erase")
    assert result["status"] == "fail"
    assert "the next safe action serves the current ask" in failed_checks(result)


def test_erase_fails_when_a_desk_locator_does_not_resolve(bundle: Bundle) -> None:
    populate(bundle)
    b = Library(bundle)
    note = bundle.root / "desk/_record/notes/plan-details.md"
    note.write_text("# details\n")
    b.arc.ask("ship the plan", refs=["desk/_record/notes/plan-details.md"])
    b.arc.next("write section 2")
    assert only(bundle, "erase")["status"] == "pass"
    note.unlink()
    result = only(bundle, "erase")
    assert result["status"] == "fail"
    assert any("plan-details.md" in what for what in failed_checks(result))


# --- the scratch copy: copied once, put back before each drill ----------------


def tree(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under root but the copy's skipped folders: mode, mtime, bytes."""
    from ouro.drills.harness import SKIP

    out: dict[str, tuple[int, int, bytes]] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if any(rel == s or rel.startswith(s + "/") for s in SKIP):
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                data = os.readlink(p).encode()
            elif stat.S_ISREG(st.st_mode):
                data = Path(p).read_bytes()
            else:
                data = b""
            out[rel] = (st.st_mode, st.st_mtime_ns, data)
    return out


def test_the_scratch_puts_back_every_change_a_drill_makes(bundle: Bundle) -> None:
    from ouro.drills.harness import Scratch

    populate(bundle)
    (bundle.root / "state" / "index").mkdir(parents=True, exist_ok=True)
    (bundle.root / "state" / "index" / "x.sqlite3").write_bytes(b"skipped")
    os.symlink("plan.md", bundle.root / "desk" / "_meta" / "inside.md")
    want = tree(bundle.root)
    assert "state/index/x.sqlite3" not in want and "desk/_meta/inside.md" in want
    with Scratch(bundle) as scratch:
        copy = scratch.fresh().root
        assert tree(copy) == want
        plan = copy / "desk" / "_meta" / "plan.md"
        st = plan.stat()
        with open(plan, "r+b") as handle:  # same size, same inode, mtime put back
            handle.write(b"THE PLAN")
        os.utime(plan, ns=(st.st_atime_ns, st.st_mtime_ns))
        with open(copy / "bundle.json", "ab") as handle:
            handle.write(b"\n")
        shutil.rmtree(copy / "arc")
        (copy / "desk" / "_meta" / "new").mkdir()
        (copy / "desk" / "_meta" / "new" / "f.md").write_text("new\n")
        (copy / "state" / "index").mkdir(parents=True)
        (copy / "state" / "index" / "ouro.sqlite3").write_bytes(b"built")
        (copy / "desk" / "_meta" / "inside.md").unlink()
        (copy / "desk" / "_meta" / "inside.md").mkdir()
        os.mkfifo(copy / "desk" / "fifo")
        os.chmod(copy / "desk", 0o500)
        os.chmod(copy / "bundle.json", 0o600)
        again = scratch.fresh().root
        assert again == copy  # put back in place, not copied again
        assert tree(again) == want
        assert not (again / "state" / "index").exists()


def test_the_scratch_copies_again_when_the_bundle_moved_since(bundle: Bundle) -> None:
    from ouro.drills.harness import Scratch

    populate(bundle)
    with Scratch(bundle) as scratch:
        first = scratch.fresh().root
        (first / "desk" / "_meta" / "plan.md").write_text("changed in the copy\n")
        (bundle.root / "desk" / "_meta" / "plan.md").write_text("changed in the bundle\n")
        second = scratch.fresh().root
        assert second != first and not first.exists()  # a whole new copy
        assert tree(second) == tree(bundle.root)
    assert not second.exists()
