"""The snapshot keeps each entity's near-duplicate token index (``factstate.Postings``):
a fresh process decodes it for the entities a write names and tokenises only the
facts after it. Same decisions as a state that replayed the log; never trusted
when damaged."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.desk import diary_snapshot, factstate, record
from ouro.desk.factnorm import NEAR_THRESHOLD, overlap, tokens
from ouro.desk.factstate import DiaryState
from ouro.errors import Conflict
from tests.index_support import append_fact

VOCAB = [
    "ant",
    "bee",
    "cat",
    "dog",
    "eel",
    "fox",
    "gnu",
    "hen",
    "ibis",
    "jay",
    "kiwi",
    "lark",
    "mole",
    "newt",
]
ENTITIES = ["ari", "bo", "cy", "dee"]


def _restored(bundle: Bundle) -> DiaryState:
    state = DiaryState(record.facts_path(bundle))
    state.snapshot = record.state_snapshot_path(bundle)
    state.sync()
    return state


def _fresh(bundle: Bundle) -> DiaryState:
    state = DiaryState(record.facts_path(bundle))
    state.sync()
    return state


def _text(rng: random.Random) -> str:
    # few words from a small vocabulary: near-duplicates are common
    words = rng.sample(VOCAB, rng.randint(2, 6))
    return " ".join(w.upper() if rng.random() < 0.1 else w for w in words) + rng.choice(["", "."])


class _Log:
    """Writes random facts as outside lines; ``near`` answers from the log itself."""

    def __init__(self, bundle: Bundle, rng: random.Random) -> None:
        self.bundle, self.rng = bundle, rng
        self.ids: list[str] = []

    def append(self, n: int) -> None:
        rng = self.rng
        for _ in range(n):
            fid = f"f-{len(self.ids):05d}"
            about = rng.sample(ENTITIES, rng.choice([0, 1, 1, 1, 2]))
            target = rng.choice(self.ids) if self.ids and rng.random() < 0.15 else None
            append_fact(self.bundle, fid, _text(rng), about, supersedes=target)
            self.ids.append(fid)

    def near(self, text: str, about: tuple[str, ...], exclude: str | None) -> str | None:
        """The earliest active fact sharing an entity whose overlap exceeds the threshold."""
        toks = tokens(text)
        lines = [orjson.loads(raw) for raw in record.facts_path(self.bundle).open("rb")]
        superseded = {line["supersedes"] for line in lines if "supersedes" in line}
        for line in lines:
            if line["id"] == exclude or line["id"] in superseded:
                continue
            if (
                set(about) & set(line["about"])
                and overlap(toks, tokens(line["text"])) > NEAR_THRESHOLD
            ):
                return str(line["id"])
        return None


def _save(state: DiaryState, *entities: str) -> None:
    """Save the snapshot now, with the token index of these entities built or decoded."""
    state.index_entities(entities)
    assert state.snapshot is not None
    assert state._save_snapshot(state.snapshot)


def _queries(
    rng: random.Random, log: _Log, n: int
) -> list[tuple[str, tuple[str, ...], str | None]]:
    out = []
    for _ in range(n):
        about = tuple(rng.sample([*ENTITIES, "newcomer"], rng.randint(1, 3)))
        exclude = rng.choice(log.ids) if rng.random() < 0.3 else None
        out.append((_text(rng), about, exclude))
    return out


def _decisions(
    state: DiaryState, queries: list[tuple[str, tuple[str, ...], str | None]]
) -> list[object]:
    out: list[object] = []
    for text, about, exclude in queries:
        hit = state.near(tokens(text), about, exclude)
        out.append(hit[0] if hit else None)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_a_restored_index_decides_as_a_replay_of_the_log(bundle: Bundle, seed: int) -> None:
    rng = random.Random(seed)
    log = _Log(bundle, rng)
    log.append(60)
    first = _restored(bundle)  # no snapshot yet: replays the log
    _save(first, *rng.sample(ENTITIES, 2))  # an index saved for some entities only
    log.append(25)  # facts after that save (some supersede saved facts)
    middle = _restored(bundle)
    assert middle.snapshot_offset > 0
    # saved again by a process that decoded one index, read more lines (indexed as
    # they come) and carries the other indexes forward: a later process finds
    # indexes covering fewer ids than the entity has
    middle.index_entities([rng.choice(ENTITIES)])
    log.append(10)
    middle.sync()
    _save(middle, rng.choice(ENTITIES))
    log.append(25)
    restored, fresh = _restored(bundle), _fresh(bundle)
    assert restored.postings_refs  # there is a saved index to use
    queries = _queries(rng, log, 40)
    expected = [log.near(text, about, exclude) for text, about, exclude in queries]
    assert _decisions(fresh, queries) == expected
    assert _decisions(restored, queries) == expected
    assert any(p.covered for p in restored.postings.values())  # it used a saved index
    # lines read after the index was decoded are indexed as they are read
    log.append(20)
    restored.sync()
    queries = _queries(rng, log, 40)
    expected = [log.near(text, about, exclude) for text, about, exclude in queries]
    assert _decisions(restored, queries) == expected


def test_a_restored_index_reads_only_the_candidates_texts(bundle: Bundle) -> None:
    for n in range(40):
        append_fact(bundle, f"f-{n:03d}", f"ari uses tool{n} for job{n}", ["ari"])
    state = _restored(bundle)
    _save(state, "ari")
    restored = _restored(bundle)
    assert restored.near(tokens("ari uses tool7 for job7 today"), ("ari",), None) == (
        "f-007",
        5 / 6,
    )
    assert restored.postings["ari"].covered == 40
    assert len(restored.texts) < 5  # the candidates', not the entity's 40 texts
    assert restored.tokenised == 0


def test_a_snapshot_from_before_a_rewrite_is_not_used(bundle: Bundle) -> None:
    rng = random.Random(11)
    log = _Log(bundle, rng)
    log.append(40)
    state = _restored(bundle)
    _save(state, *ENTITIES)
    path = record.facts_path(bundle)
    lines = path.read_bytes().splitlines(keepends=True)
    # rewritten: the fourth line's text changed, one fact dropped, then more appended
    edited = lines[3].replace(b'"text":"', b'"text":"ant bee cat dog ')
    path.write_bytes(b"".join([*lines[:3], edited, *lines[5:]]))
    log.append(10)
    restored, fresh = _restored(bundle), _fresh(bundle)
    assert restored.snapshot_seen is not None and not restored.postings_refs  # reset: unused
    queries = [*_queries(rng, log, 30), ("ant bee cat dog", ("ari", "bo", "cy", "dee"), None)]
    expected = [log.near(text, about, exclude) for text, about, exclude in queries]
    assert _decisions(restored, queries) == _decisions(fresh, queries) == expected
    assert all(not p.covered for p in restored.postings.values())


def test_a_damaged_index_is_not_trusted(bundle: Bundle) -> None:
    for n in range(30):
        append_fact(bundle, f"f-{n:03d}", f"bo keeps crate{n} in shed{n}", ["bo"])
    state = _restored(bundle)
    _save(state, "bo")
    snap = record.state_snapshot_path(bundle)
    start, size = _restored(bundle).postings_refs["bo"]
    data = bytearray(snap.read_bytes())
    for at in (start + size - 3, start + 2, start + factstate._POSTINGS_DIGEST + 5):
        damaged = bytearray(data)
        damaged[at] ^= 0x55
        snap.write_bytes(bytes(damaged))
        restored = _restored(bundle)
        assert restored.snapshot_offset > 0  # the rest of the snapshot is used
        hit = restored.near(tokens("bo keeps crate12 in shed12 now"), ("bo",), None)
        assert hit == _fresh(bundle).near(tokens("bo keeps crate12 in shed12 now"), ("bo",), None)
        assert hit is not None and hit[0] == "f-012"
        assert restored.postings["bo"].covered == 0  # rebuilt from the texts
        assert len(restored.texts) == 30
        assert restored.tokenised == 30
    # the next save writes a sound index again
    assert restored._save_snapshot(snap)
    again = _restored(bundle)
    again.index_entities(["bo"])
    assert again.postings["bo"].covered == 30


def test_a_process_that_had_to_tokenise_saves_the_index(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log grew far less than SNAPSHOT_EVERY, but this process read many saved
    facts to index an entity the snapshot had no index for: it saves it."""
    for n in range(12):
        append_fact(bundle, f"f-{n:03d}", f"cy fact number{n}", ["cy"])
    state = _restored(bundle)
    assert state._save_snapshot(state.snapshot)  # no index saved
    monkeypatch.setattr(factstate, "POSTINGS_SAVE_AT", 10)
    restored = _restored(bundle)
    append_fact(bundle, "f-900", "one more line", ["zed"])
    restored.sync()
    assert not restored.save_snapshot()  # the log grew 1 line: nothing to save
    restored.index_entities(["cy"])
    assert restored.tokenised == 12
    assert restored.save_snapshot()
    assert restored.tokenised == 0
    later = _restored(bundle)
    later.index_entities(["cy"])
    assert later.postings["cy"].covered == 12 and later.tokenised == 0


