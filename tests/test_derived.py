"""One derived-state mechanism (``ouro.derived``): the registry, reads that heal
machine-local caches, and the record that no read changes."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ouro import api as tools
from ouro import derived
from ouro.bundle import Bundle
from ouro.derived import artifacts
from ouro.desk import heads, notes
from ouro.desk.record import entities_path
from ouro.index.search import desk_search, search_facts
from ouro.models.hashing import hash_file
from ouro.orient import build_packet
from ouro.store import stamp as stamps
from tests.conftest import REPO, ouro_json, run_ouro

RECORD = ("arc", "desk", "habits", "bundle.json")


def _populate(bundle: Bundle, tasks: int = 12) -> None:
    tools.call("arc_next", bundle, {"text": "ship the login fix"})
    tools.call("desk_track_add", bundle, {"name": "web"})
    for n in range(tasks):
        tools.call("desk_task_add", bundle, {"track": "web", "title": f"task {n:02d} login"})
    for n in range(5):
        tools.call(
            "diary_write",
            bundle,
            {"text": f"the staging host is web-{n} for login", "about": ["staging"], "force": True},
        )
    tools.call(
        "notes_write", bundle, {"title": "Login", "body": "how login works", "tags": ["web"]}
    )


def _record_hash(root: Path) -> str:
    """Every file and folder of the record: path, bytes, mode, mtime (never state/)."""
    digest = hashlib.sha256()
    for top in RECORD:
        base = root / top
        paths = [base] if base.is_file() else sorted(base.rglob("*"))
        for path in paths:
            st = path.lstat()
            digest.update(f"{path.relative_to(root)}\0{st.st_mode}\0{st.st_mtime_ns}\0".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _aged(root: Path) -> None:
    """Let every file leave the racy window (``ouro.store.stamp``)."""
    del root
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)


def _answers(bundle: Bundle) -> dict[str, Any]:
    packet = build_packet(bundle).to_json()
    return {
        "packet": {k: v for k, v in packet.items() if k not in ("generatedAt",)},
        "desk": desk_search(bundle.root, "login", mode="lexical")["results"],
        "facts": search_facts(bundle.root, "staging", mode="lexical")["results"],
        "heads": [h.locator for h in heads.read_heads(bundle)[0]],
    }


def test_the_registry_names_every_derived_file_once(bundle: Bundle) -> None:
    names = [a.name for a in derived.registry()]
    assert len(names) == len(set(names))
    assert {
        "checkpoint",
        "sentinel",
        "entities",
        "notes-manifest",
        "desk-heads",
        "diary-state",
        "index",
        "vectors",
        "hook-state",
        "declared-checks",
    } <= set(names)
    assert all(a.local == a.path.startswith("state/") for a in derived.registry())
    for entry in derived.status(bundle):
        assert entry["state"] in ("fresh", "stale", "missing", "unavailable", "not installed")


def test_status_sees_a_stale_notes_manifest_and_entities_edited_by_hand(bundle: Bundle) -> None:
    _populate(bundle, tasks=2)
    by_name = {d["name"]: d for d in derived.status(bundle)}
    assert by_name["notes-manifest"]["state"] == "fresh"
    assert by_name["entities"]["state"] == "fresh"
    # a note edited by hand: the manifest no longer lists what is there
    note = notes.notes_dir(bundle) / "login.md"
    note.write_text(note.read_text().replace("how login works", "how login works now"))
    entities_path(bundle).write_text(entities_path(bundle).read_text() + " ")
    by_name = {d["name"]: d for d in derived.status(bundle)}
    assert by_name["notes-manifest"]["state"] == "stale"
    assert by_name["entities"]["state"] == "stale"
    text = run_ouro("index", "status", bundle=bundle, check=True).stdout
    assert "notes-manifest: stale" in text and "entities: stale" in text
    run_ouro("index", "sync", bundle=bundle, check=True)
    by_name = {d["name"]: d for d in derived.status(bundle)}
    assert by_name["notes-manifest"]["state"] == "fresh"
    assert by_name["entities"]["state"] == "fresh"


def test_the_saved_notes_listing_holds_only_while_the_manifest_keeps_its_stamp(
    bundle: Bundle,
) -> None:
    _populate(bundle, tasks=1)
    _aged(bundle.root)
    cache = bundle.root / "state/cache/notes-listed.marshal"
    by_name = {d["name"]: d for d in derived.status(bundle)}
    assert by_name["notes-manifest"]["state"] == "fresh"
    assert cache.is_file()  # the first check saved what the manifest lists
    saved = cache.read_bytes()
    assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "fresh"
    assert cache.read_bytes() == saved  # the second read it, saving nothing
    manifest = notes.manifest_path(bundle)
    listed = artifacts._load_listed(bundle, os.stat(manifest))
    assert listed is not None and listed.names == {
        e["slug"] + ".md" for e in notes.read_manifest(bundle) or []
    }
    assert listed.hash("login") == hash_file(notes.notes_dir(bundle) / "login.md")
    # a new note file the manifest does not list: stale, from the saved listing too
    extra = notes.notes_dir(bundle) / "unlisted.md"
    extra.write_text("# unlisted\n")
    assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "stale"
    extra.unlink()
    # a manifest rewritten to list another set: the saved listing no longer holds
    manifest.write_bytes(manifest.read_bytes().replace(b'"login"', b'"logout"'))
    assert b'"logout"' in manifest.read_bytes()
    assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "stale"
    cache.write_bytes(b"damaged")  # a damaged cache is no cache
    assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "stale"
    run_ouro("index", "sync", bundle=bundle, check=True)
    assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "fresh"


def test_after_write_refreshes_what_the_write_touched(bundle: Bundle) -> None:
    _populate(bundle, tasks=2)
    task = bundle.desk / "web" / "task-00-login" / "task.md"
    assert task.is_file()
    task.write_text(task.read_text().replace("task 00 login", "task 00 login edited"))
    assert derived.after_write(bundle, [task]) == []
    _aged(bundle.root)
    assert heads.freshness(bundle)[0] in ("fresh", "stale")  # stale only while racy
    assert "task 00 login edited" in [h.title for h in heads.read_heads(bundle)[0]]
    assert desk_search(bundle.root, "edited", mode="lexical")["total"] == 1


def test_copy_heals_on_the_first_orient_and_the_second_reads_no_rebuild(
    bundle: Bundle, tmp_path: Path
) -> None:
    _populate(bundle)
    run_ouro("orient", bundle=bundle, check=True)
    copy = tmp_path / "copy.ouro"
    shutil.copytree(bundle.root, copy, symlinks=True, copy_function=shutil.copy2)  # cp -a
    moved = Bundle(copy)
    _aged(copy)
    assert heads.freshness(moved)[0] == "stale"  # new inodes: nothing is trusted
    first = run_ouro("orient", bundle=moved, check=True).stdout
    cache = heads.heads_path(moved)
    healed = cache.stat()
    assert heads.freshness(moved) == ("fresh", None)
    second = run_ouro("orient", bundle=moved, check=True).stdout
    assert (
        second
        == first
        == run_ouro("orient", bundle=bundle, check=True).stdout.replace(str(bundle.root), str(copy))
    )
    # the second orient rebuilt nothing: the cache file is the one the first wrote
    assert (cache.stat().st_ino, cache.stat().st_mtime_ns) == (healed.st_ino, healed.st_mtime_ns)


def test_reads_never_change_the_record_even_when_they_heal(bundle: Bundle, tmp_path: Path) -> None:
    _populate(bundle)
    copy = tmp_path / "copy.ouro"
    shutil.copytree(bundle.root, copy, symlinks=True, copy_function=shutil.copy2)
    shutil.rmtree(copy / "state" / "cache", ignore_errors=True)
    shutil.rmtree(copy / "state" / "index", ignore_errors=True)
    moved = Bundle(copy)
    before = _record_hash(copy)
    for argv in (
        ("orient",),
        ("orient", "--json"),
        ("desk", "search", "login"),
        ("facts", "search", "staging"),
        ("notes", "consult", "login"),
        ("index", "status"),
        ("arc", "resume"),
        ("info",),
    ):
        run_ouro(*argv, bundle=moved, check=True)
    _answers(moved)
    derived.status(moved)
    assert _record_hash(copy) == before
    assert heads.heads_path(moved).is_file()  # the reads healed the machine-local caches
    assert (copy / "state" / "index").is_dir()


def test_deleting_state_and_rebuilding_gives_the_same_answers(bundle: Bundle) -> None:
    _populate(bundle)
    _aged(bundle.root)
    expected = _answers(bundle)
    status_before = {d["name"]: d["state"] for d in derived.status(bundle)}
    shutil.rmtree(bundle.state)
    # reads alone heal every cache they use, with the same answers
    assert _answers(bundle) == expected
    shutil.rmtree(bundle.state)
    report = ouro_json("index", "rebuild", bundle=bundle)
    assert {d["name"] for d in report["derived"]} >= {"desk-heads", "diary-state"}
    _aged(bundle.root)  # a folder changed within the racy window reads as stale until a sync
    assert _answers(bundle) == expected
    after = {d["name"]: d["state"] for d in derived.status(bundle)}
    for name in ("checkpoint", "entities", "notes-manifest", "index"):
        assert after[name] == status_before[name] == "fresh", (
            name,
            [d.get("reason") for d in derived.status(bundle)],
        )


_HEAL = """
import sys
from ouro.bundle import Bundle
from ouro.desk import heads
from ouro.models.hashing import hash_file
from ouro.index.search import desk_search
from pathlib import Path
b = Bundle(Path(sys.argv[1]))
for _ in range(int(sys.argv[2])):
    heads.heads_path(b).unlink(missing_ok=True)
    found, problems = heads.read_heads(b)
    assert len(found) == int(sys.argv[3]) and not problems, (len(found), problems)
    assert desk_search(b.root, "login", mode="lexical")["total"] >= 1
