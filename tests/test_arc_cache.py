"""No cache outlives its source: store summaries in latest.json are validated per file.

Regressions for issue 11: closing an obligation by editing its file in place,
or writing ``{bad`` into it, is seen on the very next read by ``obligation
list``, ``orient``, ``arc resume``, the Stop hook's debt message and the
gauntlet (which must not say ready).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ouro.arc import claims, obligations, paths, stores
from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume, read_resume_full
from ouro.bundle import Bundle
from ouro.hooks.handlers import debt_message
from ouro.orient import build_packet
from ouro.sentinel.gauntlet import evaluate
from ouro.store import stamp as stamps
from tests.conftest import ouro_json, record_snapshot, run_ouro


def ready(bundle: Bundle) -> str:
    record_event(bundle, "turn_accepted", "ask", current_ask="ship the parser")
    record_event(bundle, "agent_note", "next", next_safe_action="run the tests")
    ob = obligations.add_obligation(bundle, "send the report", owed_to="ari")
    return str(ob["id"])


def ob_path(bundle: Bundle, ob_id: str) -> Path:
    return bundle.root / "arc" / "obligations" / f"{ob_id}.json"


def edit_in_place(path: Path, change: dict[str, object]) -> None:
    """Rewrite the file's bytes through the same inode, as an editor saving in place does."""
    data = json.loads(path.read_text())
    data.update(change)
    inode = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as handle:
        handle.seek(0)
        handle.write(json.dumps(data))
        handle.truncate()
    assert path.stat().st_ino == inode


def test_closing_an_obligation_in_place_is_seen_everywhere(bundle: Bundle) -> None:
    ob_id = ready(bundle)
    assert read_resume(bundle)["activeObligationIds"] == [ob_id]
    edit_in_place(ob_path(bundle, ob_id), {"status": "done"})
    before = record_snapshot(bundle.root)
    assert read_resume(bundle)["activeObligationIds"] == []
    assert ob_id not in build_packet(bundle).text
    assert ob_id not in run_ouro("orient", bundle=bundle, check=True).stdout
    assert ouro_json("arc", "resume", bundle=bundle)["activeObligationIds"] == []
    assert record_snapshot(bundle.root) == before  # reads stay pure


