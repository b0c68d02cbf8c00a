"""The migration report and the summaries printed for people and machines.

Contract: ``desk/_record/migration-report.jsonl`` holds one line per action of
every run (moved | merged | deduplicated | created | quarantined | dropped |
removed; journal entries add ``entry``, ``route`` and ``rule``),
each with ``runId``, ``at``, ``source``, ``destination``, ``bytes``,
``sourceHash``, ``destinationHash`` and, where useful, ``why``. Fact lines are
reported one by one (``diary/facts.jsonl:<line>``). Each ``removed`` line
carries ``placed``: ``{action: bytes}`` for that legacy file, adding up to its
``bytes`` (merged, moved, created, dropped to the backup, quarantined...). The file is rewritten
atomically with this run's lines replacing any it already had, so a resumed
run never reports an action twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ouro.migrate.plan import Plan
from ouro.migrate.tidy import write_atomic
from ouro.models.hashing import content_hash
from ouro.store.bounded import file_bytes
from ouro.store.jsonl import read_jsonl


def _line(
    plan: Plan,
    at: str,
    action: str,
    source: str | None,
    destination: str | None,
    size: int,
    source_hash: str | None,
    dest_hash: str | None,
    why: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schemaVersion": 1,
        "runId": plan.run_id,
        "at": at,
        "action": action,
        "source": source,
        "destination": destination,
        "bytes": size,
        "sourceHash": source_hash,
        "destinationHash": dest_hash,
    }
    if why:
        out["why"] = why
    return out


def report_lines(root: Path, plan: Plan, at: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    malformed_to = next((i.destination for i in plan.items if i.op == "malformed"), None)
    for item in plan.items:
        if item.op == "facts" and plan.facts:
            lines.extend(_fact_lines(root, plan, at, malformed_to))
            continue
        line = _line(
            plan,
            at,
            item.action,
            item.source,
            item.destination,
            item.bytes,
            item.source_hash,
            item.destination_hash,
            item.why,
        )
        if "route" in item.detail:
            line["entry"] = item.detail["entry"]
            line["route"] = item.detail["route"]
            line["rule"] = item.detail["rule"]
            if item.detail.get("item"):
                line["item"] = item.detail["item"]
            if item.detail["route"] == "facts":
                line["facts"] = [
                    {"line": d[0], "action": d[2], "id": d[3], **({"why": d[5]} if d[5] else {})}
                    for d in item.detail.get("facts", [])
                ]
        lines.append(line)
    why = f"legacy root removed after accounting; the backup keeps a copy in {plan.backup}"
    placed = placed_bytes(plan)
    for src in plan.sources:
        line = _line(plan, at, "removed", src["path"], None, src["bytes"], src["hash"], None, why)
        line["placed"] = dict(sorted(placed.get(src["path"], {}).items()))
        lines.append(line)
    return lines


def _fact_lines(root: Path, plan: Plan, at: str, malformed_to: str | None) -> list[dict[str, Any]]:
    info = plan.facts or {}
    src, dest = info["source"], info["destination"]
    raw = file_bytes(root / plan.backup / src).split(b"\n")
    out = []
    for line, action, fid, digest, reason in info["decisions"]:
        data = raw[line - 1]
        where = f"{dest}#{fid}" if fid else f"{malformed_to}#line-{line}"
        why = (
            reason
            if action == "quarantined"
            else (f"same content as {fid}" if action == "deduplicated" else None)
        )
        out.append(
            _line(
                plan, at, action, f"{src}:{line}", where, len(data), content_hash(data), digest, why
            )
        )
    return out


def write_report(root: Path, rel: str, plan: Plan, at: str) -> int:
    path = root / rel
    kept = [r for r in read_jsonl(path).records if r.get("runId") != plan.run_id]
    lines = report_lines(root, plan, at)
    data = b"".join(orjson.dumps(r) + b"\n" for r in [*kept, *lines])
    write_atomic(path, data)
    return len(lines)


def plan_view(plan: Plan) -> dict[str, Any]:
    """The JSON form of a plan: every source file, its action and destination."""
    facts = plan.facts or {}
    decisions = facts.get("decisions", [])
    return {
        "runId": plan.run_id,
        "journalMode": plan.journal_mode,
        "backup": plan.backup,
        "items": [
            {
                k: v
                for k, v in {
                    "source": i.source,
                    "action": i.action,
                    "destination": i.destination,
                    "bytes": i.bytes,
                    "why": i.why,
                    "entry": i.detail.get("entry"),
                    "item": i.detail.get("item"),
                    "route": i.detail.get("route"),
                    "rule": i.detail.get("rule"),
                }.items()
                if v is not None
            }
            for i in plan.items
        ],
        "facts": {
            "source": facts.get("source"),
            "merged": sum(1 for d in decisions if d[1] == "merged"),
            "deduplicated": sum(1 for d in decisions if d[1] == "deduplicated"),
            "quarantined": [
                {"line": d[0], "reason": d[4]} for d in decisions if d[1] == "quarantined"
            ],
        },
        "entityConflicts": (plan.entities or {}).get("conflicts", []),
        "triage": triage_view(plan),
        "accounting": accounting(plan),
        "remove": sorted({s["path"].split("/", 1)[0] for s in plan.sources}),
        "counts": plan.counts(),
    }


#: items that derive a second file from a legacy one (its bytes are counted once, by
#: the primary item): the malformed-lines file, the entity conflicts file.
_SECONDARY = frozenset({"malformed", "json"})


def placed_bytes(plan: Plan) -> dict[str, dict[str, int]]:
    """{legacy path: {action: bytes}} from the plan's primary items."""
    by_source: dict[str, dict[str, int]] = {}
    for item in plan.items:
        if item.op in _SECONDARY or item.source is None:
            continue
        slot = by_source.setdefault(item.source, {})
        slot[item.action] = slot.get(item.action, 0) + item.bytes
    return by_source


