"""The seeded set of credential shapes, shared with the ``secrets`` drill.

``SHAPES``: kind -> (text as a user would type it, the part that must never
show). The table lives in ``ouro.drills.secrets`` so the drill and the
tests seed exactly the same set.
"""

from __future__ import annotations

from ouro.drills.secrets import SHAPES

__all__ = ["SHAPES"]