def test_same_size_edit_right_after_a_write_is_seen(bundle: Bundle) -> None:
    """'open' -> 'done' keeps the size; the times may not move within a kernel tick."""
    ob_id = ready(bundle)
    path = ob_path(bundle, ob_id)
    st = path.stat()
    text = path.read_text()
    assert '"status":"open"' in text.replace(" ", "")
    path.write_text(text.replace('"open"', '"done"'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the mtime put back
    assert path.stat().st_size == st.st_size
    assert read_resume(bundle)["activeObligationIds"] == []


def test_a_malformed_obligation_file_is_unknown_not_ready(bundle: Bundle) -> None:
    ob_id = ready(bundle)
    record_event(bundle, "post_turn_persisted", "checkpoint")
    assert evaluate(bundle, build_packet).gauntlet.verdict == "ready"
    ob_path(bundle, ob_id).write_text("{bad")
    full = read_resume_full(bundle)
    assert full["unreadableObligationIds"] == [ob_id]
    assert full["canContinue"] is False
    assert any(ob_id in m and "unknown" in m for m in full["missing"])
    text = build_packet(bundle).text
    assert f"{ob_id}: unknown — unreadable" in text
    assert f"obligation {ob_id}: unknown" in run_ouro("arc", "resume", bundle=bundle).stdout
    message = debt_message(full, now="2026-01-01T00:00:00Z") or ""
    assert f"obligation {ob_id} unknown" in message
    g = evaluate(bundle, build_packet).gauntlet
    assert g.verdict == "blocked"
    assert {c.id: c.status for c in g.checks}["obligations_visible"] == "fail"


def test_an_unreadable_claim_file_is_unknown(bundle: Bundle) -> None:
    ready(bundle)
    c = claims.add_claim(bundle, "parser handles tabs")
    path = bundle.root / "arc" / "claims" / f"{c['id']}.json"
    saved = path.read_bytes()
    path.unlink()
    path.mkdir()  # unreadable as a file, even for root (chmod 000 is not)
    full = read_resume_full(bundle)
    assert full["unreadableClaimIds"] == [c["id"]]
    assert c["id"] not in (full["unverifiedClaimIds"] or [])
    assert evaluate(bundle, build_packet).gauntlet.verdict == "blocked"
    path.rmdir()
    path.write_bytes(saved)
    assert read_resume_full(bundle)["unreadableClaimIds"] == []


def test_claim_edited_in_place_is_rederived(bundle: Bundle) -> None:
    ready(bundle)
    c = claims.add_claim(bundle, "parser handles tabs")
    assert read_resume(bundle)["unverifiedClaimIds"] == [c["id"]]
    path = bundle.root / "arc" / "claims" / f"{c['id']}.json"
    edit_in_place(path, {"text": "parser handles spaces"})
    items = read_resume_full(bundle)["stores"]["claims"]["items"]
    assert items[c["id"]]["text"] == "parser handles spaces"


def test_unchanged_files_are_not_read_again(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stamps, "RACY_NS", 0)  # trust fresh fingerprints for this test
    ob_id = ready(bundle)
    cached = read_resume_full(bundle)["stores"]["obligations"]
    calls: list[str] = []
    real = stores._read_obligation

    def counting(inner: bool):  # type: ignore[no-untyped-def]
        fn = real(inner)

        def read(data: bytes, name: str) -> dict[str, object]:
            calls.append(name)
            return fn(data, name)

        return read

    monkeypatch.setattr(stores, "_read_obligation", counting)
    assert ob_id in stores.refresh_obligations(bundle, cached)["items"]
    assert calls == []
    edit_in_place(ob_path(bundle, ob_id), {"what": "send the final report"})
    summary = stores.refresh_obligations(bundle, cached)
    assert calls == [f"{ob_id}.json"]
    assert summary["items"][ob_id]["what"] == "send the final report"


def test_an_event_line_edited_in_place_is_seen(bundle: Bundle) -> None:
    ready(bundle)
    record_event(bundle, "agent_note", "a later note")  # the ask's line is no longer the last
    day = next((bundle.root / "arc/flight-recorder/events").glob("*.jsonl"))
    text = day.read_text()
    assert "ship the parser" in text
    day.write_text(text.replace("ship the parser", "ship the lexer!"))
    r = read_resume(bundle)
    assert r["currentAsk"]["value"] == "ship the lexer!"
    codes = {i["code"] for i in r["recorder"]["issues"]}
    assert "checkpoint_inconsistent" in codes


def test_latest_json_holds_the_stores_digest_and_the_cache_holds_the_summaries(
    bundle: Bundle,
) -> None:
    """``latest.json`` is the checkpoint without the store summaries (they are a
    machine-local cache, ``state/cache/arc-stores.marshal``): its bytes are
    ``encode``'s, and its ``storesDigest`` names the summaries the cache holds."""
    from ouro.arc import checkpoint as ckpt
    from ouro.store import jsonio

    ready(bundle)
    for n in range(3):
        claims.add_claim(bundle, f'claim {n} with "quotes", "stores":{{}} and ünïcode')
    record_event(bundle, "agent_note", "settle")
    raw = paths.checkpoint_path(bundle).read_bytes()
    written = json.loads(raw)
    assert "stores" not in written and written["storesDigest"].startswith("blake2b:")
    assert raw == jsonio.dumps(written, sort_keys=True) + b"\n"
    summaries, digest = ckpt._load_stores(bundle)
    assert digest == written["storesDigest"]
    assert summaries is not None and len(summaries["claims"]["items"]) == 3
    assert summaries == read_resume_full(bundle)["stores"]


def test_the_stores_cache_is_a_cache(bundle: Bundle) -> None:
    """Deleted, damaged (random bytes, another shape, a FIFO, a folder) or behind a
    symlink leading outside: the answers are the same (every store file is read
    again), nothing raises, and the read saves a good cache again -- never through
    the link. An unchanged summary is not saved again by a read."""
    import os

    from ouro.arc import checkpoint as ckpt

    ready(bundle)
    c = claims.add_claim(bundle, "parser handles tabs")
    record_event(bundle, "agent_note", "settle")
    cache = bundle.root / ckpt.STORES_CACHE
    want = read_resume(bundle)
    digest = read_resume_full(bundle)["storesDigest"]
    stamp = cache.stat().st_mtime_ns
    assert read_resume(bundle) == want and cache.stat().st_mtime_ns == stamp
    outside = bundle.root.parent / "elsewhere.marshal"
    outside.write_bytes(b"not marshal")
    for damage in ("gone", "noise", "shape", "fifo", "folder", "link"):
        if cache.is_dir():
            cache.rmdir()
        else:
            cache.unlink()
        if damage == "noise":
            cache.write_bytes(os.urandom(512))
        elif damage == "shape":
            import marshal

            bad = {"claims": {"files": {}, "items": {c["id"]: "x"}, "errors": {}}}
            cache.write_bytes(marshal.dumps(("ouro-arc-stores-1", "blake2b:0", bad), 4))
        elif damage == "fifo":
            os.mkfifo(cache)
        elif damage == "folder":
            cache.mkdir()
        elif damage == "link":
            cache.symlink_to(outside)
        full = read_resume_full(bundle)
        assert {
            k: v for k, v in full.items() if k not in ("fold", "stores", "storesDigest")
        } == want
        assert full["storesDigest"] == digest, damage
        assert full["stores"]["claims"]["items"][c["id"]]["status"] == "asserted"
    assert outside.read_bytes() == b"not marshal"
    cache.unlink()
    read_resume(bundle)
    assert ckpt._load_stores(bundle)[1] == digest  # saved again by the read


def test_a_checkpoint_written_before_the_cache_lends_its_stores(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``latest.json`` from an older ouro holds the summaries itself: with no cache
    they serve (an unchanged claim file is not parsed again), and the read saves them
    to the cache."""
    from ouro.arc import checkpoint as ckpt

    monkeypatch.setattr(stamps, "RACY_NS", 0)
    ready(bundle)
    claims.add_claim(bundle, "parser handles tabs")
    record_event(bundle, "agent_note", "settle")
    summaries, _ = ckpt._load_stores(bundle)
    path = paths.checkpoint_path(bundle)
    old = json.loads(path.read_bytes())
    del old["storesDigest"]
    path.write_text(json.dumps({**old, "stores": summaries}, sort_keys=True))
    (bundle.root / ckpt.STORES_CACHE).unlink()
    parsed: list[str] = []
    real = stores._parse_claim
    monkeypatch.setattr(
        stores,
        "_parse_claim",
        lambda b, f: lambda data, name: parsed.append(name) or real(b, f)(data, name),
    )
    assert read_resume_full(bundle)["stores"] == summaries
    assert parsed == []
    assert ckpt._load_stores(bundle)[0] == summaries


def test_an_unchanged_store_is_the_cached_summary_and_a_moved_ref_copies_it(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing moved: the refresh is the cached summary itself (nothing copied). A watched
    file that moved re-derives its claim in a copy: the cached summary stays as it
    was read, and the next write saves the new entry."""
    monkeypatch.setattr(stamps, "RACY_NS", 0)  # trust fresh fingerprints for this test
    ready(bundle)
    note = bundle.root / "desk" / "notes" / "parser.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("tabs\n")
    c = claims.add_claim(bundle, "parser handles tabs", about=["desk/notes/parser.md"])
    record_event(bundle, "agent_note", "settle")
    cached = read_resume_full(bundle)["stores"]["claims"]
    assert stores.refresh_claims(bundle, cached) is cached
    as_read = json.dumps(cached, sort_keys=True)
    note.write_text("tabs and spaces\n")
    fresh = stores.refresh_claims(bundle, cached)
    assert json.dumps(cached, sort_keys=True) == as_read
    watch = fresh["items"][c["id"]]["watch"]
    assert watch != cached["items"][c["id"]]["watch"]
    record_event(bundle, "agent_note", "after the edit")
    from ouro.arc.checkpoint import _load_stores

    persisted = _load_stores(bundle)[0]
    assert persisted is not None and persisted["claims"]["items"][c["id"]]["watch"] == watch


def _same_size(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("change", ["same size, mtime put back", "replaced", "added", "removed"])
def test_the_column_check_sees_every_change_to_a_claim_file(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The steady read compares names, ctimes and inodes whole; each change moves one."""
    monkeypatch.setattr(stamps, "RACY_NS", 0)  # trust fresh fingerprints for this test
    ready(bundle)
    first = claims.add_claim(bundle, "parser handles tabs")
    second = claims.add_claim(bundle, "parser handles nulls")
    record_event(bundle, "agent_note", "settle")
    cached = read_resume_full(bundle)["stores"]["claims"]
    assert cached["cols"][""] is not None
    assert stores.refresh_claims(bundle, cached) is cached
    folder = bundle.root / "arc" / "claims"
    path = folder / f"{first['id']}.json"
    if change == "same size, mtime put back":
        st = path.stat()
        _same_size(path, "tabs", "taps")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size
    elif change == "replaced":
        spare = folder / ".spare"
        spare.write_text(path.read_text().replace("tabs", "taps"))
        os.replace(spare, path)
    elif change == "added":
        data = json.loads(path.read_text())
        data.update(id="cl-added", text="parser handles taps")
        (folder / "cl-added.json").write_text(json.dumps(data))
    else:
        (folder / f"{second['id']}.json").unlink()
    fresh = stores.refresh_claims(bundle, cached)
    assert fresh is not cached
    texts = sorted(item["text"] for item in fresh["items"].values())
    expected = {
        "same size, mtime put back": ["parser handles nulls", "parser handles taps"],
        "replaced": ["parser handles nulls", "parser handles taps"],
        "added": ["parser handles nulls", "parser handles tabs", "parser handles taps"],
        "removed": ["parser handles tabs"],
    }
    assert texts == expected[change]


def test_a_file_read_in_its_racy_window_gets_no_columns(bundle: Bundle) -> None:
    ready(bundle)
    claims.add_claim(bundle, "parser handles tabs")  # read back at once: its stamp is racy
    cached = read_resume_full(bundle)["stores"]["claims"]
    assert cached["cols"][""] is None
    assert stores.refresh_claims(bundle, cached) is not cached
