"""Text renderings of Desk tool results for people (``--json`` gives the dicts)."""

from __future__ import annotations

from typing import Any


def render_task_verify(result: dict[str, Any]) -> str:
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


def task_verify_exit(result: dict[str, Any]) -> int:
    """``desk task verify`` exits 1 when the check it ran failed."""
    return 0 if result["run"]["exitCode"] == 0 else 1