print("ok")
"""


def test_processes_healing_the_same_cache_race_safely(bundle: Bundle) -> None:
    _populate(bundle, tasks=30)
    shutil.rmtree(bundle.state / "cache", ignore_errors=True)
    shutil.rmtree(bundle.state / "index", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _HEAL, str(bundle.root), "15", "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "ok", err[-2000:]
    _aged(bundle.root)
    found, problems = heads.read_heads(bundle)
    assert len(found) == 30 and not problems
    assert heads.freshness(bundle)[0] in ("fresh", "missing")
    assert {d["name"]: d["state"] for d in derived.status(bundle)}["index"] == "fresh"


_LIST_NOTES = """
import sys
from pathlib import Path
from ouro import derived
from ouro.bundle import Bundle
from ouro.desk import notes
b = Bundle(Path(sys.argv[1]))
for n in range(int(sys.argv[2])):
    if sys.argv[3] == "write":
        notes.notes_dir(b).joinpath(f"race-{n}.md").write_text(f"# race {n}\\n")
        notes.regenerate_manifest(b)
    else:
        (b.root / "state/cache/notes-listed.marshal").unlink(missing_ok=True)
        state = {d["name"]: d["state"] for d in derived.status(b)}["notes-manifest"]
        assert state in ("fresh", "stale"), state
