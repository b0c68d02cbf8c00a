"""Renderings of the sentinel verbs (``ouro.api.sentinel``, ``b.drill``) and their old
CLI input models. Exit codes are ``ouro.cli.exits``'s.

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ouro.models.base import ToolInput
from ouro.sentinel.drills import DRILL_NAMES, check_names
from ouro.sentinel.receipts import DEFAULT_KEEP, Trigger
from ouro.sentinel.status import render_status


class RefreshInput(ToolInput):
    trigger: Trigger = Field("manual_cli", description="what prompted this refresh")
    signals: list[str | dict[str, Any]] = Field(
        default_factory=list,
        description='outside signals, each a JSON object such as {"kind": "provider_lane", '
        '"source": "anthropic", "status": "down", "verdictImpact": "blocked", '
        '"repairActor": "human-required", "repairCommand": "..."}; kind is provider_lane or '
        "sense",
    )
    keep: int = Field(
        DEFAULT_KEEP, ge=1, le=100_000, description="receipt detail files to keep after pruning"
    )
    yes: bool = Field(
        False,
        description="run a declared readiness check that was not confirmed in this bundle yet "
        "(read it first: 'ouro config list')",
    )


class StatusInput(ToolInput):
    pass


class DrillInput(ToolInput):
    # The names are checked against the one drill catalog (``ouro.sentinel.drills``),
    # and the schema's enum is that same list, so help, validator and runner agree.
    names: list[str] = Field(
        default_factory=list,
        description="drills to run (default: all of them): " + ", ".join(DRILL_NAMES),
        json_schema_extra={"items": {"type": "string", "enum": list(DRILL_NAMES)}},
    )

    @field_validator("names")
    @classmethod
    def _known_drills(cls, names: list[str]) -> list[str]:
        return check_names(names)


def render_refresh(r: dict[str, Any]) -> str:
    from ouro.cli.output import status

    score = r["score"]
    lines = [
        f"sentinel: {status(r['verdict'].upper())}  score {score['earned']}/{score['possible']} "
        f"({score['percentage']}%)  receipt {r['receiptId']} ({r['trigger']})",
    ]
    anchor = r["recoveryAnchor"]
    lines.append(
        f"recovery anchor: {anchor['use']} → {anchor.get('receiptId') or 'none'} — {anchor['reason']}"
    )
    for item in r["failing"]:
        lines.append(f"  {item['status'].upper():5} {item['check']}: {item['detail']}")
        repair = item.get("repair") or {}
        if repair.get("command"):
            lines.append(f"        repair ({repair.get('actor')}): {repair['command']}")
    for sig in r["signals"]:
        if sig["kind"] == "gauntlet" or sig["verdictImpact"] == "none":
            continue
        lines.append(
            f"  SIGNAL {sig['kind']}:{sig['source']} {sig['status']} (impact {sig['verdictImpact']})"
            + (f" — {sig['detail']}" if sig.get("detail") else "")
        )
        if sig.get("repairCommand"):
            lines.append(f"        repair ({sig.get('repairActor')}): {sig['repairCommand']}")
    for issue in r["issues"]:
        lines.append(f"  DEGRADED {issue['locator']}: {issue['problem']}")
    if not r["latestReplaced"]:
        lines.append("note: a newer receipt is already latest; this one went to the history")
    return "\n".join(lines)


def render_sentinel_status(r: dict[str, Any]) -> str:
    return render_status(r)


def render_drill(r: dict[str, Any]) -> str:
    from ouro.cli.output import status

    lines = []
    for d in r["drills"]:
        mark = status("PASS" if d["status"] == "pass" else "FAIL")
        lines.append(f"{mark} {d['name']} ({d['durationMs']:.0f} ms): {d['detail']}")
        if d["status"] != "pass":
            for check in d["checks"]:
                if not check["ok"]:
                    seen = f" — saw {check['seen']}" if check.get("seen") else ""
                    lines.append(f"     ✗ {check['what']}{seen}")
                    if check.get("lookAt"):
                        lines.append(f"       look at: {check['lookAt']}")
    receipt = r["receipt"]
    lines.append(
        f"{len(r['passed'])} passed, {len(r['failed'])} failed; receipt {receipt['receiptId']} "
        f"(trigger drill, verdict {receipt['verdict']}) in {receipt['locator']}"
    )
    if r["failed"]:
        lines.append("failed: " + ", ".join(r["failed"]) + "  (details: ouro sentinel status)")
    return "\n".join(lines)
