"""The messages section of the orientation packet: unread messages, counted.

Pure: reads ``arc/messages/inbox.jsonl`` and ``read.jsonl``; writes nothing.

Another agent's words stay out of the prompt: the packet (and so every hook
injection, which is built from the same items) shows unread messages only as
counts by sender and kind, and names the verb that reads them
(``ouro message read``). A body reaches the model only through that explicit
read. The sender's name is peer-written too, so it is shown only as a short
name (``_sender``); an unknown kind is counted as ``other``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ouro import messages
from ouro.bundle import Bundle
from ouro.orient_types import OrientItem

SECTION = "Messages: unread"
#: at most this many senders get a line of their own; the rest are summed up
SHOWN = 5
READ_VERB = "ouro message read"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,39}")


def _sender(message: dict[str, Any]) -> str:
    """The sender as a short name, or ``(unnamed sender)`` when it is not one."""
    value = str(message.get("from") or "")
    return value if _NAME.fullmatch(value) else "(unnamed sender)"


def _kind(message: dict[str, Any]) -> str:
    kind = message.get("kind")
    return kind if kind in messages.KINDS else "other"


def unread_counts(bundle: Bundle) -> tuple[dict[str, Counter[str]], list[str]]:
    """Unread messages by sender, then by kind (newest sender first), and read problems."""
    box = messages.inbox(bundle)
    by_sender: dict[str, Counter[str]] = {}
    for m in reversed([m for m in box.messages if not m["read"]]):
        by_sender.setdefault(_sender(m), Counter())[_kind(m)] += 1
    return by_sender, box.problems


def message_items(bundle: Bundle) -> list[OrientItem]:
    by_sender, problems = unread_counts(bundle)
    items = []
    senders = list(by_sender.items())
    for sender, kinds in senders[:SHOWN]:
        total = sum(kinds.values())
        detail = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        items.append(
            OrientItem(
                SECTION,
                1,
                f"{total} unread from {sender} ({detail}) — read with `{READ_VERB}`",
                messages.INBOX,
                more="ouro message list --unread",
            )
        )
    if len(senders) > SHOWN:
        rest = sum(sum(k.values()) for _s, k in senders[SHOWN:])
        items.append(
            OrientItem(
                SECTION,
                1,
                f"{rest} more unread from {len(senders) - SHOWN} other senders — `{READ_VERB}`",
                messages.INBOX,
                more="ouro message list --unread",
            )
        )
    items.extend(OrientItem(SECTION, 1, f"unreadable: {p}", messages.INBOX) for p in problems[:3])
    return items
