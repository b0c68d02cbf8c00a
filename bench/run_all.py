"""Run every benchmark and write one table.

    python bench/run_all.py [--corpus PATH] [--out bench-results.md] [--smoke]

Each ``bench/*.py`` (but corpus.py, which builds the corpus, and soak.py, the
soak suite's runner with its own tests) runs as its own process on the year-scale corpus of
``bench/corpus.py`` (100k facts, 10k notes, 5k tasks, 100k events; built at
``--corpus`` when that folder does not exist yet). Benches that write get a
fresh copy. Every line a bench prints with a baseline or ratio in it becomes a
row of the table (bench, line); bench/year.py's own table (issue 15's rows and
the 1k/10k/100k growth curve) is appended whole.

``--smoke`` runs each bench at a tiny scale: CI runs it (tests/test_bench_smoke.py)
so a benchmark that breaks fails CI. Its figures mean nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: bench -> (arguments on the corpus, arguments for the smoke run).
#: ``{corpus}`` is the shared corpus (read only), ``{copy}`` a fresh copy of it,
#: ``{tmp}`` a scratch folder.
BENCHES: dict[str, tuple[list[str], list[str]]] = {
    "year": (["--bundle", "{copy}", "--out", "{tmp}/year.md"], ["--smoke", "--out", "{tmp}/year.md"]),
    "diary_write": (["--bundle", "{copy}"], ["--facts", "300", "--writes", "5"]),
    "mcp": (["--bundle", "{copy}"], ["--calls", "4", "--seed-facts", "5"]),
    "search": (["--bundle", "{corpus}", "--no-whoosh"], ["--scale", "0.003", "--queries", "3", "--cli-runs", "2", "--no-whoosh"]),
    "orient": ([], ["--repeat", "2", "--sizes", "200,400", "--tasks", "40"]),
    "hooks": ([], ["--events", "500", "--repeat", "2"]),
    "sentinel": ([], ["--repeat", "2", "--events", "500", "--tasks", "20"]),
    "sync": ([], ["--facts", "300", "--notes", "20", "--tasks", "10", "--events", "100", "--rounds", "1"]),
    "migrate": ([], ["--facts", "300", "--notes", "20"]),
    "workbench": (["--corpus", "{copy}"], ["--repeat", "2"]),
    "mcp_tools_list": ([], []),
    "posttool": ([], ["--tasks", "20", "--claims", "10", "--repeat", "2"]),
    "semantic": (["--bundle", "{copy}"], ["--scale", "0.003", "--queries", "3"]),
    "agents": ([], ["--tasks", "50", "--repeat", "2"]),
    "onepath": (["--bundle", "{corpus}"], ["--smoke"]),
}  # fmt: skip
RATIO = re.compile(r"ratio|baseline|target|x\b|vs", re.IGNORECASE)


def build_corpus(path: Path) -> None:
    subprocess.run(
        [sys.executable, str(HERE / "corpus.py"), str(path), "--facts", "100000",
         "--notes", "10000", "--tasks", "5000", "--events", "100000"],
        check=True, env=_env(),
    )  # fmt: skip


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("OURO_BUNDLE", None)
    return env


def run(name: str, args: list[str], corpus: Path | None, tmp: Path) -> tuple[int, str, float]:
    copy = tmp / f"{name}-copy.ouro"
    if corpus is not None and "{copy}" in args:
        shutil.copytree(corpus, copy, symlinks=True)
    filled = [
        a.replace("{corpus}", str(corpus)).replace("{copy}", str(copy)).replace("{tmp}", str(tmp))
        for a in args
    ]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(HERE / f"{name}.py"), *filled],
        capture_output=True, text=True, env=_env(), cwd=tmp,
    )  # fmt: skip
    shutil.rmtree(copy, ignore_errors=True)
    took = time.perf_counter() - start
    out = proc.stdout + (f"\n{proc.stderr[-2000:]}" if proc.returncode else "")
    return proc.returncode, out, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="the year-scale corpus (built if missing)")
    parser.add_argument("--out", type=Path, default=Path("bench-results.md"))
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--only", help="comma-separated bench names")
    opts = parser.parse_args()
    names = opts.only.split(",") if opts.only else list(BENCHES)
    corpus = None
    if not opts.smoke:
        corpus = (opts.corpus or Path(tempfile.gettempdir()) / "ouro-year-corpus").resolve()
        if not corpus.exists():
            build_corpus(corpus)
    rows: list[str] = ["| bench | result |", "|---|---|"]
    extra = ""
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ouro-bench-") as raw:
        tmp = Path(raw)
        for name in names:
            full, smoke = BENCHES[name]
            code, out, took = run(name, smoke if opts.smoke else full, corpus, tmp)
            print(f"== {name}: exit {code} in {took:.1f} s\n{out}", flush=True)
            if code != 0:
                failed.append(name)
                rows.append(f"| {name} | FAILED (exit {code}) |")
                continue
            lines = [ln.strip() for ln in out.splitlines() if ln.strip() and RATIO.search(ln)]
            lines = [ln for ln in lines if not ln.startswith("|")]
            rows += [f"| {name} | {ln.replace('|', '/')} |" for ln in lines] or [
                f"| {name} | ran |"
            ]
            if name == "year" and (tmp / "year.md").exists():
                extra = (tmp / "year.md").read_text(encoding="utf-8")
    table = "\n".join(rows) + "\n" + ("\n## bench/year.py\n\n" + extra if extra else "")
    opts.out.write_text(table, encoding="utf-8")
    print(f"wrote {opts.out}")
    if failed:
        sys.exit(f"benches failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
