"""Migration results for people (``ouro migrate``): the plan and the summary."""

from __future__ import annotations

from typing import Any


def _accounting_line(view: dict[str, Any] | None) -> list[str]:
    if not view:
        return []
    parts = " + ".join(f"{k} {v}" for k, v in view["byAction"].items())
    line = f"legacy bytes: {view['bytes']} in {view['files']} files = {parts}"
    return [line] + [f"  NOT ACCOUNTED: {u}" for u in view["unaccounted"]]


def _triage_lines(view: dict[str, Any] | None) -> list[str]:
    if not view:
        return []
    lines = [f"journal triage ({view['entries']} entries):"]
    for route, slot in view["routes"].items():
        rules = ", ".join(f"{k} {v}" for k, v in sorted(slot["rules"].items())) or "-"
        count = f"{slot['entries']:>4} entries"
        if slot["items"] != slot["entries"]:
            count += f" ({slot['items']} items)"
        lines.append(f"  {route:<6} {count} {slot['bytes']:>8} bytes  rules: {rules}")
    if view["facts"]:
        lines.append(
            "  fact lines: " + ", ".join(f"{k} {v}" for k, v in sorted(view["facts"].items()))
        )
    return lines


def plan(view: dict[str, Any], *, limit: int | None = None) -> str:
    lines = [f"migration plan (journal: {view['journalMode']}):"]
    items = view["items"]
    shown = items if limit is None else items[:limit]
    for item in shown:
        dest = f" -> {item['destination']}" if item.get("destination") else ""
        why = f"  ({item['why']})" if item.get("why") else ""
        if item.get("route"):
            why = f"  [{item['route']} by rule {item['rule']}]"
        where = item.get("item") or item.get("entry") or item.get("source") or "-"
        lines.append(f"  {item['action']:<13} {where}{dest}{why}")
    if len(shown) < len(items):
        lines.append(f"  ... and {len(items) - len(shown)} more (see --dry-run --json)")
    facts = view["facts"]
    if facts["source"]:
        bad = ", ".join(str(q["line"]) for q in facts["quarantined"]) or "none"
        lines.append(
            f"facts from {facts['source']}: {facts['merged']} merged, "
            f"{facts['deduplicated']} duplicates, malformed lines quarantined: {bad}"
        )
    if view["entityConflicts"]:
        lines.append("entity conflicts kept aside: " + ", ".join(view["entityConflicts"]))
    lines.extend(_triage_lines(view.get("triage")))
    lines.extend(_accounting_line(view.get("accounting")))
    lines.append(f"backup first: {view['backup']}/ (verified by hash)")
    lines.append("then remove: " + ", ".join(f"{r}/" for r in view["remove"]))
    return "\n".join(lines)


def summary(result: dict[str, Any]) -> str:
    status = result["status"]
    if status == "nothing":
        return f"nothing to migrate: {result['bundle']} has no top-level journal/, diary/ or notes/"
    if status == "plan":
        wrote = (
            f"\n(dry run: nothing was written in the bundle; routes for review in "
            f"{result['planFile']})"
            if result.get("planFile")
            else "\n(dry run: nothing was written)"
        )
        return plan(result["plan"]) + wrote
    if status == "declined":
        return "migration not applied"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result["counts"].items()))
    lines = [
        f"migrated {result['bundle']} to layout v{result['layoutVersion']}"
        + (" (resumed an interrupted run)" if result.get("resumed") else ""),
        f"  actions: {counts}",
        f"  backup: {result['backup']}/",
        f"  report: {result['report']} ({result['reportLines']} lines)",
    ]
    if result.get("malformedLines"):
        lines.append(
            "  malformed fact lines quarantined: "
            + ", ".join(str(n) for n in result["malformedLines"])
        )
    if result.get("entityConflicts"):
        lines.append("  entity conflicts kept aside: " + ", ".join(result["entityConflicts"]))
    lines.extend("  " + line for line in _triage_lines(result.get("triage")))
    lines.extend("  " + line for line in _accounting_line(result.get("accounting")))
    for note in result.get("collisions", []):
        lines.append(f"  renamed: {note}")
    if result.get("quarantined"):
        lines.append(
            f"  quarantined files: {len(result['quarantined'])} under {result['quarantine']}/"
        )
    index = result.get("index", {})
    lines.append(
        f"  index: {index.get('state')}" + (f" ({index['reason']})" if index.get("reason") else "")
    )
    return "\n".join(lines)
