"""``ouro.arc.checkpoint.one_run``: a hook that records an event and then reads
the checkpoint reads the claim and obligation stores once, and only while
nothing else changed the checkpoint or the log in between."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro.arc import checkpoint, paths, stores
from ouro.arc.claims import add_claim
from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume_full
from ouro.bundle import Bundle
from ouro.store.atomic import atomic_write_bytes


@pytest.fixture
def counted(bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    add_claim(bundle, "the suite passes", check="pytest -q")
    calls: list[int] = []
    real = stores.refresh_claims

    def counting(b: Bundle, cached: stores.Summary | None) -> stores.Summary:
        calls.append(1)
        return real(b, cached)

    monkeypatch.setattr(stores, "refresh_claims", counting)
    return calls


def _without_caches(full: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in full.items() if k not in ("fold", "stores", "recorder")}


def test_the_read_after_the_write_takes_the_checkpoint_it_wrote(
    bundle: Bundle, counted: list[int]
) -> None:
    with checkpoint.one_run():
        record_event(bundle, "turn_accepted", "turn")
        assert len(counted) == 1  # the write read the stores
        inside = read_resume_full(bundle)
        assert len(counted) == 1  # the read did not read them again
    outside = read_resume_full(bundle)
    assert len(counted) == 2  # outside the run every read reads them
    assert _without_caches(inside) == _without_caches(outside)
    assert inside["unverifiedClaimIds"] and inside["eventCount"] == outside["eventCount"]


def test_an_event_appended_in_between_is_folded_in(bundle: Bundle, counted: list[int]) -> None:
    with checkpoint.one_run():
        line = record_event(bundle, "turn_accepted", "turn")
        count = read_resume_full(bundle)["eventCount"]
        # another process appends (and has not rewritten the checkpoint yet)
        day = paths.events_dir(bundle) / paths.day_file_name(line["recordedAt"])
        other = dict(line, id=line["id"][:-1] + ("x" if line["id"][-1] != "x" else "y"))
        with day.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(other) + "\n")
        after = read_resume_full(bundle)
    assert after["eventCount"] == count + 1
    assert len(counted) == 2  # that read computed as usual


def test_a_checkpoint_replaced_in_between_is_read_again(bundle: Bundle, counted: list[int]) -> None:
    with checkpoint.one_run():
        record_event(bundle, "turn_accepted", "turn")
        path: Path = paths.checkpoint_path(bundle)
        atomic_write_bytes(path, path.read_bytes())  # another writer's file (a new inode)
        read_resume_full(bundle)
    assert len(counted) == 2
