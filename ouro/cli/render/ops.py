"""Results for people of the bundle, search, talk, sentinel and habit verbs."""

from __future__ import annotations

from ouro.cli.output import status

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any


def info(result: dict[str, Any]) -> str:
    files = ", ".join(f"{k} {v}" for k, v in result["files"].items())
    index = result["index"]
    reason = f" ({index['reason']})" if index.get("reason") else ""
    return "\n".join(
        [
            f"bundle:  {result['bundle']}",
            f"agent:   {result['agent']}",
            f"layout:  v{result['layoutVersion']}",
            f"files:   {files}",
            f"index:   {index['state']}{reason}",
        ]
    )


def orient(result: dict[str, Any]) -> str:
    return str(result["text"])


def search(result: dict[str, Any]) -> str:
    """Search results for people: one block per hit."""
    state = result["index"]["state"]
    head = f"{result['total']} result(s)" + (
        f" for {result['query']!r}" if result.get("query") else ""
    )
    lines = [head + ("" if state == "fresh" else f"  [index {state}]")]
    if result["index"].get("note"):
        lines.append(f"  [{result['index']['note']}]")
    lines.extend(f"problem: {problem}" for problem in result["index"].get("problems", ()))
    vectors = result["index"].get("semantic")
    if vectors and vectors.get("state") != "fresh":
        lines.append(f"  [semantic part {vectors['state']}: {vectors.get('reason', '')}]")
    for hit in result["results"]:
        ranks = hit.get("ranks")
        shown = (
            f"  (lexical #{ranks['lexical'] or '-'}, semantic #{ranks['semantic'] or '-'})"
            if ranks
            else ""
        )
        lines.append(f"- [{hit['kind']}] {hit['title']}{shown}")
        lines.append(f"  {hit['locator']}" + (f"  ({hit['updated']})" if hit["updated"] else ""))
        if hit["snippet"]:
            lines.append(f"  {hit['snippet']}")
    return "\n".join(lines)


def index_status(result: dict[str, Any]) -> str:
    """``ouro index status``: the index, then one line per other derived file."""
    lines = [_index_state(result)]
    for entry in result.get("derived", ()):
        why = f" ({entry['reason']})" if entry.get("reason") else ""
        lines.append(f"{entry['name']}: {entry['state']}{why}")
    return "\n".join(lines)


def _index_state(result: dict[str, Any]) -> str:
    """``ouro index status`` for humans."""
    lines = [
        f"index: {result['state']}" + (f" ({result['reason']})" if result.get("reason") else "")
    ]
    if result.get("counts"):
        lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in result["counts"].items()))
    lines.append(f"last sync: {result.get('lastSync') or 'never'}")
    if result.get("problems"):
        lines.append(f"problems: {result['problems']} (run 'ouro index rebuild' to list them)")
    return "\n".join(lines)


def locks(result: dict[str, Any]) -> str:
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


def _line(m: dict[str, Any]) -> str:
    task = f" [task {m['task']}]" if m.get("task") else ""
    mark = "" if m.get("read", True) else "* "
    return f"  {mark}{m['id']} {m.get('kind')} from {m.get('from')}{task}: {m.get('text')}"


def message(result: dict[str, Any]) -> str:
    if "peer" in result:
        p = result["peer"]
        return f"peer {p['agent']} → {p.get('bundle') or p.get('remote')}"
    if "retried" in result and "message" not in result:
        done = [r for r in result["retried"] if r["delivered"]]
        lines = [f"{len(done)} of {len(result['retried'])} queued message(s) delivered"]
        lines.extend(
            f"  {r['id']} to {r['to']}: still queued ({r['reason']})"
            for r in result["retried"]
            if not r["delivered"]
        )
        return "\n".join(lines)
    if "message" in result:
        m = result["message"]
        if result["delivered"]:
            return f"sent {m['kind']} {m['id']} to {m['to']}"
        return f"queued {m['kind']} {m['id']} for {m['to']}: {result['queuedReason']}"
    lines = []
    if "unread" in result:
        lines.append(f"{len(result['messages'])} message(s), {result['unread']} unread:")
    lines.extend(_line(m) for m in result["messages"])
    for q in result.get("queued") or []:
        lines.append(f"  queued {q['id']} to {q['to']}: {q['queuedReason']}")
    lines.extend(f"problem: {p}" for p in result.get("problems") or [])
    return "\n".join(lines) or "no unread messages"


def sentinel_refresh(r: dict[str, Any]) -> str:
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


def drill(r: dict[str, Any]) -> str:
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


