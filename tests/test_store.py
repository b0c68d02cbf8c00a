"""File primitives: atomic writes, locked appends, tolerant reads, front matter, locks."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouro.errors import CorruptFile, LockTimeout
from ouro.store import frontmatter
from ouro.store.atomic import atomic_write_bytes, atomic_write_json
from ouro.store.jsonl import append_jsonl, read_jsonl
from ouro.store.lock import FileLock


def _append_many(path: str, worker: int, count: int) -> None:
    for i in range(count):
        append_jsonl(Path(path), [{"worker": worker, "i": i, "pad": "x" * (i % 300)}])


@pytest.mark.slow
def test_eight_processes_append_without_tearing(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(target), w, 500)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    result = read_jsonl(target)
    assert result.bad == []
    assert len(result.records) == 4000
    seen = {(r["worker"], r["i"]) for r in result.records}
    assert seen == {(w, i) for w in range(8) for i in range(500)}
    # per-worker order is preserved
    for w in range(8):
        mine = [r["i"] for r in result.records if r["worker"] == w]
        assert mine == list(range(500))


def test_tolerant_read_reports_bad_lines_and_keeps_them(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    raw = b'{"a": 1}\nnot json\n[1, 2]\n\n{"a": 2}\n{"torn": '
    target.write_bytes(raw)
    result = read_jsonl(target)
    assert [r["a"] for r in result.records] == [1, 2]
    assert [(b.line_no, b.raw) for b in result.bad] == [
        (2, b"not json"),
        (3, b"[1, 2]"),
        (6, b'{"torn": '),
    ]
    assert "log.jsonl:2" in result.bad[0].describe()
    assert target.read_bytes() == raw  # nothing rewritten


def test_append_after_torn_tail_starts_a_new_line(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    target.write_bytes(b'{"a": 1}\n{"torn": ')
    append_jsonl(target, [{"a": 2}])
    result = read_jsonl(target)
    assert [r["a"] for r in result.records] == [1, 2]
    assert [b.line_no for b in result.bad] == [2]


def test_missing_jsonl_is_flagged_not_empty(tmp_path: Path) -> None:
    result = read_jsonl(tmp_path / "nope.jsonl")
    assert result.missing and result.records == []


_WRITER = """
import hashlib, sys
from pathlib import Path
from ouro.store.atomic import atomic_write_bytes
path = Path(sys.argv[1])
i = 0
print("ready", flush=True)
while True:
    i += 1
    body = (str(i) * 100_000)[: 100_000 + i % 5000].encode()
    atomic_write_bytes(path, hashlib.sha256(body).hexdigest().encode() + body)
