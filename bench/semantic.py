"""Bench: search by meaning (``ouro-bundle[semantic]``) against lexical search, same run.

    python bench/semantic.py [--quality-only] [--scale 1.0] [--bundle PATH] [--queries 40]

1. Quality, on the labelled set ``bench/data/retrieval.json`` (211 record items,
   220 queries: 110 paraphrases, 110 keyword queries). The items are written
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
    from ouro.index.semantic import embed_bundle

    data = load()
    bundle = Bundle.init(work / "labelled.ouro", agent="bench")
    invoke("desk_track_add", bundle, {"name": "work"})
    by_locator = write_items(bundle, data["items"])
    embed_bundle(bundle.root)
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


def scale(work: Path, factor: float, bundle_path: Path | None, nqueries: int) -> None:
    from corpus import build_corpus

    from ouro.index import db
    from ouro.index.semantic import embed_bundle
    from ouro.index.sync import rebuild

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
        f"(same run, interleaved, {nqueries} queries; goal hybrid <= 10 ms)"
    )
    cold_cli(bundle, queries, 8)
    after_writes(bundle, queries)
    cold_cli(bundle, queries, 8, "after those writes")
    writes_after = diary_writes(bundle, 40, "after")
    print(
        f"diary_write p50: {p50_ms(writes_after):.2f} ms with vectors in the index, "
        f"{p50_ms(writes_before):.2f} ms before they existed (write-through never embeds)"
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
    args = parser.parse_args()
    from ouro.embedding import available

    if not available():
        sys.exit("bench/semantic.py needs the extra: pip install 'ouro-bundle[semantic]'")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        quality(work)
        near_duplicates()
        if not args.quality_only:
            scale(work, args.scale, args.bundle, args.queries)


if __name__ == "__main__":
    main()