def accounting(plan: Plan) -> dict[str, Any]:
    """Where every byte of every legacy file went, by action.

    Each legacy file's bytes are attributed to its item -- or, for a triaged
    journal file, to its entries, whose byte ranges cover the file -- so the
    actions add up to the legacy total; ``unaccounted`` names any file whose
    items do not add up to its size (empty unless something is wrong).
    """
    by_source = placed_bytes(plan)
    by_action: dict[str, int] = {}
    unaccounted = []
    total = 0
    for src in plan.sources:
        size = int(src["bytes"])
        total += size
        found = by_source.get(src["path"], {})
        if sum(found.values()) != size:
            unaccounted.append(f"{src['path']}: {size} bytes, {sum(found.values())} placed")
        for action, n in found.items():
            by_action[action] = by_action.get(action, 0) + n
    return {
        "files": len(plan.sources),
        "bytes": total,
        "byAction": dict(sorted(by_action.items())),
        "unaccounted": unaccounted,
    }


def triage_view(plan: Plan) -> dict[str, Any] | None:
    """Per route: entries, items, bytes and the rules that fired (per item); per fact
    line: its fate. An entry routed to task counts under ``task`` once with one item per
    task, and under ``drop`` for its done items."""
    if not plan.triage:
        return None
    from ouro.migrate.triage import ROUTES

    routes: dict[str, dict[str, Any]] = {
        r: {"entries": 0, "items": 0, "bytes": 0, "rules": {}} for r in ROUTES
    }
    seen: set[tuple[str, str]] = set()
    for item in plan.items:
        route = item.detail.get("route")
        if route is None:
            continue
        slot = routes[route]
        if (route, item.detail["entry"]) not in seen:
            seen.add((route, item.detail["entry"]))
            slot["entries"] += 1
        slot["items"] += 1
        slot["bytes"] += item.bytes
        rule = item.detail["rule"]
        slot["rules"][rule] = slot["rules"].get(rule, 0) + 1
    facts: dict[str, int] = {}
    for decision in plan.triage.get("facts", []):
        facts[decision[2]] = facts.get(decision[2], 0) + 1
    return {"routes": routes, "facts": facts, "entries": len(plan.triage["entries"])}
