"""Arc results for people: writes, resume, claims, obligations, redaction."""

from __future__ import annotations

from typing import Any

from ouro.cli.output import status


def continuation_text(r: dict[str, Any]) -> str:
    """``yes`` | ``needs confirmation ('ouro arc confirm')`` | ``no``."""
    state = r.get("continuation") or ("yes" if r.get("canContinue") else "no")
    if state == "needs_confirmation":
        return "needs confirmation (run 'ouro arc confirm' or record a new ask)"
    return str(state)


def written(result: dict[str, Any]) -> str:
    event = result.get("event")
    if event is None:
        return "nothing to clear: no active blockers"
    lines = [f"recorded {event['id']} ({event['kind']}): {event['summary']}"]
    lines.append(f"can continue: {continuation_text(result)}")
    if result.get("blockedBecause"):
        lines.append(f"blocked because: {result['blockedBecause']}")
    lines.extend(f"missing: {m}" for m in result.get("missing", []))
    lines.extend(f"warning: {w}" for w in result.get("warnings", []))
    return "\n".join(lines)


def resume(r: dict[str, Any]) -> str:
    ask, nxt = r["currentAsk"], r["nextSafeAction"]
    lines = [
        f"can continue: {continuation_text(r)}   recorder: {r['recorder']['health']}",
        f"current ask [{ask['confidence']}]: {ask['value'] or '(none recorded)'}",
    ]
    if r.get("confirm"):
        lines.append(f"  confirm: {r['confirm']['message']}")
    elif ask["confidence"] == "stale_risky":
        lines.append(f"  why: {ask['reason']}")
    lines.extend(f"  details: {ref}" for ref in ask.get("refs") or [])
    lines.append(f"next safe action: {nxt['value'] or '(none recorded)'}")
    if nxt["stopBefore"]:
        lines.append(f"  stop before: {'; '.join(nxt['stopBefore'])}")
    lines.extend(f"  details: {ref}" for ref in nxt.get("refs") or [])
    prev = nxt.get("fromPreviousAsk")
    if prev:
        lines.append(f"  from the previous ask (not current): {prev['value']}")
    handoff = r.get("handoff")
    if handoff:
        who = f" by {handoff['sessionRef']}" if handoff.get("sessionRef") else ""
        lines.append(f"handoff ({handoff['recordedAt']}{who}): {handoff['value']}")
    for b in r["blockers"]:
        lines.append(f"blocker {b['id']}: {b['text']}")
    lines.extend(f"missing: {m}" for m in r["missing"])
    lines.extend(f"issue [{i['code']}]: {i['message']}" for i in r["recorder"]["issues"])
    lines.append(
        f"obligations open: {_count(r['activeObligationIds'])}, returns: "
        f"{_count(r['returnObligationIds'])}, unverified claims: {_count(r['unverifiedClaimIds'])}"
    )
    for label, key in (("obligation", "unreadableObligationIds"), ("claim", "unreadableClaimIds")):
        for item_id in r.get(key) or []:
            lines.append(f"  {label} {item_id}: unknown (unreadable file)")
    last = r.get("lastUsefulEvent") or r.get("lastEvent")
    if last:
        lines.append(f"last event: {last['kind']} at {last['recordedAt']}: {last['summary']}")
    return "\n".join(lines)


def _count(ids: list[str] | None) -> str:
    return "unknown" if ids is None else str(len(ids))


def claim(c: dict[str, Any]) -> str:
    lines = [f"{c['id']} [{status(c['status'])}] {c['text']}", f"  why: {c['statusReason']}"]
    if c.get("check"):
        lines.append(f"  check: {c['check']}")
    evidence = c.get("evidence") or []
    if evidence:
        e = evidence[-1]
        who = f" by {e['by']}" if e.get("by") else ""
        lines.append(
            f"  latest evidence: {e.get('provenance', 'asserted')}{who}: "
            f"{e['command']!r} exited {e['exitCode']} at {e['recordedAt']}"
        )
    run = c.get("run")
    if run:
        timed = " (timed out)" if run.get("timedOut") else ""
        lines.append(
            f"  ran in {run['cwd']}: exit {run['exitCode']}{timed}, {run['durationMs']} ms, "
            f"output {run['outputDigest']}"
        )
        if run.get("tail"):
            lines.append("  output tail (redacted):")
            lines.extend("    " + line for line in run["tail"].splitlines())
    lines.append(f"  at: {c['locator']}")
    return "\n".join(lines)


def _ob_line(o: dict[str, Any]) -> str:
    due = f" due {o['due']}" if o.get("due") else ""
    route = f" via {o['route']['channel']}:{o['route']['key']}" if o.get("route") else ""
    return f"{o['id']} [{o['status']}] {o['what']} → {o['owedTo']}{due}{route}  ({o['locator']})"


def obligation(o: dict[str, Any]) -> str:
    return _ob_line(o)


def redacted(result: dict[str, Any]) -> str:
    lines = [
        f"redacted {result['occurrences']} occurrence(s) in {result['locator']} "
        f"(now {result['marker']}); recorded {result['event']['id']}"
    ]
    if result["indexDropped"]:
        lines.append("search index dropped (it held the old text); 'ouro index sync' rebuilds it")
    lines.extend(f"warning: {w}" for w in result.get("warnings", []))
    for loc in result["stillFoundIn"]:
        lines.append(f"still in: {loc}  (run 'ouro record redact {loc} --match …')")
    for loc in result.get("stillFoundOutsideRecord", ()):
        why = (
            "a machine-local cache: delete it, ouro derives it again"
            if loc.startswith("state/")
            else "not a record: edit it by hand"
        )
        lines.append(f"still in: {loc}  ({why})")
    return "\n".join(lines)
