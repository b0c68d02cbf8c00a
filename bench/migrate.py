"""Benchmark ``ouro migrate`` on a large legacy bundle against a plain copy.

Generates a legacy bundle with 100k facts and 5k notes (``--facts``/``--notes``
to change), then in the same run measures

- baseline: ``shutil.copytree`` of the same tree (what any tool must at least pay
  to read and write every byte once);
- ``ouro.migrate.engine.migrate`` on another copy (plan, backup verified by
  hash, apply, accounting, removal, report, notes manifest, index rebuild);

and prints both times and their ratio. No assertion: numbers are reported.

    python bench/migrate.py [--facts N] [--notes N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _build(root: Path, facts: int, notes: int) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_legacy_example", REPO / "bundles" / "make_legacy_example.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(root, facts=facts, notes=notes, journal=max(10, notes // 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, help="leave the bundles in this folder")
    args = parser.parse_args()

    from ouro.index.sync import rebuild
    from ouro.migrate.engine import migrate

    work = args.keep or Path(tempfile.mkdtemp(prefix="ouro-bench-migrate-"))
    work.mkdir(parents=True, exist_ok=True)
    source = work / "legacy.ouro"
    if source.exists():
        shutil.rmtree(source)
    t0 = time.perf_counter()
    _build(source, args.facts, args.notes)
    size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file() and not p.is_symlink())
    print(
        f"generated {args.facts} facts, {args.notes} notes ({size / 1e6:.1f} MB) "
        f"in {time.perf_counter() - t0:.2f}s"
    )

    copy_dest = work / "copy.ouro"
    shutil.rmtree(copy_dest, ignore_errors=True)
    t0 = time.perf_counter()
    shutil.copytree(source, copy_dest, symlinks=True)
    copy_time = time.perf_counter() - t0

    target = work / "migrated.ouro"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)
    phases: dict[str, float] = {}
    t0 = time.perf_counter()

    def progress(phase: str, done: int, total: int) -> None:
        if done == total:
            phases[phase] = time.perf_counter() - t0

    result = migrate(target, progress=progress, rebuild_index=rebuild)
    migrate_time = time.perf_counter() - t0
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result["counts"].items()))
    print(f"plain copy (shutil.copytree):   {copy_time:8.2f}s")
    print(
        f"ouro migrate:                   {migrate_time:8.2f}s   "
        f"({migrate_time / copy_time:.1f}x the copy)"
    )
    for phase, at in phases.items():
        print(f"  {phase} done at {at:.2f}s")
    print(f"  actions: {counts}")
    print(f"  index: {result['index']}")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
