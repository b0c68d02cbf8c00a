"""``ouro orient``: the start-of-turn orientation packet.

Contract:
- built from files only, by the providers in ``PROVIDERS`` (``"module:func"``
  of ``fn(bundle) -> list[OrientItem]``), in order; the Arc provider reads the
  resume checkpoint (``ouro.arc.resume``), others add their own sections;
- pure: it writes nothing and never touches the search index;
- deterministic: an unchanged bundle gives byte-identical text (no "now");
- fits ``budget`` characters: items are dropped lowest priority first (then
  latest first), and each section that lost items says so with
  "+N more: `<command>`"; priority-0 items stay, and only if they alone
  exceed the budget is the text cut, with a marker;
- unknown stays unknown: an unreadable store renders "claims: unknown
  (reason)", never a zero.

``build_packet`` is ``pack(collect_items(bundle), budget, agent=…)``; callers
that need every item as well as the packet (the host hooks) use the two
halves and read the bundle once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ouro.arc import paths
from ouro.arc.resume import read_resume_full
from ouro.arc.stores import TEXT_LIMIT
from ouro.bundle import Bundle
from ouro.orient_types import DEFAULT_BUDGET, OrientItem, Packet

PROVIDERS: tuple[str, ...] = (
    "ouro.orient:arc_items",
    "ouro.sync.orientation:sync_items",
    "ouro.desk.orientation:desk_items",
    "ouro.messages.orientation:message_items",
    "ouro.habits.orientation:habit_items",
    "ouro.sentinel.orientation:sentinel_items",
)
CUT_MARKER = "\n… (cut to the budget)\n"

Provider = Callable[[Bundle], list[OrientItem]]


class Lines(Protocol):
    """Packet lines by item index (``RedactedLines``, or a plain list)."""

    def __getitem__(self, i: int, /) -> str: ...


# --- the Arc provider ---------------------------------------------------------


def _short(text: str | None, limit: int = TEXT_LIMIT) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _status_line(r: dict[str, Any]) -> str:
    health = r["recorder"]["health"]
    state = r.get("continuation") or ("yes" if r["canContinue"] else "no")
    if state == "needs_confirmation":
        state = "after confirming (`ouro arc confirm`)"
    return f"can continue: {state} (recorder {health}, {r['eventCount']} events)"


def _details(refs: list[str] | None) -> str:
    return f" — details: {', '.join(refs)}" if refs else ""


def arc_items(bundle: Bundle) -> list[OrientItem]:
    r = read_resume_full(bundle)
    out: list[OrientItem] = [OrientItem("status", 0, _status_line(r), paths.CHECKPOINT)]
    ask, nxt = r["currentAsk"], r["nextSafeAction"]
    ask_text = _short(ask["value"]) if ask["value"] else "unknown (none recorded)"
    line = f"[{ask['confidence']}] {ask_text}{_details(ask.get('refs'))}"
    if ask["confidence"] in ("stale_risky", "needs_confirmation"):
        line += f" — {ask['reason']}"
    out.append(OrientItem("ask", 0, line, ask["locator"]))
    from ouro.desk.ready import ready_orient_items

    # The ready Desk work: first thing to offer when nothing is asked, and still
    # visible (budgeted, lower) while an ask is being worked on.
    out.extend(ready_orient_items(bundle, priority=2 if not ask["value"] else 5))
    if nxt["value"]:
        stop = f" — stop before: {'; '.join(nxt['stopBefore'])}" if nxt["stopBefore"] else ""
        text = _short(nxt["value"]) + stop + _details(nxt.get("refs"))
        out.append(OrientItem("next safe action", 0, text, nxt["locator"]))
    elif nxt.get("fromPreviousAsk"):
        prev = nxt["fromPreviousAsk"]
        out.append(
            OrientItem(
                "next safe action",
                0,
                "unknown for this ask — record one with `ouro arc next`; from the previous ask "
                f"(not current): {_short(prev['value'], 120)}",
                prev["locator"],
            )
        )
    else:
        out.append(OrientItem("next safe action", 0, "unknown (none recorded)"))
    # The facts, notes and lessons the ask and its next action point at, with their text.
    refs = [*(ask.get("refs") or []), *((nxt.get("refs") or []) if nxt["value"] else [])]
    if refs:
        from ouro.desk.record_orientation import record_items

        out.extend(record_items(bundle, refs))
    handoff = r.get("handoff")
    if handoff:
        who = f" by {handoff['sessionRef']}" if handoff.get("sessionRef") else ""
        out.append(
            OrientItem(
                "handoff",
                0,
                f"{_short(handoff['value'], 400)} ({handoff['recordedAt']}{who})",
                handoff["locator"],
            )
        )
    more_blocked = "ouro arc query blocked"
    for b in r["blockers"]:
        out.append(
            OrientItem("blockers", 1, f"{b['id']}: {_short(b['text'])}", b["locator"], more_blocked)
        )
    for gap in r["missing"]:
        out.append(OrientItem("gaps", 1, gap, None, "ouro arc resume"))
    for iss in r["recorder"]["issues"]:
        prio = 1 if iss["severity"] == "degraded" else 6
        out.append(
            OrientItem(
                "gaps",
                prio,
                f"{iss['code']}: {_short(iss['message'], 240)}",
                None,
                "ouro arc resume",
            )
        )
    out.extend(_obligation_items(r["stores"]["obligations"]))
    out.extend(_claim_items(r["stores"]["claims"]))
    # ouro's own hook bookkeeping is never the "last event" when anything else exists.
    last = r.get("lastUsefulEvent") or r["lastEvent"]
    if last:
        out.append(
            OrientItem(
                "last event",
                7,
                f"{last['kind']} at {last['recordedAt']}: {_short(last['summary'], 160)}",
                last["locator"],
                "ouro arc query since-checkpoint",
            )
        )
    return out


def _obligation_items(summary: dict[str, Any]) -> list[OrientItem]:
    more = "ouro arc query owe"
    if summary.get("error"):
        return [
            OrientItem(
                "obligations",
                1,
                f"obligations: unknown ({summary['error']})",
                paths.OBLIGATIONS_DIR,
            )
        ]
    out = []
    items = summary["items"]
    # Earliest due first, undated after, then by id: stable for an unchanged bundle.
    for ob_id in sorted(items, key=lambda k: (items[k].get("due") or "9999", k)):
        o = items[ob_id]
        due = f" (due {o['due']})" if o.get("due") else ""
        route = ""
        if o.get("route"):
            route = f" — return via {o['route']['channel']}:{o['route']['key']}"
        text = f"{ob_id}: {_short(o.get('what'), 160)} → {o.get('owedTo')}{due}{route}"
        out.append(
            OrientItem(
                "obligations",
                2 if o.get("due") else 3,
                text,
                paths.obligation_locator(ob_id, inner=o["inner"]),
                more,
            )
        )
    for ob_id, reason in sorted(summary.get("errors", {}).items()):
        out.append(
            OrientItem(
                "obligations",
                1,
                f"{ob_id}: unknown — unreadable ({_short(reason, 160)})",
                None,
                more,
            )
        )
    if not out:
        out.append(OrientItem("obligations", 1, "none open"))
    return out


_CLAIM_PRIORITY = {
    "failed": 2,
    "stale_risky": 2,
    "unverifiable": 3,
    "evidence_required": 4,
    "asserted": 5,
}


def _claim_items(summary: dict[str, Any]) -> list[OrientItem]:
    more = "ouro arc query unverified"
    if summary.get("error"):
        return [OrientItem("claims", 1, f"claims: unknown ({summary['error']})", paths.CLAIMS_DIR)]
    items = summary["items"]
    # Most worrying first, newest first within a status (ids sort by time).
    open_ids = sorted(
        (k for k, e in items.items() if e["status"] not in ("verified", "superseded")),
        reverse=True,
    )
    open_ids.sort(key=lambda k: _CLAIM_PRIORITY.get(items[k]["status"], 5))
    out = []
    for k in open_ids:
        status = items[k]["status"]
        # Cached texts are already whitespace-normalised and bounded.
        out.append(
            OrientItem(
                "claims",
                _CLAIM_PRIORITY.get(status, 5),
                f"{k} [{status}] {items[k]['text'][:160]}",
                paths.claim_locator(k),
                more,
            )
        )
    for claim_id, reason in sorted(summary.get("errors", {}).items()):
        out.append(
            OrientItem(
                "claims",
                1,
                f"{claim_id}: unreadable ({_short(reason, 160)})",
                paths.claim_locator(claim_id),
                more,
            )
        )
    if not out:
        verified = sum(1 for e in items.values() if e["status"] == "verified")
        out.append(
            OrientItem(
                "claims", 1, f"all {verified} verified (none open)" if verified else "none recorded"
            )
        )
    return out


# --- packet ---------------------------------------------------------------------


def _load(ref: str) -> Provider:
    module, _, attr = ref.partition(":")
    fn: Provider = getattr(importlib.import_module(module), attr)
    return fn


def _item_line(item: OrientItem) -> str:
    return f"- {item.text}" + (f"  [{item.locator}]" if item.locator else "")


def _more_line(more: str | None, lost: int) -> str:
    return f"+{lost} more: `{more}`" if more else f"+{lost} more (not shown)"


def render(
    items: Sequence[OrientItem],
    kept: set[int],
    agent: str | None,
    lines_cache: Lines | None = None,
) -> tuple[str, dict[str, int]]:
    item_lines: Lines = lines_cache if lines_cache is not None else RedactedLines(items, ())
    sections: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        sections.setdefault(item.section, []).append(index)
    lines = [_title(agent)]
    dropped: dict[str, int] = {}
    for name, members in sections.items():
        lines.append(f"## {name}")
        lines.extend(item_lines[i] for i in members if i in kept)
        lost = sum(1 for i in members if i not in kept)
        if lost:
            dropped[name] = lost
            lines.append(_more_line(_section_more(items, members), lost))
    return "\n".join(lines) + "\n", dropped


def _title(agent: str | None) -> str:
    return f"# orient{f' — {agent}' if agent else ''}"


def _section_more(items: Sequence[OrientItem], members: list[int]) -> str | None:
    return next((items[i].more for i in members if items[i].more), None)


def _fit(
    items: Sequence[OrientItem],
    lines: Lines,
    order: list[int],
    must: int,
    agent: str | None,
    budget: int,
) -> int:
    """How many items (in importance order) fit, by arithmetic on line lengths."""
    sections: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        sections.setdefault(item.section, []).append(index)
    more = {name: _section_more(items, members) for name, members in sections.items()}
    lost = {name: len(members) for name, members in sections.items()}

    def more_len(name: str, n: int) -> int:
        return len(_more_line(more[name], n)) + 1 if n else 0

    total = len(_title(agent)) + 1
    total += sum(len(f"## {name}") + 1 + more_len(name, lost[name]) for name in sections)
    for k, i in enumerate(order):
        name = items[i].section
        grown = (
            total + len(lines[i]) + 1 - more_len(name, lost[name]) + more_len(name, lost[name] - 1)
        )
        if grown > budget and k >= must:
            return k
        total = grown
        lost[name] -= 1
    return len(order)


def collect_items(bundle: Bundle) -> list[OrientItem]:
    """Every packet item from every provider, in order, before any budget.

    Texts are as the providers made them: ``pack`` (and the hooks' change
    rendering) redact each item they show, at render time.
    """
    from ouro.desk.heads import one_read

    items: list[OrientItem] = []
    with one_read():  # the Desk section and the ready tasks share one scan of the heads
        for ref in PROVIDERS:
            items.extend(_load(ref)(bundle))
    return items


def build_packet(bundle: Bundle, budget: int = DEFAULT_BUDGET) -> Packet:
    from ouro.proof.redact import bundle_literals

    return pack(
        collect_items(bundle), budget, agent=agent_name(bundle), literals=bundle_literals(bundle)
    )


class RedactedLines:
    """Each item's packet line, redacted on first use (``ouro.proof.redact``, the one
    redactor): Desk and the record keep what the user wrote, an Arc file edited
    by hand is caught too, and only the items the budget considers pay for it."""

    def __init__(self, items: Sequence[OrientItem], literals: Sequence[str]) -> None:
        self.items = items
        self.literals = literals
        self._lines: dict[int, str] = {}
        self._clean: dict[int, OrientItem] = {}

    def item(self, i: int) -> OrientItem:
        if i not in self._clean:
            from ouro.proof.redact import redact

            raw = self.items[i]
            text = redact(raw.text, self.literals)
            self._clean[i] = raw if text == raw.text else raw._replace(text=text)
        return self._clean[i]

    def __getitem__(self, i: int) -> str:
        line = self._lines.get(i)
        if line is None:
            line = self._lines[i] = _item_line(self.item(i))
        return line


def pack(
    items: Sequence[OrientItem],
    budget: int,
    *,
    agent: str | None,
    literals: Sequence[str] = (),
) -> Packet:
    """The packet for already collected ``items`` (see ``collect_items``), redacted.

    Lets a caller that also needs every item (the hooks hash them) read the
    bundle once: ``build_packet(b, n)`` is ``pack(collect_items(b), n, agent=…,
    literals=bundle_literals(b))``.
    """
    item_lines = RedactedLines(items, literals)
    # Importance order: priority, then position (earlier items matter more).
    order = sorted(range(len(items)), key=lambda i: (items[i].priority, i))
    must = sum(1 for i in order if items[i].priority == 0)
    k = _fit(items, item_lines, order, must, agent, budget)
    text, dropped = render(items, set(order[:k]), agent, item_lines)
    while len(text) > budget and k > must:  # the arithmetic is exact; this is a guard
        k -= 1
        text, dropped = render(items, set(order[:k]), agent, item_lines)
    if len(text) > budget:
        text = (text[: max(0, budget - len(CUT_MARKER))] + CUT_MARKER)[:budget]
    kept = set(order[:k])
    return Packet(text, [item_lines.item(i) for i in sorted(kept)], dropped, budget)


def agent_name(bundle: Bundle) -> str | None:
    """The agent named in ``bundle.json`` (the packet title), if any."""
    try:
        value = bundle.read_meta().get("agent")
    except OSError:
        return None
    return value if isinstance(value, str) else None
