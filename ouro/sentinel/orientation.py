"""The sentinel's part of the orientation packet: an unusable recovery anchor.

Pure: reads ``latest-ready.json`` only (``ouro.sentinel.anchor``). The packet
says nothing about the sentinel while its anchor is sound (receipt ids change
with every refresh, and a packet that changed on each one would wake every
UserPromptSubmit hook); a latest-ready receipt that is not ready in every
respect, or whose resume snapshot cannot continue, is named with the reason,
so no agent (and no hook injection, which carries the packet) takes it as the
place to resume from.
"""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.orient_types import OrientItem
from ouro.sentinel import paths
from ouro.sentinel.anchor import read_anchor, unusable_text

SECTION = "sentinel"


def sentinel_items(bundle: Bundle) -> list[OrientItem]:
    receipt, unusable = read_anchor(bundle)
    if unusable is None:
        return []
    said = unusable if receipt is None else unusable_text(receipt, unusable)  # None: outside
    return [
        OrientItem(
            SECTION,
            1,
            said + ": not a recovery anchor — resume from Arc and Desk",
            paths.LATEST_READY,
            more="ouro sentinel status",
        )
    ]
