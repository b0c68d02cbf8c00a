"""Advisory path locks (ouro lock take|release|list): overlap, expiry, purity."""

from __future__ import annotations

import orjson
import pytest

from ouro import locks
from ouro.bundle import Bundle
from ouro.errors import Conflict, InvalidInput
from tests.conftest import ouro_json, run_ouro, snapshot


def test_overlap_rules() -> None:
    assert locks.overlaps("src", "src/app.py")
    assert locks.overlaps("src/app.py", "src")
    assert locks.overlaps("src/a", "src/a")
    assert not locks.overlaps("src/a", "src/ab")
    assert locks.overlaps(".", "anything")


def test_take_conflict_names_holder_reason_expiry_and_writes_nothing(bundle: Bundle) -> None:
    took = ouro_json(
        "lock",
        "take",
        "./src/",
        "docs/a.md",
        "--reason",
        "refactor",
        "--ttl",
        "10m",
        "--agent",
        "ari",
        bundle=bundle,
    )
    assert [lk["path"] for lk in took["locks"]] == ["src", "docs/a.md"]
    before = {k: v for k, v in snapshot(bundle.root).items() if "state/locks" not in k}
    proc = run_ouro("lock", "take", "lib", "src/app.py", "--agent", "bo", bundle=bundle)
    assert proc.returncode == 1
    expiry = took["locks"][0]["expiresAt"]
    assert f"src is locked by ari (refactor) until {expiry}" in proc.stderr
    after = {k: v for k, v in snapshot(bundle.root).items() if "state/locks" not in k}
    assert after == before  # all or nothing: lib was not locked either
    # the holder renews; a disjoint path is free for another agent
    again = ouro_json("lock", "take", "src", "--agent", "ari", "--ttl", "1h", bundle=bundle)
    assert again["locks"][0]["id"] == took["locks"][0]["id"]
    ouro_json("lock", "take", "lib", "--agent", "bo", bundle=bundle)
    listed = ouro_json("lock", "list", "--path", "src/x.py", bundle=bundle)["locks"]
    assert [(lk["path"], lk["agent"]) for lk in listed] == [("src", "ari")]
    with pytest.raises(Conflict, match="bo cannot release it"):
        locks.release(bundle, ["src"], agent="bo")
    gone, _ = locks.release(bundle, None, agent="ari")
    assert sorted(lk.path for lk in gone) == ["docs/a.md", "src"]
    assert [lk.agent for lk in locks.scan(bundle).locks] == ["bo"]


def test_expired_locks_are_ignored_by_reads_and_swept_by_writes(bundle: Bundle) -> None:
    locks.take(bundle, ["src"], agent="ari", reason="", ttl_seconds=60)
    (file,) = locks.folder(bundle).iterdir()
    data = orjson.loads(file.read_bytes())
    data["expiresAt"] = "2020-01-01T00:00:00.000Z"
    file.write_bytes(orjson.dumps(data))
    before = snapshot(bundle.root)
    assert ouro_json("lock", "list", bundle=bundle)["locks"] == []
    assert snapshot(bundle.root) == before  # a read sweeps nothing
    taken, _ = locks.take(bundle, ["src/app.py"], agent="bo", reason="", ttl_seconds=60)
    assert [lk.agent for lk in locks.scan(bundle).locks] == ["bo"]  # swept
    assert taken[0].path == "src/app.py"


def test_unreadable_lock_is_reported_and_kept(bundle: Bundle) -> None:
    locks.folder(bundle).mkdir(parents=True)
    bad = locks.folder(bundle) / "sha256-bad.json"
    bad.write_text("{not json")
    listed = ouro_json("lock", "list", bundle=bundle)
    assert "sha256-bad.json: unreadable lock" in listed["problems"][0]
    took = ouro_json("lock", "take", "src", "--agent", "ari", bundle=bundle)
    assert took["problems"] and bad.read_text() == "{not json"


def test_bad_paths_are_refused(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="climbs out"):
        locks.take(bundle, ["../etc"], agent="a", reason="", ttl_seconds=60)
    with pytest.raises(InvalidInput, match="at least one"):
        locks.take(bundle, [], agent="a", reason="", ttl_seconds=60)
    assert run_ouro("lock", "take", "src", "--ttl", "9y", bundle=bundle).returncode == 2
