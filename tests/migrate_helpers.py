"""Helpers for the migration tests: legacy bundles and normalized result trees."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import REPO

EXAMPLE = REPO / "bundles" / "legacy-example.ouro"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_legacy_example", REPO / "bundles" / "make_legacy_example.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_legacy(root: Path, **kwargs: Any) -> Path:
    return Path(_generator().build(root, **kwargs))


def copy_example(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, symlinks=True)
    return dest


def tree(root: Path, *folders: str) -> dict[str, bytes]:
    """Bytes of every file (and ``->target`` of every link) under the folders."""
    out: dict[str, bytes] = {}
    for folder in folders:
        base = root / folder
        if not base.exists():
            continue
        for dirpath, _dirs, files in os.walk(base):
            for name in files:
                p = Path(dirpath) / name
                rel = p.relative_to(root).as_posix()
                out[rel] = (b"->" + os.readlink(p).encode()) if p.is_symlink() else p.read_bytes()
    return out


def report(root: Path) -> list[dict[str, Any]]:
    path = root / "desk/_record/migration-report.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]


def normalized(root: Path) -> dict[str, Any]:
    """The migration's result with run ids, times and backup names taken out."""
    files = tree(root, "desk", "arc", "habits", "state/migration/quarantine")
    files.pop("desk/_record/migration-report.jsonl", None)
    lines = sorted(
        (r["action"], r["source"] or "",
         re.sub(r"backup-[0-9TZ-]+/", "backup-*/", r["destination"] or ""), r["bytes"],
         r["sourceHash"] or "", r["destinationHash"] or "")
        for r in report(root)
    )  # fmt: skip
    meta = orjson.loads((root / "bundle.json").read_bytes())
    return {
        "files": files,
        "report": lines,
        "layout": meta["layoutVersion"],
        "roots": sorted(n for n in ("journal", "diary", "notes") if os.path.lexists(root / n)),
    }


def snap(root: Path) -> dict[str, tuple[bytes, int]]:
    """Like ``tests.conftest.snapshot`` but links are recorded, not followed
    (a quarantined symlink may dangle)."""
    out: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            data = (b"->" + os.readlink(p).encode()) if p.is_symlink() else p.read_bytes()
            out[str(p.relative_to(root))] = (data, p.lstat().st_mtime_ns)
    return out
