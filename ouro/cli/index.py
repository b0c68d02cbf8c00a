"""``ouro index sync | rebuild | status`` are the library's ``b.index`` verbs
(``ouro.api.index``); their report for people is here."""

from __future__ import annotations

from typing import Any


def render_report(result: dict[str, Any]) -> str:
    lines = [
        f"index {result['state']}: {result['scanned']} files scanned, {result['indexed']} "
        f"indexed, {result['removed']} removed, {result['factsAdded']} facts added "
        f"({result['seconds']}s)"
    ]
    if result.get("semantic"):
        vectors = result["semantic"]
        if "embedded" in vectors:
            lines.append(f"vectors: {vectors['embedded']} computed ({vectors['seconds']}s)")
        else:
            lines.append(
                f"vectors: not computed ({vectors['missing']} docs without one); "
                "'ouro index sync' computes them"
            )
    lines += [f"skipped {p['locator']}:{p['line']}: {p['reason']}" for p in result["problems"]]
    lines += [
        f"{d['name']}: {d['action']} (was {d.get('was', 'unknown')})"
        for d in result.get("derived", ())
    ]
    return "\n".join(lines)
