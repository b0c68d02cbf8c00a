"""Path locks: the rendering of ``b.lock`` results (``ouro.api.talk``) and the old CLI input models.

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ouro import locks
from ouro.models.base import ToolInput


class LockTakeInput(ToolInput):
    paths: list[str] = Field(description="a file or folder you are changing (repeatable)")
    reason: str = Field("", description="why, in one line (shown to anyone who collides)")
    ttl: str = Field(locks.DEFAULT_TTL, description="how long the lock lasts: 90s, 30m, 2h, 1d")
    agent: str | None = Field(None, description="who takes it (default: the bundle's agent)")


class LockReleaseInput(ToolInput):
    paths: list[str] = Field(
        default_factory=list, description="a path to release (repeatable; none: all of yours)"
    )
    agent: str | None = Field(None, description="the holder (default: the bundle's agent)")


class LockListInput(ToolInput):
    path: str | None = Field(None, description="only locks overlapping this path")


def render_locks(result: dict[str, Any]) -> str:
    if "released" in result:
        items, verb = result["released"], "released"
    elif "agent" in result:
        items, verb = result["locks"], f"locked for {result['agent']}"
    else:
        items, verb = result["locks"], "live"
    if not items:
        lines = ["no live path locks" if verb == "live" else f"nothing {verb}"]
    else:
        lines = [f"{len(items)} {verb}:"]
        for lk in items:
            why = f" — {lk['reason']}" if lk["reason"] else ""
            lines.append(f"  {lk['path']}  {lk['agent']} until {lk['expiresAt']}{why}")
    lines.extend(f"problem: {p}" for p in result.get("problems") or [])
    return "\n".join(lines)
