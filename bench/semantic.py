"""Bench: search by meaning (``ouro-bundle[semantic]``) against lexical search, same run.

    python bench/semantic.py [--quality-only] [--scale 1.0] [--bundle PATH] [--queries 40]

1. Quality, on the labelled set ``bench/data/retrieval.json`` (256 record items,
   316 queries: 161 paraphrases, 158 of them sharing no content word with their
   answer, 155 keyword queries; ``check_set`` says what the set must hold). The items are written
   through the tool registry (``diary_write``, ``notes_write``,
   ``desk_task_add``, ``desk_friction_add``, ``desk_tip_add``) into a scratch
   bundle; each query runs through ``desk_search`` in lexical, semantic and
   hybrid mode. Printed: recall@5 and MRR@10 per query type and for the
   "disjoint" paraphrases (no content word shared with the answer).
   Goal: hybrid >> lexical on paraphrases, hybrid >= lexical on keywords.
2. Scale, on ``bench/corpus.py`` (100k facts + 10k notes + 5k tasks at scale 1):
   the FTS5 index build (``rebuild``) against the embedding build of the same
   docs (``embed_bundle``), index size without and with vectors,
   ``desk_search`` p50 in-process hybrid against lexical (interleaved, warm),
   the same right after a ``diary_write`` (the search must find the new fact),
   cold CLI searches before and after those writes, and ``diary_write`` p50 before and after the vectors exist (write-through
   never embeds; goal: unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.index.search import desk_search

DATA = Path(__file__).resolve().parent / "data" / "retrieval.json"
NEAR = Path(__file__).resolve().parent / "data" / "near_duplicates.tsv"
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "without",
        "from",
        "into",
        "and",
        "or",
        "not",
        "no",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "done",
        "we",
        "our",
        "us",
        "you",
        "your",
        "i",
        "my",
        "me",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "each",
        "every",
        "any",
        "all",
        "some",
        "most",
        "more",
        "less",
        "many",
        "much",
        "than",
        "then",
        "so",
        "as",
        "if",
        "about",
        "after",
        "before",
        "until",
        "up",
        "down",
        "out",
        "over",
        "under",
        "again",
        "once",
        "only",
        "own",
        "same",
        "too",
        "very",
        "just",
        "get",
        "got",
        "gets",
        "make",
        "makes",
        "made",
        "let",
        "lets",
        "has",
        "have",
        "had",
        "one",
        "two",
        "per",
        "new",
        "old",
    ]
)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:6]


def content(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    texts = {item["id"]: item["text"] for item in data["items"]}
    for q in data["queries"]:
        q["disjoint"] = not (content(q["query"]) & content(texts[q["answer"]]))
    return data


#: what the labelled set must hold (``check_set``; tests/test_semantic.py runs it)
MIN_QUERIES = 300


def check_set(data: dict[str, Any]) -> list[str]:
    """Problems of the labelled set: fewer than ``MIN_QUERIES`` queries, fewer
    than half of them sharing no content word with their answer, a kind other
    than what agents write, an answer that is no item, a paraphrase that is not
    disjoint from its answer, a keyword query sharing no word with it."""
    kinds = {"fact", "note", "task", "friction", "tip"}
    texts = {item["id"]: item["text"] for item in data["items"]}
    problems = [
        f"item {i['id']}: kind {i['kind']!r}" for i in data["items"] if i["kind"] not in kinds
    ]
    queries = data["queries"]
    if len(queries) < MIN_QUERIES:
        problems.append(f"{len(queries)} queries, fewer than {MIN_QUERIES}")
    disjoint = 0
    for q in queries:
        answer = texts.get(q["answer"])
        if answer is None:
            problems.append(f"query {q['query']!r}: answer {q['answer']!r} is no item")
            continue
        shared = content(q["query"]) & content(answer)
        disjoint += not shared
        if q["type"] == "keyword" and not shared:
            problems.append(f"keyword query {q['query']!r} shares no word with its answer")
    if 2 * disjoint < len(queries):
        problems.append(f"{disjoint} of {len(queries)} queries share no content word: under half")
    return problems


def write_items(bundle: Bundle, items: list[dict[str, Any]]) -> dict[str, str]:
    """Write every item through the tool registry; returns locator -> item id."""
    by_locator: dict[str, str] = {}
    for item in items:
        kind, text = item["kind"], item["text"]
        if kind == "fact":
            out = invoke("diary_write", bundle, {"text": text, "force": True})
            by_locator[out["locator"]] = item["id"]
            continue
        if kind == "note":
            title, _, body = text.partition(". ")
            out = invoke("notes_write", bundle, {"title": title, "body": body or title})
        elif kind == "task":
            out = invoke("desk_task_add", bundle, {"track": "work", "title": text})
        elif kind == "friction":
            out = invoke("desk_friction_add", bundle, {"title": text})
        else:
            out = invoke("desk_tip_add", bundle, {"title": text})
        by_locator[out.get("locator") or out["task"]["locator"]] = item["id"]
    return by_locator


def quality(work: Path) -> dict[str, Any]:
    import ouro

    data = load()
    bundle = Bundle.init(work / "labelled.ouro", agent="bench")
    invoke("desk_track_add", bundle, {"name": "work"})
    by_locator = write_items(bundle, data["items"])
    # index the items (a write updates only an index that exists) and compute their vectors
    ouro.open(bundle.root).index.sync()
    groups = {
        "paraphrase": [q for q in data["queries"] if q["type"] == "paraphrase"],
        "paraphrase, disjoint": [q for q in data["queries"] if q["disjoint"]],
        "keyword": [q for q in data["queries"] if q["type"] == "keyword"],
        "all": data["queries"],
    }
    print(
        f"labelled set: {len(data['items'])} items, {len(data['queries'])} queries "
        f"({len(groups['paraphrase'])} paraphrase, {len(groups['paraphrase, disjoint'])} "
        f"sharing no content word with their answer, {len(groups['keyword'])} keyword)"
    )
    ranks: dict[str, dict[int, int | None]] = {}
    for mode in ("lexical", "semantic", "hybrid"):
        ranks[mode] = {}
        for n, q in enumerate(data["queries"]):
            hits = desk_search(bundle.root, q["query"], limit=10, mode=mode)["results"]
            found = [by_locator.get(h["locator"]) for h in hits]
            ranks[mode][n] = found.index(q["answer"]) + 1 if q["answer"] in found else None
    index = {id(q): n for n, q in enumerate(data["queries"])}
    table: dict[str, Any] = {}
    print(f"{'queries':<22} {'mode':<9} {'recall@5':>9} {'MRR@10':>8}")
    for name, qs in groups.items():
        for mode in ("lexical", "semantic", "hybrid"):
            rs = [ranks[mode][index[id(q)]] for q in qs]
            recall = sum(1 for r in rs if r is not None and r <= 5) / len(rs)
            mrr = sum(1 / r for r in rs if r is not None) / len(rs)
            table[f"{name}/{mode}"] = {"recall@5": recall, "mrr@10": mrr}
            print(f"{name:<22} {mode:<9} {recall:>9.3f} {mrr:>8.3f}")
    cold_cli(bundle, [q["query"] for q in data["queries"][::7]], 10, "(the labelled bundle)")
    return table


def near_duplicates() -> None:
    """The diary.near = meaning threshold on 80 labelled pairs (1: a restatement of
    the existing fact, 0: a different fact about the same thing)."""
    from ouro.desk.factnorm import NEAR_THRESHOLD, overlap, tokens
    from ouro.embedding import NEAR_COSINE, model

    rows = [line.split("\t") for line in NEAR.read_text(encoding="utf-8").splitlines()[1:]]
    vecs = model().embed([r[1] for r in rows] + [r[2] for r in rows])
    half = len(rows)
    cosines = [float(vecs[i] @ vecs[half + i]) for i in range(half)]
    dups = [i for i, r in enumerate(rows) if r[0] == "1"]
    others = [i for i, r in enumerate(rows) if r[0] == "0"]
    words = [overlap(tokens(r[1]), tokens(r[2])) > NEAR_THRESHOLD for r in rows]
    print(
        f"near-duplicates ({len(dups)} restatements, {len(others)} different facts): "
        f"words (overlap > {NEAR_THRESHOLD}) catch {sum(words[i] for i in dups)}, refuse "
        f"{sum(words[i] for i in others)} wrongly"
    )
    for t in (0.7, 0.75, NEAR_COSINE, 0.85, 0.9):
        print(
            f"  meaning, cosine >= {t:.2f}: catch {sum(cosines[i] >= t for i in dups)}, "
            f"refuse {sum(cosines[i] >= t for i in others)} wrongly"
            + ("  <- diary.near = meaning" if t == NEAR_COSINE else "")
        )


def pct_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def after_writes(bundle: Bundle, queries: list[str]) -> None:
    """An agent's loop: a diary_write, then a search that must see it (lexically
    and, in hybrid, by meaning: the search embeds the new fact), per mode,
    interleaved."""
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for i, q in enumerate(queries):
        for mode in ("lexical", "hybrid"):
            text = f"bench loop {mode} {i}: {q} ({os.getpid()})"
            fid = invoke("diary_write", bundle, {"text": text, "force": True})["fact"]["id"]
            started = time.perf_counter()
            out = desk_search(bundle.root, text, mode=mode)
            times[mode].append(time.perf_counter() - started)
            if not any(h["locator"].endswith(f"#{fid}") for h in out["results"]):
                sys.exit(f"bench/semantic.py: the fact just written was not found ({mode})")
    print(
        f"desk_search right after a diary_write, in-process: hybrid p50 "
        f"{p50_ms(times['hybrid']):.2f} ms (p95 {pct_ms(times['hybrid'], 0.95):.2f}), lexical "
        f"p50 {p50_ms(times['lexical']):.2f} ms (p95 {pct_ms(times['lexical'], 0.95):.2f}) "
        f"(same run, interleaved, {len(queries)} writes each; goal hybrid <= 10 ms)"
    )


def cold_cli(bundle: Bundle, queries: list[str], runs: int, label: str = "") -> None:
    import subprocess

    base = [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "desk", "search"]
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for i in range(runs):
        for mode in ("lexical", "hybrid"):
            started = time.perf_counter()
            subprocess.run(
                [*base, queries[i % len(queries)], "--json", "--mode", mode],
                check=True,
                capture_output=True,
            )
            times[mode].append(time.perf_counter() - started)
    print(
        f"cold 'ouro desk search --json' p50: hybrid {p50_ms(times['hybrid']):.0f} ms, "
        f"lexical {p50_ms(times['lexical']):.0f} ms (interleaved, {runs} runs each)"
        + (f" {label}" if label else "")
    )


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def compact_size(root: Path, work: Path) -> int:
    """Bytes of the index database written compactly (``VACUUM INTO``): a
    rebuild leaves the pages of dropped vectors free inside the file."""
    from ouro.index import db

    target = work / "compact.sqlite3"
    target.unlink(missing_ok=True)
    conn = db.open_db(root)
    try:
        conn.execute("VACUUM INTO ?", (str(target),))
    finally:
        conn.close()
    size = target.stat().st_size
    target.unlink()
    return size


def scale(
    work: Path, factor: float, bundle_path: Path | None, nqueries: int, reuse: bool = False
) -> None:
    from corpus import build_corpus

    from ouro.index import db
    from ouro.index.semantic import embed_bundle
    from ouro.index.sync import rebuild

    if reuse:
        assert bundle_path is not None, "--reuse needs --bundle"
        reused(Bundle.open(bundle_path), work, nqueries)
        return
    if bundle_path is not None and bundle_path.exists():
        bundle = Bundle.open(bundle_path)
    else:
        started = time.perf_counter()
        bundle = build_corpus(
            bundle_path or work / "corpus.ouro",
            facts=int(100_000 * factor),
            notes=int(10_000 * factor),
            tasks=int(5_000 * factor),
            events=int(10_000 * factor),
        )
        print(f"corpus built in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    report = rebuild(bundle)
    fts_s = time.perf_counter() - started
    size_fts = compact_size(bundle.root, work)
    writes_before = diary_writes(bundle, 40, "before")
    started = time.perf_counter()
    vectors = embed_bundle(bundle.root)
    embed_s = time.perf_counter() - started
    conn = db.open_db(bundle.root)
    docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
    conn.close()
    size_all = compact_size(bundle.root, work)
    print(f"index: {docs} docs, {report.facts_added} facts")
    print(
        f"FTS5 index build (rebuild) {fts_s:.2f}s; embedding build of the same docs "
        f"{embed_s:.2f}s ({vectors and vectors['embedded']} vectors) = {embed_s / fts_s:.2f}x"
    )
    print(
        f"index size: {size_fts / 1e6:.1f} MB without vectors, {size_all / 1e6:.1f} MB with "
        f"(+{(size_all - size_fts) / 1e6:.1f} MB)"
    )
    rng = random.Random(11)
    data = load()
    queries = [q["query"] for q in rng.sample(data["queries"], nqueries)]
    for mode in ("lexical", "hybrid"):  # warm: connection, model, vectors in memory
        desk_search(bundle.root, queries[0], mode=mode)
    times: dict[str, list[float]] = {"lexical": [], "hybrid": [], "semantic": []}
    for q in queries:
        for mode in ("lexical", "hybrid", "semantic"):
            started = time.perf_counter()
            desk_search(bundle.root, q, mode=mode)
            times[mode].append(time.perf_counter() - started)
    print(
        f"desk_search p50 in-process: hybrid {p50_ms(times['hybrid']):.2f} ms, semantic "
        f"{p50_ms(times['semantic']):.2f} ms, lexical {p50_ms(times['lexical']):.2f} ms "
        f"(same run, interleaved, {nqueries} queries; goal hybrid <= 15 ms)"
    )
    cold_cli(bundle, queries, 8)
    after_writes(bundle, queries)
    cold_cli(bundle, queries, 8, "after those writes")
    writes_after = diary_writes(bundle, 40, "after")
    print(
        f"diary_write p50: {p50_ms(writes_after):.2f} ms with vectors in the index, "
        f"{p50_ms(writes_before):.2f} ms before they existed (write-through never embeds)"
    )


def reused(bundle: Bundle, work: Path, nqueries: int) -> None:
    """The scale rows on a bundle whose vectors are built (``ouro index sync``
    ran; its time and peak RSS are measured outside, see docs/index.md):
    sizes, the build rate against the model's own inference on a sample,
    the two-stage scan against the exact one, in-process p50, cold CLI."""
    from ouro.index import db, semantic

    conn = db.open_db(bundle.root)
    docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
    vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    conn.close()
    index_file = db.db_file(bundle.root)
    vec_file = Path(semantic.vector_file(index_file))
    rng = random.Random(11)
    data = load()
    queries = [q["query"] for q in rng.sample(data["queries"], nqueries)]
    desk_search(bundle.root, queries[0], mode="hybrid")  # heals a missing vector file
    print(
        f"index: {docs} docs, {vectors} vectors; vector file {vec_file.stat().st_size / 1e6:.1f} MB "
        f"(float16 rows, int8 coarse codes); index database {Path(index_file).stat().st_size / 1e6:.1f} MB"
    )
    build_rate(index_file)
    two_stage(bundle, queries)
    for mode in ("lexical", "hybrid"):
        desk_search(bundle.root, queries[0], mode=mode)
    times: dict[str, list[float]] = {"lexical": [], "hybrid": [], "semantic": []}
    for q in queries:
        for mode in ("lexical", "hybrid", "semantic"):
            started = time.perf_counter()
            desk_search(bundle.root, q, mode=mode)
            times[mode].append(time.perf_counter() - started)
    print(
        f"desk_search p50 in-process at {docs} docs: hybrid {p50_ms(times['hybrid']):.2f} ms, "
        f"semantic {p50_ms(times['semantic']):.2f} ms, lexical {p50_ms(times['lexical']):.2f} ms "
        f"(same run, interleaved, {nqueries} queries; goal hybrid <= 15 ms)"
    )
    cold_cli(bundle, queries, 8)


def build_rate(index_file: str, count: int = 400) -> None:
    """ouro's embedding (``Model.embed``, as ``catch_up`` calls it) against the
    model's own inference (``bench/search.py: bare_embed``), on the same first
    ``count`` docs' texts, alternating, best of 2."""
    import sqlite3

    from search import bare_embed

    from ouro.embedding import model
    from ouro.index import semantic

    sample = Path(tempfile.mkdtemp()) / "sample.sqlite3"
    src = sqlite3.connect(f"file:{index_file}?mode=ro", uri=True)
    kinds = ",".join(f"'{k}'" for k in semantic.KINDS)
    rows = src.execute(
        f"SELECT d.id, d.kind, f.title, f.body, f.keys FROM docs d JOIN docs_fts f ON f.rowid = d.id "
        f"WHERE d.kind IN ({kinds}) ORDER BY random() LIMIT ?",
        (count,),
    ).fetchall()
    src.close()
    dst = sqlite3.connect(sample)
    dst.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, kind TEXT)")
    dst.execute("CREATE TABLE docs_fts (rowid INTEGER PRIMARY KEY, title, body, keys)")
    dst.executemany("INSERT INTO docs VALUES (?, ?)", [r[:2] for r in rows])
    dst.executemany("INSERT INTO docs_fts VALUES (?, ?, ?, ?)", [(r[0], *r[2:]) for r in rows])
    dst.commit()
    dst.close()
    texts = [semantic.doc_text(*r[2:]) for r in sorted(rows)]
    ours: list[float] = []
    base: list[float] = []
    model().embed(texts[:40])
    for _ in range(2):
        started = time.perf_counter()
        for at in range(0, len(texts), semantic.BATCH):
            model().embed(texts[at : at + semantic.BATCH])
        ours.append(time.perf_counter() - started)
        base.append(bare_embed(sample))
    print(
        f"embedding {len(texts)} docs of the corpus: ouro {min(ours):.2f} s "
        f"({len(texts) / min(ours):.0f} docs/s), the model's own onnxruntime inference "
        f"{min(base):.2f} s = {min(ours) / min(base):.2f}x (alternating, best of 2)"
    )


