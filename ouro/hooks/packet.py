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
from collections.abc import Sequence
from json.encoder import encode_basestring as _quote
from typing import TYPE_CHECKING, Any

from ouro.bundle import Bundle
from ouro.hooks import state
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


def packet_context(bundle: Bundle, *, budget: int) -> tuple[str, dict[str, str]]:
    """The packet text within ``budget`` and the hashes of all its items.

    The bundle is read once: the same items are packed to the budget and hashed.
    """
    from ouro.orient import agent_name, pack

    items = _all_items(bundle)
    literals = bundle_literals(bundle)
    text = pack(items, budget, agent=agent_name(bundle), literals=literals).text
    return clip(text, budget), hashes_of(keyed_items(items, literals))


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
    bundle: Bundle, previous: dict[str, object], *, budget: int
) -> tuple[str | None, dict[str, str]]:
    literals = bundle_literals(bundle)
    keyed = keyed_items(_all_items(bundle), literals)
    hashes = hashes_of(keyed)
    before = {k: v for k, v in previous.items() if isinstance(v, str)}
    changed, gone = state.changed_keys(before, hashes)
    if not changed and not gone:
        return None, hashes
    return clip(render_changes(keyed, changed, gone, literals), budget), hashes
