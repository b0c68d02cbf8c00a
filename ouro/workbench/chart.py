"""The Recovery chart: sentinel ledger lines → coordinates for an inline SVG.

Only geometry lives here; the template draws the SVG, so every label passes
through the same redaction and escaping as the rest of the page. X is time
(generated-at), Y is the gauntlet score in percent; each point keeps its
verdict (ready / watch / blocked), which the template colours and labels.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

WIDTH, HEIGHT = 860, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 56
BAND = 14  # the verdict strip under the plot


def _when(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def history_chart(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Chart geometry for ledger ``lines`` (oldest first)."""
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    times = [_when(str(line.get("generatedAt"))) for line in lines]
    known = [t for t in times if t is not None]
    t0, t1 = (min(known), max(known)) if known else (0.0, 0.0)
    points: list[dict[str, Any]] = []
    for index, (line, when) in enumerate(zip(lines, times, strict=True)):
        if t1 > t0 and when is not None:
            x = LEFT + plot_w * (when - t0) / (t1 - t0)
        else:  # one moment (or unreadable times): spread evenly
            x = LEFT + plot_w * (index + 0.5) / max(1, len(lines))
        score = (line.get("gauntlet") or {}).get("score") or {}
        pct = score.get("percentage")
        y = TOP + plot_h * (1 - float(pct) / 100) if isinstance(pct, int | float) else None
        points.append(
            {
                "x": round(x, 1),
                "y": None if y is None else round(y, 1),
                "verdict": line.get("verdict")
                if line.get("verdict") in ("ready", "watch", "blocked")
                else "unknown",
                "pct": pct,
                "id": line.get("id"),
                "at": line.get("generatedAt"),
                "trigger": line.get("trigger"),
            }
        )
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{p['x']},{p['y']}"
        for i, p in enumerate(p for p in points if p["y"] is not None)
    )
    # Each verdict strip segment runs from its point to the next one.
    bands = []
    for i, p in enumerate(points):
        end = float(points[i + 1]["x"]) if i + 1 < len(points) else float(LEFT + plot_w)
        bands.append(
            {"x": p["x"], "w": max(2.0, round(end - float(p["x"]), 1)), "verdict": p["verdict"]}
        )
    grid = [{"y": round(TOP + plot_h * (1 - v / 100), 1), "label": v} for v in (0, 50, 100)]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "plotBottom": TOP + plot_h,
        "bandY": TOP + plot_h + 10,
        "bandH": BAND,
        "points": points,
        "path": path,
        "bands": bands,
        "grid": grid,
        "first": lines[0].get("generatedAt") if lines else None,
        "last": lines[-1].get("generatedAt") if lines else None,
        "counts": {
            v: sum(1 for p in points if p["verdict"] == v) for v in ("ready", "watch", "blocked")
        },
    }
