"""The orientation packet as hooks inject it: whole, or only what changed.

``packet_context`` returns the packet text (within the budget) and a hash per
packet item; ``changed_context`` compares the packet as of now with the
hashes saved at the session's last injection and renders only the new or
changed items, plus the ones that went away.

Hashes cover every item the packet would hold without a budget, so an item
that the budget pushed out of view is not reported as "gone". Two things
change with every event, including the hook's own ``turn_accepted``, and are
left out of the comparison so an idle turn stays silent: the "last event"
section and the event count on the status line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring as _quote
from typing import TYPE_CHECKING, Any

from ouro.bundle import Bundle
from ouro.hooks import state
from ouro.hooks.budget import Budget, cut, drop_line, fits
from ouro.hooks.common import clip
from ouro.proof.redact import bundle_literals, redact
from ouro.store import jsonio

if TYPE_CHECKING:
    from ouro.orient_types import OrientItem

CHANGED_HEADER = "# ouro: changed since this session's last orientation"
#: Sections that change with every recorded event (never a reason to speak).
VOLATILE_SECTIONS = frozenset({"last event"})
_EVENT_COUNT = re.compile(r", \d+ events\)")
#: How much of a locator-less item's text names it in the key (and in "no longer listed").
IDENTITY_CHARS = 120

Keyed = list[tuple[str, "OrientItem"]]


def keyed_items(items: list[OrientItem], literals: Sequence[str] = ()) -> Keyed:
    """A stable key per item: section, identity (its locator, else its redacted
    text: keys are saved in the session's state file), ordinal."""
    seen: Counter[tuple[str, str]] = Counter()
    out: Keyed = []
    for item in items:
        if item.section in VOLATILE_SECTIONS:
            continue
        ident = item.locator or redact(_text(item), literals)[:IDENTITY_CHARS]
        base = (item.section, ident)
        out.append((_key(item.section, ident, seen[base]), item))
        seen[base] += 1
    return out


def _key(section: str, ident: str, ordinal: int) -> str:
    """``orjson.dumps([section, ident, ordinal])`` as text (keys are saved in the
    session's state file: they must not change), by the standard library's C
    string encoder: a packet holds ~1,000 items at a year's scale."""
    return f"[{_quote(section)},{_quote(ident)},{ordinal}]"


def _text(item: OrientItem) -> str:
    return _EVENT_COUNT.sub(")", item.text) if item.section == "status" else item.text


def _comparable(item: OrientItem) -> str:
    return f"{_text(item)}\x00{item.locator or ''}"


def hashes_of(keyed: Keyed) -> dict[str, str]:
    return state.item_hashes([(key, _comparable(item)) for key, item in keyed])


def _all_items(bundle: Bundle) -> list[OrientItem]:
    from ouro.orient import collect_items

    return collect_items(bundle)


def packet_context(
    bundle: Bundle,
    *,
    budget: int,
    guide: str = "",
    cap: Budget | None = None,
    title: str = "the host",
) -> tuple[str, dict[str, str]]:
    """The packet text within ``budget`` (then ``guide``, if any) and the hashes of all
    its items; with ``cap``, fitted to it (``fit_packet``).

    The bundle is read once: the same items are packed to the budget and hashed.
    """
    from ouro.orient import agent_name, pack

    items = _all_items(bundle)
    literals = bundle_literals(bundle)
    agent = agent_name(bundle)

    def packed(size: int) -> tuple[str, dict[str, int]]:
        packet = pack(items, size, agent=agent, literals=literals)
        return clip(packet.text, size), packet.dropped

    hashes = hashes_of(keyed_items(items, literals))
    if cap is None:
        return join(packed(budget)[0], guide), hashes
    return fit_packet(packed, budget, guide, cap, title), hashes


def join(packet: str, guide: str) -> str:
    return packet + ("\n" + guide if guide else "")


def fit_packet(
    packed: Callable[[int], tuple[str, dict[str, int]]],
    budget: int,
    guide: str,
    cap: Budget,
    title: str,
) -> str:
    """The packet (``packed(size)``: text and items dropped per section) and the guide
    within ``cap``, as the host counts it.

    What goes first when they do not fit: the packet's items by priority (the
    packer drops the lowest first and names each section's command), then the
    guide, and only then is the packet cut (its priority-0 items alone are over
    the cap). The result then ends with ``budget.drop_line`` naming what the cap
    left out and the tool that shows it.
    """
    from ouro.orient import CUT_MARKER

    text, before = packed(budget)
    whole = join(text, guide)
    if fits(whole, cap):
        return whole
    best = ""
    for kept_guide in ([guide] if guide else []) + [""]:
        lo, hi, found = 0, budget, None
        while lo <= hi:  # the largest packet size that fits, with the line
            size = (lo + hi) // 2
            text, dropped = packed(size)
            lost = _lost(before, dropped, text, CUT_MARKER, guide and not kept_guide)
            out = join(text, kept_guide) + drop_line(lost, title, cap) + "\n"
            if fits(out, cap):
                found, lo = (out, CUT_MARKER in text), size + 1
            else:
                hi = size - 1
        if found is not None:
            best = found[0]
            if not found[1]:  # nothing of priority 0 was cut: done
                return best
    return best or cut(drop_line(["the packet"], title, cap), cap)


def _lost(
    before: dict[str, int], after: dict[str, int], text: str, marker: str, guide: object
) -> list[str]:
    """What the cap left out, in words: packet items per section, the guide, a cut."""
    more = {s: n - before.get(s, 0) for s, n in after.items() if n > before.get(s, 0)}
    out = []
    if more:
        total = sum(more.values())
        sections = ", ".join(f"{s} {n}" for s, n in more.items())
        out.append(f"{total} packet item{'s' if total != 1 else ''} ({sections})")
    if guide:
        out.append("the operating guide")
    if marker in text:
        out.append("the end of the packet")
    return out or ["nothing"]


def render_changes(
    keyed: Keyed, changed: list[str], gone: list[str], literals: Sequence[str] = ()
) -> str:
    """The changed items (each redacted: a render surface) and the ones gone."""
    wanted = set(changed)
    lines = [CHANGED_HEADER]
    section = None
    for key, item in keyed:
        if key not in wanted:
            continue
        if item.section != section:
            section = item.section
            lines.append(f"## {section}")
        text = redact(item.text, literals)
        lines.append(f"- {text}" + (f"  [{item.locator}]" if item.locator else ""))
    # A gone key in a section that now shows a changed item was replaced, not removed.
    shown = {_parse(key)[0] for key in changed}
    removed = sorted(p for p in map(_parse, gone) if p[0] not in shown)
    if removed:
        names = [f"{s}: {ident}" for s, ident in removed]
        lines.append("## no longer listed")
        lines.extend(f"- {name}" for name in names)
    return "\n".join(lines) + "\n"


def _parse(key: str) -> tuple[str, str]:
    """(section, locator) of a key written by ``keyed_items`` (any other: as is)."""
    try:
        value: Any = jsonio.loads(key)
    except jsonio.JSONDecodeError:
        return key, ""
    if isinstance(value, list) and len(value) == 3:
        return str(value[0]), str(value[1])
    return key, ""


def changed_context(
    bundle: Bundle,
    previous: dict[str, object],
    *,
    budget: int,
    cap: Budget | None = None,
    title: str = "the host",
) -> tuple[str | None, dict[str, str]]:
    literals = bundle_literals(bundle)
    keyed = keyed_items(_all_items(bundle), literals)
    hashes = hashes_of(keyed)
    before = {k: v for k, v in previous.items() if isinstance(v, str)}
    changed, gone = state.changed_keys(before, hashes)
    if not changed and not gone:
        return None, hashes
    text = clip(render_changes(keyed, changed, gone, literals), budget)
    if cap is None or fits(text, cap):
        return text, hashes
    return fit_changes(keyed, changed, gone, literals, cap, title), hashes


def fit_changes(
    keyed: Keyed,
    changed: list[str],
    gone: list[str],
    literals: Sequence[str],
    cap: Budget,
    title: str,
) -> str:
    """The changes within ``cap``: the lowest-priority changed items go first (then
    the later ones of a priority), and the text ends with ``budget.drop_line``."""
    rank = {key: (item.priority, i) for i, (key, item) in enumerate(keyed)}
    order = sorted(changed, key=lambda k: rank.get(k, (99, 0)))
    lo, hi, best = 0, len(order), ""
    while lo <= hi:  # the most changed items that fit, with the line
        k = (lo + hi) // 2
        lost = len(order) - k
        text = (
            render_changes(keyed, order[:k], gone, literals)
            + drop_line([f"{lost} changed item{'s' if lost != 1 else ''}"], title, cap)
            + "\n"
        )
        if fits(text, cap):
            best, lo = text, k + 1
        else:
            hi = k - 1
    return best or cut(render_changes(keyed, [], gone, literals), cap)
