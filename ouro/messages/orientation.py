"""The messages section of the orientation packet: unread messages to this bundle.

Pure: reads ``arc/messages/inbox.jsonl`` and ``read.jsonl``; writes nothing.
Budgeted: at most ``SHOWN`` items, each text cut to ``TEXT``; the packet's
budget drops them like any other section ("+N more: ouro message list").
"""

from __future__ import annotations

from ouro import messages
from ouro.bundle import Bundle
from ouro.orient_types import OrientItem

SECTION = "Messages: unread"
SHOWN = 5
TEXT = 200


def message_items(bundle: Bundle) -> list[OrientItem]:
    box = messages.inbox(bundle)
    unread = [m for m in box.messages if not m["read"]]
    items = []
    for m in reversed(unread[-SHOWN:]):  # newest first
        text = str(m.get("text") or "")
        if len(text) > TEXT:
            text = text[: TEXT - 1] + "…"
        task = f" [task {m['task']}]" if m.get("task") else ""
        items.append(
            OrientItem(
                SECTION,
                1,
                f"{m.get('id')} {m.get('kind')} from {m.get('from')}{task}: {text}",
                messages.INBOX,
                more="ouro message list --unread",
            )
        )
    if len(unread) > SHOWN:
        items.append(
            OrientItem(
                SECTION,
                1,
                f"{len(unread) - SHOWN} older unread",
                messages.INBOX,
                more="ouro message list --unread",
            )
        )
    items.extend(
        OrientItem(SECTION, 1, f"unreadable: {p}", messages.INBOX) for p in box.problems[:3]
    )
    return items
