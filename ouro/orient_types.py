"""``OrientItem``: one line of the orientation packet, produced by a provider.

Lives apart from ``ouro.orient`` so providers in any domain can build items
without importing the packet builder (no import cycle).
"""

from __future__ import annotations

from typing import NamedTuple


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
