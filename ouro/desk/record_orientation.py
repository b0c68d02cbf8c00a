"""The record the work points at, for the orientation packet.

Arc points into Desk by locator (``arc ask/next --ref``) and never copies a
Desk body; the packet is where a fresh agent reads what those locators hold, so
it does not need a search to find the fact or note its ask names. For each
``--ref`` of the current ask and of its next safe action (in that order, each
once, at most ``MAX_REFS``):

- a diary fact (``desk/_record/diary/facts.jsonl#f-…``): its text, what it is
  about, and the fact that supersedes it, if one does;
- a note (``desk/_record/notes/….md``) or a lesson (``desk/_meta/tips/….md``):
  its title and the start of its body.

Each text is cut to ``TEXT`` characters (whitespace folded); the packet
redacts it like every item (``ouro.orient.RedactedLines``). Priority
``PRIORITY`` is below every Arc item, so the budget drops the record before it
drops any Arc line ("+N more: `ouro arc query doing`" says so). A locator that
no longer resolves is said to, never skipped (unknown stays unknown). Task
locators are left to the Desk sections. Pure: reads files, writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.orient_types import OrientItem

SECTION = "Record: what the ask points at"
PRIORITY = 8
TEXT = 400
MAX_REFS = 10
MORE = "ouro arc query doing"
FACTS = "desk/_record/diary/facts.jsonl"
NOTES = "desk/_record/notes/"
TIPS = "desk/_meta/tips/"


def _short(text: str, limit: int = TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_items(bundle: Bundle, refs: Sequence[str]) -> list[OrientItem]:
    out: list[OrientItem] = []
    for ref in dict.fromkeys(refs):
        text = _text(bundle, ref)
        if text is not None:
            out.append(OrientItem(SECTION, PRIORITY, text, ref, more=MORE))
        if len(out) >= MAX_REFS:
            break
    return out


def _text(bundle: Bundle, ref: str) -> str | None:
    path, _, fragment = ref.partition("#")
    if path == FACTS and fragment:
        return _fact(bundle, fragment)
    if path.endswith(".md") and path.startswith((NOTES, TIPS)):
        what = "note" if path.startswith(NOTES) else "lesson"
        return _doc(bundle, path, what)
    return None


def _fact(bundle: Bundle, fact_id: str) -> str:
    from ouro.desk.record_view import find_fact

    try:
        fact, newer = find_fact(bundle, fact_id)
    except OSError as exc:
        return f"fact {fact_id}: unknown (facts.jsonl unreadable: {exc.strerror or exc})"
    if fact is None:
        return f"fact {fact_id}: not in facts.jsonl any more"
    about = fact.get("about")
    on = (
        f" (about {', '.join(str(a) for a in about[:5])})"
        if isinstance(about, list) and about
        else ""
    )
    later = f" — superseded by {newer}" if newer else ""
    return f"fact {fact_id}{on}: {_short(str(fact.get('text') or ''))}{later}"


def _doc(bundle: Bundle, locator: str, what: str) -> str:
    from ouro.desk.docs import read_doc

    try:
        meta, body = read_doc(bundle.path(locator), source=locator)
    except OuroError as exc:
        return f"{what} {locator}: unknown ({_short(exc.message, 160)})"
    except OSError as exc:
        return f"{what} {locator}: unknown (cannot read: {exc.strerror or exc})"
    title = meta.get("title") if isinstance(meta.get("title"), str) else locator.rsplit("/", 1)[-1]
    return f"{what} {_short(str(title), 120)}: {_short(body)}"
