"""Keep derived state current after a write: the one place the library calls.

Every library verb that writes Desk files calls ``after_write`` with the paths
it wrote, once the write has succeeded (the search index hears of them, the
Desk heads cache is refreshed). It never raises: a refresh that fails marks
its cache stale and the write stands. One function, so the derived-state
registry (``ouro.derived``) can take it over in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ouro.bundle import Bundle as Folder


def after_write(folder: Folder, paths: Sequence[Path]) -> None:
    from ouro.desk.hooks import after_write as refresh

    refresh(folder, paths)