"""


@pytest.mark.slow
def test_sigkill_during_atomic_writes_leaves_whole_file(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    target = folder / "doc.bin"
    first = b"0" * 10
    atomic_write_bytes(target, hashlib.sha256(first).hexdigest().encode() + first)
    for run in range(50):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(0.005 + (run % 7) * 0.003)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        data = target.read_bytes()
        digest, body = data[:64], data[64:]
        assert hashlib.sha256(body).hexdigest().encode() == digest, f"run {run}: torn file"
    leftovers = [p.name for p in folder.iterdir() if p.name != "doc.bin"]
    assert all(name.endswith(".tmp") for name in leftovers)  # only a killed writer's temp files


def test_atomic_write_json_is_canonical(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.json"
    atomic_write_json(target, {"b": 1, "a": [1, 2]})
    assert target.read_bytes() == b'{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]


def test_frontmatter_round_trip_keeps_dates_as_strings() -> None:
    text = frontmatter.render({"title": "x", "created": "2026-11-30", "tags": ["a"]}, "body\n")
    meta, body = frontmatter.parse(text)
    assert meta == {"title": "x", "created": "2026-11-30", "tags": ["a"]}
    assert body == "body\n"
    assert frontmatter.render(meta, body) == text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    meta=st.dictionaries(st.text(min_size=1, max_size=10), json_values, max_size=5),
    body=st.text(max_size=200),
)
def test_frontmatter_round_trip_property(meta: dict[str, object], body: str) -> None:
    text = frontmatter.render(meta, body)
    parsed_meta, parsed_body = frontmatter.parse(text)
    if meta:
        assert parsed_meta == meta
        assert parsed_body == body
        assert frontmatter.render(parsed_meta, parsed_body) == text


KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(max_size=30)
    | st.sampled_from(["yes", "No", "on", "null", "~", "1.5", "1:20", "0x1f", "a: b", "x #y"])
    | st.sampled_from(["2026-03-01", "2026-03-01T10:05:00.000Z", "-", "[]", "{}", "'q'", "e5"])
)


@settings(max_examples=300, deadline=None)
@given(meta=st.dictionaries(KEYS, SCALARS | st.lists(SCALARS, max_size=2), max_size=6))
def test_fast_front_matter_equals_yaml_for_what_ouro_writes(meta: dict[str, object]) -> None:
    block = frontmatter.dump_yaml(meta)
    fast = frontmatter.fast_meta(block)
    if fast is not None:
        assert fast == frontmatter.load_yaml(block)
        assert [type(v) for v in fast.values()] == [
            type(v) for v in frontmatter.load_yaml(block).values()
        ]


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(
        st.tuples(KEYS, st.text(max_size=24) | SCALARS.map(str)), min_size=1, max_size=5
    ),
    sep=st.sampled_from([": ", ":", ":  "]),
)
def test_fast_front_matter_equals_yaml_on_hand_written_lines(
    lines: list[tuple[str, str]], sep: str
) -> None:
    """Hand-written front matter: the fast reader answers exactly as YAML or steps aside."""
    block = "".join(f"{k}{sep}{v}\n" for k, v in lines)
    fast = frontmatter.fast_meta(block)
    if fast is None:
        return
    try:
        slow = frontmatter.load_yaml(block)
    except CorruptFile:
        raise AssertionError(f"fast reader accepted what YAML refuses: {block!r}") from None
    assert fast == slow
    assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]


@settings(max_examples=400, deadline=None)
@given(
    items=st.lists(st.text(max_size=16) | SCALARS.map(str), min_size=1, max_size=4),
    before=st.sampled_from(["", "title: x\n", "tags: a\n"]),
    after=st.sampled_from(["", "created: '2026-01-01'\n", "- z\n", "  - z\n", "x: [a]\n"]),
)
def test_fast_front_matter_block_lists_equal_yaml(
    items: list[str], before: str, after: str
) -> None:
    """``key:`` then ``- item`` lines (a note's tags): read like YAML, or left to YAML."""
    block = before + "tags:\n" + "".join(f"- {item}\n" for item in items) + after
    fast = frontmatter.fast_meta(block)
    if fast is None:
        return
    try:
        slow = frontmatter.load_yaml(block)
    except CorruptFile:
        raise AssertionError(f"fast reader accepted what YAML refuses: {block!r}") from None
    assert fast == slow
    assert [type(v) for v in fast["tags"]] == [type(v) for v in slow["tags"]]


def test_fast_front_matter_reads_a_note_with_tags() -> None:
    meta = {"title": "A note", "tags": ["ops", "deploy notes", "x-1"], "created": "2026-01-01"}
    block = frontmatter.dump_yaml(meta)
    assert "- ops\n" in block
    assert frontmatter.fast_meta(block) == meta == frontmatter.load_yaml(block)


def test_fast_front_matter_reads_the_task_shape_ouro_writes() -> None:
    meta = {
        "id": "t-01abc",
        "title": "Fix it, then ship: it's done",
        "status": "open",
        "priority": 2,
        "track": "ops",
        "created": "2026-03-01T10:05:00.000Z",
        "claimedBy": None,
        "acceptance": 'says "yes"',
        "history": [],
    }
    block = frontmatter.dump_yaml(meta)
    assert frontmatter.fast_meta(block) == meta == frontmatter.load_yaml(block)
    assert frontmatter.fast_meta(block + "history:\n- at: x\n") is None  # nested: YAML reads it


WANTED = frozenset({"id", "title", "status", "priority"})


@settings(max_examples=300, deadline=None)
@given(
    meta=st.dictionaries(
        KEYS | st.sampled_from(sorted(WANTED)),
        SCALARS | st.lists(SCALARS | st.dictionaries(KEYS, SCALARS, max_size=2), max_size=2),
        max_size=7,
    )
)
def test_fast_fields_skip_nested_blocks_and_equal_yaml(meta: dict[str, object]) -> None:
    """Only the wanted keys are read; a nested block elsewhere (a task's history) is skipped."""
    block = frontmatter.dump_yaml(meta)
    fast = frontmatter.fast_fields(block, WANTED)
    if fast is None:
        return
    slow = frontmatter.load_yaml(block)
    assert fast == {k: v for k, v in slow.items() if k in WANTED}
    assert [type(v) for v in fast.values()] == [type(slow[k]) for k in fast]


def test_fast_fields_read_a_task_with_history() -> None:
    meta = {
        "id": "t-1",
        "title": "Ship it",
        "status": "active",
        "priority": 1,
        "history": [{"at": "2026-01-01T00:00:00.000Z", "event": "status", "to": "active"}],
    }
    block = frontmatter.dump_yaml(meta)
    assert frontmatter.fast_fields(block, WANTED) == {k: meta[k] for k in WANTED}
    assert frontmatter.fast_fields(block, WANTED | {"history"}) is None  # not plain: YAML's job


def test_frontmatter_errors_name_the_line() -> None:
    with pytest.raises(CorruptFile, match=r"task\.md:1"):
        frontmatter.parse("---\ntitle: x\n", source="task.md")
    with pytest.raises(CorruptFile, match=r"task\.md"):
        frontmatter.parse("---\ntitle: [unclosed\n---\n", source="task.md")


def _hold_lock(path: str, started: object) -> None:
    with FileLock(Path(path), purpose="holding for test"):
        started.set()  # type: ignore[attr-defined]
        time.sleep(3)


@pytest.mark.slow
def test_lock_timeout_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(path), started))
    proc.start()
    try:
        assert started.wait(30)
        with pytest.raises(LockTimeout) as info, FileLock(path, timeout=0.2):
            pass
        assert f"pid={proc.pid}" in info.value.message
        assert "holding for test" in info.value.message
        assert info.value.hint
    finally:
        proc.join(10)
    with FileLock(path, timeout=1):
        pass


def test_jsonl_lines_are_single_objects(tmp_path: Path) -> None:
    target = tmp_path / "x.jsonl"
    append_jsonl(target, [{"text": "line\nbreak"}, {"n": 2}])
    lines = target.read_bytes().splitlines()
    assert [orjson.loads(x) for x in lines] == [{"text": "line\nbreak"}, {"n": 2}]
    assert os.path.getsize(target) == sum(len(x) + 1 for x in lines)
