"""What is in a bundle, read without writing: the parts of ``b.info()``
(``ouro.api``) and its rendering."""

from __future__ import annotations

import os
from typing import Any

from ouro.bundle import Bundle

AREAS = ("arc", "desk", "habits", "state")


def count_files(folder: os.PathLike[str] | str) -> int:
    """Files under ``folder`` as ``os.walk`` lists them (a symlink to a folder is
    not followed nor counted; unreadable folders are skipped), by ``scandir``."""
    total = 0
    stack = [os.fspath(folder)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not entry.is_symlink():
                        stack.append(entry.path)
                elif entry.name != ".keep" and not entry.name.endswith(".lock"):
                    total += 1
    return total


def index_state(bundle: Bundle) -> dict[str, Any]:
    """fresh | stale | missing (or unavailable) with counts; reads only."""
    from ouro.index.state import index_status

    return index_status(bundle.root)
