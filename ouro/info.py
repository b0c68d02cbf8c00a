"""``ouro info`` / ``info`` (MCP): what is in a bundle, read without writing."""

from __future__ import annotations

import os
from typing import Any

from ouro.bundle import Bundle
from ouro.models.base import ToolInput

AREAS = ("arc", "desk", "habits", "state")


class InfoInput(ToolInput):
    pass


def _count_files(folder: os.PathLike[str] | str) -> int:
    total = 0
    for _dirpath, _dirs, files in os.walk(folder):
        total += sum(1 for name in files if name != ".keep" and not name.endswith(".lock"))
    return total


def index_state(bundle: Bundle) -> dict[str, Any]:
    """fresh | stale | missing (or unavailable) with counts; reads only."""
    from ouro.index.state import index_status

    return index_status(bundle.root)


def bundle_info(bundle: Bundle, inp: InfoInput) -> dict[str, Any]:
    meta = bundle.read_meta()
    return {
        "bundle": str(bundle.root),
        "agent": meta.get("agent"),
        "layoutVersion": meta.get("layoutVersion"),
        "createdAt": meta.get("createdAt"),
        "files": {area: _count_files(bundle.root / area) for area in AREAS},
        "index": index_state(bundle),
    }


def render_info(result: dict[str, Any]) -> str:
    files = ", ".join(f"{k} {v}" for k, v in result["files"].items())
    index = result["index"]
    reason = f" ({index['reason']})" if index.get("reason") else ""
    return "\n".join(
        [
            f"bundle:  {result['bundle']}",
            f"agent:   {result['agent']}",
            f"layout:  v{result['layoutVersion']}",
            f"files:   {files}",
            f"index:   {index['state']}{reason}",
        ]
    )
