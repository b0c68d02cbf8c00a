"""Human renderings of Desk, record, Arc-query and list results (named by CLI path in
``ouro.cli.render.RENDERERS``).

The house rule for people (``--json`` prints the object itself; ``--verbose``
prints the full record): a write is one line — what happened, the id, where
(``confirm``) — plus a warning line only when there is something to act on; a
list is a table with a header (``table``); statuses are coloured on a terminal
only (``status``); times are relative where that helps (``when``).
"""

from __future__ import annotations

from typing import Any

from ouro.cli.output import confirm, status, table, when


def _problems(r: dict[str, Any]) -> list[str]:
    out = []
    for p in r.get("problems") or []:
        if isinstance(p, dict):
            where = p.get("locator") or p.get("file") or ""
            out.append(f"problem: {where}: {p.get('reason') or p.get('problem') or p}")
        else:
            out.append(f"problem: {p}")
    return out


# --- desk writes ---------------------------------------------------------------


def _holder(t: dict[str, Any]) -> str | None:
    """Who holds the task's lease (``heldBy``; ``claimedBy`` in older results)."""
    held = t.get("heldBy") or t.get("claimedBy")
    return str(held) if held else None


def track_written(r: dict[str, Any]) -> str:
    verb = "created" if r.get("created") else "exists:"
    return confirm(verb, "track", r["track"], r["locator"])


def task_written(r: dict[str, Any]) -> str:
    t = r["task"]
    if "changed" in r:
        changed = ", ".join(r["changed"]) or "nothing"
        head = f"updated task {t['id']} ({changed}; now {status(t['status'])})"
    elif "released" in r:
        head = f"released task {t['id']}" if r["released"] else f"task {t['id']} was not held"
    elif "outcome" in r:
        until = when(r.get("leaseUntil"))
        head = f"{r['outcome']} task {t['id']} for {_holder(t)} (lease ends {until})"
    else:
        head = f"added task {t['id']} [{status(t['status'])}] p{t['priority']} {t['title']!r}"
    lines = [f"{head}  → {t['locator']}"]
    if t.get("blockedBy"):
        lines.append(f"  blocked by: {', '.join(t['blockedBy'])}")
    lines.extend(
        f"  unblocked: {u['id']} {u['title']}  → {u['locator']}" for u in r.get("unblocked") or []
    )
    return "\n".join(lines)


def iteration_written(r: dict[str, Any]) -> str:
    return confirm("recorded", "iteration", f"{r['iteration']:03d} of {r['task']}", r["locator"])


def friction_written(r: dict[str, Any]) -> str:
    f = r["friction"]
    return confirm(
        "filed", f"friction ({f['severity']})", f"{f['id']} {f['title']!r}", r["locator"]
    )


def tip_written(r: dict[str, Any]) -> str:
    verb = "wrote" if r.get("created") else "updated"
    return confirm(verb, "tip", repr(r["tip"]["title"]), r["locator"])


def feature_written(r: dict[str, Any]) -> str:
    f = r["featured"]
    shown = (
        ", ".join(
            [*f.get("tracks", []), *f.get("tasks", []), *f.get("notes", []), *f.get("lessons", [])]
        )
        or "nothing"
    )
    return confirm("featured:", shown, None, r["locator"])


def tip_list(r: dict[str, Any]) -> str:
    rows = [
        {
            "title": t["title"],
            "tags": ", ".join(t.get("tags") or []),
            "updated": when(t.get("updated")),
            "locator": t["locator"],
        }
        for t in r["tips"]
    ]
    return "\n".join(
        [table(rows, ["title", "tags", "updated", "locator"], empty="no tips"), *_problems(r)]
    )


def friction_list(r: dict[str, Any]) -> str:
    rows = [
        {
            "id": f["id"],
            "severity": f["severity"],
            "title": f["title"],
            "filed": when(f.get("created")),
            "locator": f["locator"],
        }
        for f in r["friction"]
    ]
    return "\n".join(
        [
            table(rows, ["id", "severity", "title", "filed", "locator"], empty="no friction"),
            *_problems(r),
        ]
    )


def task_show(r: dict[str, Any]) -> str:
    t = r["task"]
    lines = [
        f"{t['id']}  [{status(t['status'])}] p{t['priority']}  {t['title']}",
        f"  at {t['locator']}  (track {t['track']}, updated {when(t.get('updated'))})",
    ]
    if _holder(t):
        lines.append(f"  held by {_holder(t)} until {when(t.get('leaseUntil'))}")
    if t.get("unverified"):
        lines.append(f"  done unverified: {t['unverified']}")
    for key in ("acceptance", "check"):
        if t.get(key):
            lines.append(f"  {key}: {t[key]}")
    if r.get("body"):
        lines += ["", r["body"].rstrip()]
    if r.get("iterations"):
        lines += ["", f"iterations ({len(r['iterations'])}):"]
        lines += [f"  {loc}" for loc in r["iterations"]]
    if r.get("history"):
        lines += ["", "history:"]
        for h in r["history"][-5:]:
            detail = {k: v for k, v in h.items() if k not in ("at", "event")}
            said = " ".join(f"{k}={v}" for k, v in detail.items() if v is not None)
            lines.append(f"  {when(h.get('at')):>9}  {h.get('event')}  {said}".rstrip())
    return "\n".join(lines)


# --- the record ---------------------------------------------------------------------


def fact_written(r: dict[str, Any]) -> str:
    fact = r["fact"]
    verb = "already recorded" if r.get("duplicate") else "recorded"
    line = confirm(verb, "fact", fact["id"], r["locator"])
    if r.get("supersedes"):
        line += f"  (supersedes {r['supersedes']})"
    return "\n".join([line, *(f"warning: {w}" for w in r.get("warnings") or [])])


