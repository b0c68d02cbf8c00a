"""``OrientItem``: one line of the orientation packet, produced by a provider;
``Packet``: the packet ``ouro.orient.build_packet`` makes of them.

They live apart from ``ouro.orient`` so providers in any domain can build items,
and a domain handed the packet (a habit session, the sentinel's gauntlet) can
take a builder (``Orient``) as an argument, without importing the packet
builder: it sits above the domains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ouro.bundle import Bundle

DEFAULT_BUDGET = 2500


class OrientItem(NamedTuple):
    """One packet line (immutable)."""

    #: section name; sections render in the order they first appear
    section: str
    #: 0 = always shown; larger numbers are dropped first when over budget
    priority: int
    text: str
    #: where the details live (bundle locator), if anywhere
    locator: str | None = None
    #: the command that lists this whole section, named when items are dropped
    more: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "section": self.section,
            "priority": self.priority,
            "text": self.text,
            "locator": self.locator,
        }


class Packet(NamedTuple):
    text: str
    items: list[OrientItem]
    dropped: dict[str, int]
    budget: int = DEFAULT_BUDGET

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "chars": len(self.text),
            "budget": self.budget,
            "items": [item.to_json() for item in self.items],
            "dropped": dict(self.dropped),
        }


#: builds the orientation packet of a bundle: ``ouro.orient.build_packet``,
#: passed down by the library and the front ends
Orient = Callable[["Bundle"], Packet]
