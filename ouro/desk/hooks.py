"""Write-through to the derived caches, called after every Desk write.

Desk writes files; the index (a layer above) must hear about them. The domain
modules never import the index: the library (``ouro.api._after``) calls
``after_write`` once the file write has succeeded. ``ouro.index.sync.touch_paths`` never raises: if it
cannot update the index it marks it stale, and the write stands either way.
A write that names a task path also refreshes the desk heads cache
(``ouro.desk.heads``; a failed refresh leaves a cache readers validate anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ouro.bundle import Bundle


def after_write(bundle: Bundle, paths: Sequence[Path]) -> None:
    if not paths:
        return
    from ouro.index.sync import touch_paths  # imported on use: keeps CLI start fast

    touch_paths(bundle, list(paths))
    from ouro.desk import heads

    if heads.touches_tasks(bundle, paths):
        heads.refresh_quietly(bundle, paths)