def reflection_written(r: dict[str, Any]) -> str:
    return confirm("appended", "reflection", None, r["locator"])


def note_written(r: dict[str, Any]) -> str:
    verb = "wrote" if r.get("created") else "updated"
    return confirm(verb, "note", repr(r["note"]["title"]), r["locator"])


# --- arc ------------------------------------------------------------------------------


def arc_query(r: dict[str, Any]) -> str:
    q = r["query"]
    lines = [f"can continue: {'yes' if r.get('canContinue') else 'no'}"]
    recorder = r.get("recorder") or {}
    if recorder.get("health") not in (None, "ok"):
        lines.append(f"recorder: {status(recorder['health'])}")
        lines += [f"  {i}" for i in recorder.get("issues") or []]
    if q == "doing":
        ask = r.get("currentAsk") or {}
        nxt = r.get("nextSafeAction") or {}
        lines.append(
            f"ask: {ask.get('value') or '(none)'}  [{status(ask.get('confidence') or 'unknown')}]"
        )
        if not ask.get("value") and ask.get("reason"):
            lines.append(f"  {ask['reason']}")
        lines.append(f"next: {nxt.get('value') or '(none)'}")
        if nxt.get("stopBefore"):
            lines.append("  stop before: " + ", ".join(nxt["stopBefore"]))
    elif q == "owe":
        rows = [
            {
                "id": o["id"],
                "status": status(o["status"]),
                "what": o["what"],
                "to": o.get("owedTo"),
                "due": o.get("due"),
            }
            for o in [*(r.get("obligations") or []), *(r.get("returns") or [])]
        ]
        lines.append(table(rows, ["id", "status", "what", "to", "due"], empty="nothing owed"))
    elif q == "unverified":
        rows = [
            {"id": c["id"], "status": status(c["status"]), "claim": c["text"]}
            for c in r.get("claims") or []
        ]
        lines.append(table(rows, ["id", "status", "claim"], empty="no unverified claims"))
    elif q == "blocked":
        blockers = r.get("blockers") or []
        if not blockers:
            lines.append("no active blockers")
        for b in blockers:
            lines.append(f"blocked: {b.get('text')}  ({b.get('id') or b.get('eventId')})")
    else:
        events = r.get("events") or []
        rows = [
            {"when": when(e.get("recordedAt")), "kind": e.get("kind"), "summary": e.get("summary")}
            for e in events
        ]
        lines.append(table(rows, ["when", "kind", "summary"], empty="no events since"))
    for u in r.get("unreadable") or []:
        lines.append(f"unreadable: {u}")
    return "\n".join(lines)


# --- lists ----------------------------------------------------------------------------


def task_list(r: dict[str, Any]) -> str:
    rows = [
        {
            "task": f"{t['track']}/{t['slug']}",
            "status": status(t["status"]),
            "p": t["priority"],
            "title": t["title"],
            "held by": (f"{_holder(t)} until {when(t.get('leaseUntil'))}") if _holder(t) else "",
            "updated": when(t.get("updated")),
        }
        for t in r["tasks"]
    ]
    lines = [table(rows, ["task", "status", "p", "title", "held by", "updated"], empty="no tasks")]
    lines += [
        f"{t['track']}/{t['slug']}: done unverified: {t['unverified']}"
        for t in r["tasks"]
        if t.get("unverified")
    ]
    shown = len(r["tasks"])
    if shown != r["total"]:
        lines.append(f"{shown} of {r['total']} tasks (--limit to see more)")
    lines.extend(f"problem: {p}" for p in r.get("problems") or [])
    return "\n".join(lines)


def claim_list(r: dict[str, Any]) -> str:
    if r["claims"] is None:
        return f"claims: {status('unknown')} ({r['unknown']})"
    rows = [
        {
            "id": c["id"],
            "status": status(c["status"]),
            "claim": c["text"],
            "why": c.get("statusReason"),
        }
        for c in r["claims"]
    ]
    lines = [table(rows, ["id", "status", "claim", "why"], empty="no claims")]
    lines += [f"unreadable: {u['file']}: {u['reason']}" for u in r.get("unreadable") or []]
    return "\n".join(lines)


def obligation_list(r: dict[str, Any]) -> str:
    if r["obligations"] is None:
        return f"obligations: {status('unknown')} ({r['unknown']})"
    rows = [
        {
            "id": o["id"],
            "status": status(o["status"]),
            "what": o["what"],
            "to": o.get("owedTo"),
            "due": o.get("due"),
            "route": f"{o['route']['channel']}:{o['route']['key']}" if o.get("route") else "",
        }
        for o in r["obligations"]
    ]
    lines = [table(rows, ["id", "status", "what", "to", "due", "route"], empty="no obligations")]
    lines += [f"unreadable: {u['file']}: {u['reason']}" for u in r.get("unreadable") or []]
    return "\n".join(lines)


def habit_list(r: dict[str, Any]) -> str:
    rows = [
        {
            "name": h["name"],
            "cadence": h["cadence"],
            "status": status("due" if h["due"] else h["status"]),
            "last run": f"{when(h['lastRunAt'])} {status(h['lastOutcome'] or '')}".strip()
            if h.get("lastRunAt")
            else "never",
            "title": h["title"],
        }
        for h in r["habits"]
    ]
    lines = [
        table(
            rows,
            ["name", "cadence", "status", "last run", "title"],
            empty="no habits (define one in habits/<name>.yaml)",
        )
    ]
    lines += [f"invalid: {p['file']}: {p['field']}: {p['reason']}" for p in r["problems"]]
    return "\n".join(lines)
