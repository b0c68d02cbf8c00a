"""A bundle that cannot be written answers every read and names the disk on a write.

Issue 26 #8b: on a read-only bundle (a mounted copy, a reviewer's checkout)
``desk search`` called the index "not a readable SQLite database" and suggested
``ouro index rebuild``, which then failed. Here every read runs as its own
process against a bundle made unwritable for real (``tests/readonly_support.py``
says how: a read-only bind mount as root, ``chmod`` otherwise): it answers from
the index opened immutable, or -- the index missing or behind -- from the files,
and says so; a write is refused naming the read-only disk; nothing is written.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.store.stamp import RACY_NS
from tests.conftest import run_ouro, snapshot
from tests.readonly_support import ReadOnly

#: what a clone leaves out: state/ and the derived files the bundle's .gitignore lists
GITIGNORED = (
    "state",
    "arc/flight-recorder/latest.json",
    "arc/flight-recorder/context-loss-sentinel/latest.json",
    "arc/flight-recorder/context-loss-sentinel/latest-ready.json",
    "arc/flight-recorder/context-loss-sentinel/receipts",
    "desk/_record/diary/entities.json",
    "desk/_record/notes/.index.json",
)

READS: dict[str, list[str]] = {
    "orient": ["orient"],
    "arc resume": ["arc", "resume"],
    "desk search": ["desk", "search", "harbor"],
    "diary consult": ["diary", "consult", "region"],
    "facts search": ["facts", "search", "region"],
    "notes consult": ["notes", "consult", "releases"],
    "claim list": ["claim", "list"],
    "obligation list": ["obligation", "list"],
    "desk task list": ["desk", "task", "list"],
    "sentinel status": ["sentinel", "status"],
    "info": ["info"],
    "index status": ["index", "status"],
}
WRITES: dict[str, list[str]] = {
    "arc ask": ["arc", "ask", "a new ask"],
    "diary write": ["diary", "write", "a new fact", "--about", "x"],
    "desk task add": ["desk", "task", "add", "ops", "another task"],
    "index sync": ["index", "sync"],
    "index rebuild": ["index", "rebuild"],
}


@pytest.fixture(scope="module")
def read_only() -> ReadOnly:
    found = ReadOnly.find()
    if found is None:
        pytest.skip(
            "no way to make a bundle unwritable here: running as root (chmod stops nothing), "
            "no mount namespace (unshare -m) and no setpriv to a user who can run this Python"
        )
    return found


def _bundle(root: Path) -> Bundle:
    b = Bundle.init(root, agent="rev")

    def ouro(*args: str) -> None:
        run_ouro(*args, bundle=b, check=True)

    ouro("arc", "ask", "ship the harbor cutover")
    ouro("arc", "next", "run the harbor tests", "--stop-before", "deploy")
    ouro("diary", "write", "staging uses the EU region", "--about", "staging")
    ouro("desk", "track", "add", "ops")
    ouro("desk", "task", "add", "ops", "rotate the harbor keys")
    ouro("claim", "add", "the harbor plan is written", "--authority", "agent")
    ouro("obligation", "add", "send the plan", "--to", "lead")
    (root.parent / "body.md").write_text("tag, then push the harbor release\n")
    ouro("notes", "write", "Releases", "--body-file", str(root.parent / "body.md"))
    ouro("sentinel", "refresh")
    ouro("desk", "search", "harbor")  # builds the index
    # A folder changed within the mtime tick of that sync is recorded as racy (and
    # re-checked): let the tick pass and sync again, so the index is plainly fresh.
    time.sleep(RACY_NS / 1e9)
    ouro("index", "sync")
    return b


def _json(result: tuple[int, str, str]) -> dict:  # type: ignore[type-arg]
    code, out, err = result
    assert code in (0, 1), (code, out, err)
    return json.loads(out)


def _run(
    ro: ReadOnly, root: Path, commands: dict[str, list[str]]
) -> dict[str, tuple[int, str, str]]:
    argv = [["--bundle", str(root), *c] for c in commands.values()]
    return dict(zip(commands, ro.run(root, argv), strict=True))


def _check(ro: ReadOnly, root: Path, *, newest_task: str) -> dict[str, tuple[int, str, str]]:
    """Every read (text and --json) and every write, in one unwritable run; returns the
    results by name (``NAME --json`` for the JSON forms)."""
    commands = {**READS, **{f"{k} --json": [*v, "--json"] for k, v in READS.items()}, **WRITES}
    before = snapshot(root)
    got = _run(ro, root, commands)
    assert snapshot(root) == before  # nothing is written, reads or refused writes
    for name in READS:
        code, out, err = got[name]
        assert code in (0, 1), (name, code, out, err)  # 1: a negative outcome (not ready)
        assert "not a readable SQLite database" not in out + err, name
        assert "index rebuild" not in out + err, (name, out, err)  # it would fail here
        assert "Traceback" not in err, (name, err)
    assert "ship the harbor cutover" in got["orient"][1]
    assert "ship the harbor cutover" in got["arc resume"][1]
    assert "the harbor plan is written" in got["claim list"][1]
    assert "send the plan" in got["obligation list"][1]
    assert newest_task in got["desk task list"][1]
    searches = ("desk search", "diary consult", "facts search", "notes consult")
    found = {k: _json(got[f"{k} --json"]) for k in searches}
    titles = {k: [r["title"] for r in v["results"]] for k, v in found.items()}
    assert newest_task in titles["desk search"] and "Releases" in titles["desk search"]
    assert "staging uses the EU region" in titles["diary consult"]
    assert "staging uses the EU region" in titles["facts search"]
    assert titles["notes consult"] == ["Releases"]
    for k, v in found.items():
        assert v["index"]["state"] == "fresh" and v["index"]["readOnly"] is True, (k, v)
    for name in WRITES:
        code, out, err = got[name]
        assert code != 0, (name, out)
        first = err.splitlines()[0]
        assert "the bundle is on a read-only disk" in first or (
            ro.errno_name == "EACCES" and "the bundle is not writable here" in first
        ), (name, err)
        assert str(root) in first, (name, err)
        assert "not a readable SQLite database" not in err and "index rebuild" not in err, err
    return got


def test_a_read_only_copy_with_its_index_answers_every_read(
    read_only: ReadOnly, tmp_path: Path
) -> None:
    root = _bundle(read_only.place(tmp_path) / "rev.ouro").root
    got = _check(read_only, root, newest_task="rotate the harbor keys")
    search = _json(got["desk search --json"])
    assert "note" not in search["index"]  # the index on disk was fresh: read as it is
    assert "index:   fresh" in got["info"][1]


def test_a_read_only_checkout_without_state_answers_from_the_files(
    read_only: ReadOnly, tmp_path: Path
) -> None:
    root = _bundle(read_only.place(tmp_path) / "rev.ouro").root
    for rel in GITIGNORED:
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    got = _check(read_only, root, newest_task="rotate the harbor keys")
    search = _json(got["desk search --json"])
    assert "answer comes from the files" in search["index"]["note"]
    assert "does not exist" in search["index"]["note"]
    status = got["index status"][1]
    assert "missing" in status and "none can be built on it" in status, status
    assert "the next search builds it" not in status
    assert "sentinel: no usable receipt" in got["sentinel status"][1]  # unknown stays unknown


def test_a_read_only_copy_whose_index_is_behind_answers_from_the_files(
    read_only: ReadOnly, tmp_path: Path
) -> None:
    root = _bundle(read_only.place(tmp_path) / "rev.ouro").root
    kept = tmp_path / "old-state"
    shutil.copytree(root / "state", kept)
    run_ouro("desk", "task", "add", "ops", "drain the harbor queue", bundle=Bundle.open(root),
             check=True)  # fmt: skip
    shutil.rmtree(root / "state")
    shutil.copytree(kept, root / "state")  # the index no longer knows the new task
    got = _check(read_only, root, newest_task="drain the harbor queue")
    search = _json(got["desk search --json"])
    assert "the index is behind the files" in search["index"]["note"]
    status = got["index status"][1]
    assert "stale" in status and "searches answer from the files" in status, status