def test_a_fresh_write_refuses_the_same_near_duplicate(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through ``record.write_fact`` in a new process (a cleared state cache)."""
    monkeypatch.setattr(diary_snapshot, "SNAPSHOT_EVERY", 1)
    draft = record.FactDraft
    first = record.write_fact(bundle, draft("dee ships the parser on monday", about=["dee"]))[0]
    record.write_fact(bundle, draft("dee reviews docs on friday", about=["dee"]))
    monkeypatch.setattr(factstate, "_STATES", {})
    with pytest.raises(Conflict) as refused:
        record.write_fact(bundle, draft("dee ships the parser monday", about=["dee"]))
    assert first.fact["id"] in refused.value.message
    state = factstate.state_for(record.facts_path(bundle))
    assert state.postings["dee"].covered == 2  # decided from the saved index
    assert state.tokenised == 0


def _cli_write(bundle: Bundle, text: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "--json"]
    return subprocess.Popen(
        [*argv, "diary", "write", text, "--about", "hub"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_racing_and_killed_processes_keep_the_decisions(bundle: Bundle) -> None:
    """Real processes restoring a saved index: near-duplicates written at once are
    refused across processes; writers killed at random (some while saving the
    index they had to build) leave a snapshot that decides as a replay does."""
    rng = random.Random(3)
    for n in range(3500):  # a busy entity: more facts than POSTINGS_SAVE_AT
        append_fact(bundle, f"f-{n:05d}", f"hub note {n} {' '.join(rng.sample(VOCAB, 4))}", ["hub"])
    _save(_restored(bundle), "hub")
    # four pairs of near-duplicates, each pair written by two processes at once
    texts = [
        f"pair{k} alpha{k} beta{k} gamma{k} delta{k}{end}" for k in range(4) for end in ("", " x")
    ]
    outs = [p.communicate(timeout=120) for p in [_cli_write(bundle, t) for t in texts]]
    answers = [orjson.loads(out) for out, _err in outs]
    written = [a["fact"] for a in answers if "error" not in a]
    refused = [a["error"]["message"] for a in answers if "error" in a]
    assert len(written) == 4 and len(refused) == 4
    assert all("already says nearly this" in message for message in refused)
    for k in range(4):
        assert sum(1 for fact in written if f"pair{k} " in fact["text"]) == 1
    # a snapshot without the hub's index: every fresh writer builds it, one saves it
    _restored(bundle)._save_snapshot(record.state_snapshot_path(bundle))
    procs = [_cli_write(bundle, f"kill{k} {k * 7919} w{k}") for k in range(8)]
    time.sleep(0.05)
    for proc in procs:
        time.sleep(rng.random() * 0.15)
        if rng.random() < 0.6:
            proc.send_signal(signal.SIGKILL)
    for proc in procs:
        proc.communicate(timeout=120)
    restored, fresh = _restored(bundle), _fresh(bundle)
    log = _Log(bundle, rng)
    queries = [
        (text, ("hub",), None)
        for text in [*texts, *(f"kill{k} {k * 7919} w{k}" for k in range(8))]
        + [" ".join(rng.sample(VOCAB, 4)) for _ in range(20)]
    ]
    expected = [log.near(text, about, exclude) for text, about, exclude in queries]
    assert _decisions(restored, queries) == _decisions(fresh, queries) == expected


def test_index_sync_saves_the_busy_entities_index(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log no writer saved a state for (generated, copied): ``index sync`` saves
    one, with the token index of each entity that has POSTINGS_SAVE_AT facts, so
    the first write about such an entity tokenises nothing."""
    monkeypatch.setattr(diary_snapshot, "SNAPSHOT_EVERY", 1)
    monkeypatch.setattr(factstate, "POSTINGS_SAVE_AT", 5)
    monkeypatch.setattr(factstate, "_STATES", {})
    for n in range(6):
        append_fact(bundle, f"f-{n:03d}", f"big fact {n} word{n}", ["big"])
    append_fact(bundle, "f-100", "small fact", ["small"])
    from ouro.derived import sync

    sync(bundle)
    restored = _restored(bundle)
    assert set(restored.postings_refs) == {"big"}
    restored.index_entities(["big"])
    assert restored.postings["big"].covered == 6 and restored.tokenised == 0
    assert restored.near(tokens("big fact 3 word3 again"), ("big",), None) == ("f-003", 0.8)
