"""Text renderings of Desk tool results for people (``--json`` gives the dicts)."""

from __future__ import annotations

from typing import Any


def render_task_list(result: dict[str, Any]) -> str:
    lines = []
    for task in result["tasks"]:
        lease = (
            f"  (claimed by {task['claimedBy']} until {task['leaseUntil']})"
            if task.get("claimedBy")
            else ""
        )
        lines.append(
            f"{task['id']}  [{task['status']}] p{task['priority']}  "
            f"{task['track']}/{task['slug']}  {task['title']}{lease}"
        )
    shown = len(result["tasks"])
    lines.append(
        f"{shown} of {result['total']} tasks" if shown != result["total"] else f"{shown} tasks"
    )
    lines.extend(f"problem: {p}" for p in result.get("problems") or [])
    return "\n".join(lines)