def two_stage(bundle: Bundle, queries: list[str]) -> None:
    """The two-stage scan (coarse codes, then exact for the best ``CANDIDATES``)
    against the exact cosine of every vector: how many of the exact top 10
    scores it returns (scores, not ids: equal vectors tie), and the time of
    each, interleaved."""
    import numpy as np

    from ouro.embedding import model
    from ouro.index import db, semantic

    conn = db.open_db(bundle.root)
    held = semantic.vectors(conn, db.db_file(bundle.root))
    conn.close()
    if held.coarse is None:
        print("two-stage scan: no vector file (the table answers, exactly)")
        return
    exact_rows = np.asarray(held.base_rows, dtype=np.float32)
    found, fast, full = 0, [], []
    for q in queries:
        vec = model().embed([q])[0]
        started = time.perf_counter()
        approx, _exact = held._two_stage(vec)
        top_fast = np.sort(approx)[::-1][:10]
        fast.append(time.perf_counter() - started)
        started = time.perf_counter()
        exact = exact_rows @ vec
        top = np.sort(exact)[::-1][:10]
        full.append(time.perf_counter() - started)
        found += int(np.isclose(top_fast, top, atol=1e-3).sum())
    print(
        f"two-stage scan of {len(held.base_ids)} vectors ({semantic.COARSE} coarse dimensions, "
        f"{semantic.CANDIDATES} re-ranked): {found / (10 * len(queries)):.3f} of the exact top 10 "
        f"found; p50 {p50_ms(fast):.2f} ms against {p50_ms(full):.2f} ms for the exact "
        f"float32 scan of a resident copy ({exact_rows.nbytes / 1e6:.0f} MB) (interleaved)"
    )


def diary_writes(bundle: Bundle, count: int, tag: str) -> list[float]:
    samples = []
    for i in range(count):
        started = time.perf_counter()
        invoke("diary_write", bundle, {"text": f"bench {tag} fact {i} {os.getpid()}"})
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--bundle", type=Path, help="reuse (or keep) a corpus bundle")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="--bundle has its vectors built: measure, build nothing",
    )
    args = parser.parse_args()
    from ouro.embedding import available

    if not available():
        sys.exit("bench/semantic.py needs the extra: pip install 'ouro-bundle[semantic]'")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if not args.reuse:
            quality(work)
            near_duplicates()
        if not args.quality_only:
            scale(work, args.scale, args.bundle, args.queries, args.reuse)


if __name__ == "__main__":
    main()
