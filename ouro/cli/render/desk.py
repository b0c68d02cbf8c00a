"""Desk results for people: a task's check run, ready work."""

from __future__ import annotations

from typing import Any


def task_verify(result: dict[str, Any]) -> str:
    task, run = result["task"], result["run"]
    timed = " (timed out)" if run.get("timedOut") else ""
    lines = [
        f"{task['id']} [{task['status']}] {task['title']}",
        f"  check: {run['command']}",
        f"  ran in {run['cwd']}: exit {run['exitCode']}{timed}, {run['durationMs']} ms, "
        f"output {run['outputDigest']}",
    ]
    if run.get("tail"):
        lines.append("  output tail (redacted):")
        lines.extend("    " + line for line in run["tail"].splitlines())
    blocked = result.get("doneBlockedBy")
    lines.append(
        f"  done: not yet ({blocked})" if blocked else "  done: allowed (the check passed)"
    )
    return "\n".join(lines)


def ready(result: dict[str, Any]) -> str:
    tasks = result["ready"]
    if not tasks:
        lines = ["no ready tasks (open, unblocked and not held)"]
    else:
        lines = [f"{result['total']} ready (most urgent, then oldest, first):"]
        lines.extend(f"  {t['id']} p{t['priority']} {t['title']}  → {t['locator']}" for t in tasks)
        if result["total"] > len(tasks):
            lines.append(f"  … {result['total'] - len(tasks)} more")
    waiting = result.get("waiting") or {}
    if waiting:
        lines.append(f"{len(waiting)} open task(s) waiting on blockers not done:")
        lines.extend(f"  {tid} waits for {', '.join(bs)}" for tid, bs in list(waiting.items())[:10])
    lines.extend(f"problem: {p}" for p in result.get("problems") or [])
    return "\n".join(lines)