def sentinel_status(r: dict[str, Any]) -> str:
    lines = []
    latest = r.get("latest")
    if latest is None:
        lines.append(f"sentinel: no usable receipt ({r['state']})")
    else:
        score = latest.get("score") or {}
        lines.append(
            f"sentinel: {r['verdict'].upper()}  score {score.get('earned')}/{score.get('possible')}"
            f" ({score.get('percentage')}%)  receipt {latest['id']} at {latest['generatedAt']}"
            f" ({latest.get('trigger')})"
        )
    anchor = r.get("recoveryAnchor")
    if anchor:
        target = anchor.get("receiptId") or "none"
        lines.append(f"recovery anchor: {anchor.get('use')} → {target} — {anchor.get('reason')}")
    ready = r.get("latestReady")
    if ready and not ready.get("usable", True):
        lines.append(f"latest ready: {ready['id']} UNUSABLE — {ready.get('unusable')}")
    elif ready:
        lines.append(f"latest ready: {ready['id']} at {ready['generatedAt']}")
    else:
        lines.append("latest ready: none")
    for item in r.get("failing", []):
        lines.append(f"  {item['status'].upper():5} {item['check']}: {item['detail']}")
        repair = item.get("repair") or {}
        if repair.get("command"):
            lines.append(f"        repair ({repair.get('actor')}): {repair['command']}")
    for sig in r.get("signals", []):
        lines.append(
            f"  SIGNAL {sig.get('kind')}:{sig.get('source')} {sig.get('status')} "
            f"(impact {sig.get('verdictImpact')})"
            + (f" — {sig['detail']}" if sig.get("detail") else "")
        )
        if sig.get("repairCommand"):
            lines.append(f"        repair ({sig.get('repairActor')}): {sig['repairCommand']}")
    for drill in r.get("drills", []):
        lines.append(f"  drill {drill['name']}: {drill['status']}")
    for issue in r.get("issues", []):
        lines.append(f"  DEGRADED {issue['locator']}: {issue['problem']}")
    if r.get("hint"):
        lines.append(f"next: {r['hint']}")
    return "\n".join(lines)


def habit_receipt(receipt: dict[str, Any]) -> str:
    lines = [
        f"habit {receipt['habitName']} ({receipt['trigger']}): {receipt['outcome']}",
        f"  run {receipt['runId']}  {receipt['startedAt']} → {receipt['endedAt']}",
        f"  receipt {receipt['receiptLocator']}",
        f"  next run {receipt['nextRunAt'] or 'none (paused)'}",
    ]
    for ref in receipt["producedRefs"]:
        if ref["kind"] != "none":
            lines.append(f"  produced {ref['kind']}: {ref['locator']}")
    for attempt in receipt["surfaceAttempts"]:
        lines.append(
            f"  surfaced to {attempt['recipient']} via {attempt['channel']}: {attempt['result']}"
        )
    for call in receipt["toolPolicy"].get("refusedCalls", []):
        lines.append(f"  refused tool {call['tool']}: {call['reason']}")
    from ouro.models.terminal import plain  # here: the other renders never need its pattern

    for error in receipt["errors"]:  # plain: a receipt written before hosts' colours were removed
        lines.append(f"  error: {plain(error)}")
    return "\n".join(lines)


def habit_last(result: dict[str, Any]) -> str:
    lines = [habit_receipt(result["receipt"])]
    state = result["runtimeState"]
    if state:
        lines.append(
            f"  runtime state: next run {state['nextRunAt'] or 'none'}, "
            f"consecutive failures {state['consecutiveFailures']}"
        )
    else:
        lines.append("  runtime state: unknown")
    lines += [f"  problem: {p}" for p in result["problems"]]
    return "\n".join(lines)


def surface(result: dict[str, Any]) -> str:
    line = f"{result['result']}: to {result['recipient']} via {result['channel']}"
    if result.get("error"):
        line += f"\n  {result['error']}"
    if result.get("outboxLocator"):
        line += f"\n  queued at {result['outboxLocator']}"
    return line


def surface_list(result: dict[str, Any]) -> str:
    lines = []
    for m in result["messages"]:
        state = f" (acknowledged {m['ackedAt']})" if m.get("ackedAt") else ""
        lines.append(
            f"{m['id']}  habit {m.get('habitName')} ({m.get('reason')}) to "
            f"{m.get('recipient')}{state}: {m.get('text')}"
        )
    lines += [f"problem: {p}" for p in result["problems"]]
    return "\n".join(lines) or "nothing surfaced is waiting"


def surface_ack(result: dict[str, Any]) -> str:
    if result["already"]:
        return f"{result['id']} was already acknowledged ({result['ackedAt']})"
    return f"acknowledged {result['id']}"
