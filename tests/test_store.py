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


def _doc(block: str) -> str:
    return f"---\n{block}---\nbody\n"


def _as_yaml_reads(block: str, keys: frozenset[str] | None = None) -> dict[str, object] | None:
    """What YAML reads from the block (only ``keys``), or None when it refuses it."""
    try:
        value = frontmatter.load_yaml(block)
    except CorruptFile:
        return None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return None
    return value if keys is None else {k: v for k, v in value.items() if k in keys}


def _reads_as_yaml(block: str, keys: frozenset[str] | None = None) -> None:
    expected = _as_yaml_reads(block, keys)
    if expected is None:
        with pytest.raises(CorruptFile):
            frontmatter.parse(_doc(block), keys=keys)
        return
    meta, body = frontmatter.parse(_doc(block), keys=keys)
    assert body == "body\n"
    assert meta == expected
    assert [type(v) for v in meta.values()] == [type(expected[k]) for k in meta]
    for key, value in meta.items():
        if isinstance(value, list):
            assert [type(v) for v in value] == [type(v) for v in expected[key]]  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(meta=st.dictionaries(KEYS, SCALARS | st.lists(SCALARS, max_size=2), max_size=6))
def test_front_matter_reads_as_yaml_for_what_ouro_writes(meta: dict[str, object]) -> None:
    _reads_as_yaml(frontmatter.dump_yaml(meta))


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(
        st.tuples(KEYS, st.text(max_size=24) | SCALARS.map(str)), min_size=1, max_size=5
    ),
    sep=st.sampled_from([": ", ":", ":  "]),
)
def test_front_matter_reads_hand_written_lines_as_yaml(
    lines: list[tuple[str, str]], sep: str
) -> None:
    """Hand-written front matter: the reader answers exactly as YAML, refusals included."""
    _reads_as_yaml("".join(f"{k}{sep}{v}\n" for k, v in lines))


@settings(max_examples=400, deadline=None)
@given(
    items=st.lists(st.text(max_size=16) | SCALARS.map(str), min_size=1, max_size=4),
    before=st.sampled_from(["", "title: x\n", "tags: a\n"]),
    after=st.sampled_from(["", "created: '2026-01-01'\n", "- z\n", "  - z\n", "x: [a]\n"]),
)
def test_front_matter_block_lists_read_as_yaml(items: list[str], before: str, after: str) -> None:
    """``key:`` then ``- item`` lines (a note's tags)."""
    _reads_as_yaml(before + "tags:\n" + "".join(f"- {item}\n" for item in items) + after)


NOTE = {"title": "A note", "tags": ["ops", "deploy notes", "x-1"], "created": "2026-01-01"}
TASK = {
    "id": "t-01abc",
    "title": "Fix it, then ship: it's done",
    "status": "open",
    "priority": 2,
    "track": "ops",
    "created": "2026-03-01T10:05:00.000Z",
    "claimedBy": None,
    "acceptance": 'says "yes"',
    "history": [{"at": "2026-01-01T00:00:00.000Z", "event": "status", "to": "active"}],
}
WANTED = frozenset({"id", "title", "status", "priority"})


def test_front_matter_reads_notes_and_tasks() -> None:
    assert "- ops\n" in frontmatter.dump_yaml(NOTE)
    assert frontmatter.parse(frontmatter.render(NOTE, "b\n")) == (NOTE, "b\n")
    assert frontmatter.parse(frontmatter.render(TASK, "b\n")) == (TASK, "b\n")
    head = frontmatter.parse(frontmatter.render(TASK, "b\n"), keys=WANTED)[0]
    assert head == {k: TASK[k] for k in WANTED}
    with_history = frontmatter.parse(frontmatter.render(TASK, ""), keys=WANTED | {"history"})[0]
    assert with_history["history"] == TASK["history"]


def test_front_matter_in_ouros_shape_is_read_without_yaml() -> None:
    """The cheap path is taken for what ouro writes (cold reads must not import PyYAML)."""
    plain = {**TASK, "history": []}
    docs = [frontmatter.render(NOTE, "b\n"), frontmatter.render(plain, "b\n")]
    code = (
        "import sys\n"
        "from ouro.store import frontmatter\n"
        f"for doc in {docs!r}:\n"
        "    frontmatter.parse(doc)\n"
        f"frontmatter.parse({frontmatter.render(TASK, '')!r}, keys=frozenset({sorted(WANTED)!r}))\n"
        "assert 'yaml' not in sys.modules, 'the plain shape went through PyYAML'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_front_matter_lines_read_before_give_the_same_values_and_fresh_lists() -> None:
    """Short lines are remembered from file to file (a rebuild reads 15k front
    matters): a second read answers as the first, and an empty list or mapping,
    at the top or in a block list, is a new object each time."""
    text = "---\nstatus: open\nhistory: []\nextra: {}\ntags:\n- ops\n- []\n---\nb\n"
    first, _ = frontmatter.parse(text)
    first["history"].append("changed")
    first["extra"]["k"] = 1
    first["tags"][1].append("changed")
    second, _ = frontmatter.parse(text)
    want = {"status": "open", "history": [], "extra": {}, "tags": ["ops", []]}
    assert second == want == frontmatter.load_yaml(text.split("---\n")[1])
    assert second["history"] is not first["history"]


@settings(max_examples=300, deadline=None)
@given(
    meta=st.dictionaries(
        KEYS | st.sampled_from(sorted(WANTED)),
        SCALARS | st.lists(SCALARS | st.dictionaries(KEYS, SCALARS, max_size=2), max_size=2),
        max_size=7,
    )
)
def test_front_matter_keys_read_as_yaml(meta: dict[str, object]) -> None:
    """Only the wanted keys; a nested block elsewhere (a task's history) is skipped."""
    _reads_as_yaml(frontmatter.dump_yaml(meta), WANTED)


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