print("ok")
"""


def test_processes_saving_the_notes_listing_beside_a_manifest_writer(bundle: Bundle) -> None:
    _populate(bundle, tasks=1)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _LIST_NOTES, str(bundle.root), "12", role],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role in ("write", "read", "read")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "ok", err[-2000:]
    _aged(bundle.root)
    for _ in range(2):  # the saved listing (whichever process saved it last) or a new one
        assert {d["name"]: d for d in derived.status(bundle)}["notes-manifest"]["state"] == "fresh"
    listed = artifacts._load_listed(bundle, os.stat(notes.manifest_path(bundle)))
    assert listed is not None and len(listed.names) == 13


@pytest.mark.parametrize("edit", ["same size, mtime put back", "replaced by a copy"])
def test_a_healed_cache_still_sees_edits(bundle: Bundle, edit: str) -> None:
    _populate(bundle, tasks=3)
    _aged(bundle.root)
    heads.read_heads(bundle)  # heals
    task = bundle.desk / "web" / "task-01-login" / "task.md"
    st = task.stat()
    text = task.read_text()
    if edit == "same size, mtime put back":
        task.write_text(text.replace("task 01 login", "task 01 LOGIN"))
        os.utime(task, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        other = task.with_name("task.md.new")
        other.write_text(text.replace("task 01 login", "task 01 LOGIN"))
        os.replace(other, task)
    assert "task 01 LOGIN" in [h.title for h in heads.read_heads(bundle)[0]]


def test_after_write_never_raises_and_says_what_it_could_not_refresh(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.derived import artifacts

    _populate(bundle, tasks=1)

    def broken(_bundle: Bundle, _touched: list[Path]) -> None:
        raise OSError(28, "No space left on device")

    patched = tuple(
        a._replace(refresh=broken) if a.name == "desk-heads" else a for a in artifacts.ARTIFACTS
    )
    monkeypatch.setattr(artifacts, "ARTIFACTS", patched)
    task = next(bundle.desk.glob("web/*/task.md"))
    warnings = derived.after_write(bundle, [task])
    assert len(warnings) == 1 and "state/cache/desk-heads.bin was not refreshed" in warnings[0]
    assert derived.after_write(bundle, [bundle.root / "arc" / "claims"]) == []  # not its sources
