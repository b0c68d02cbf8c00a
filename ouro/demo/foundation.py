"""Demo section: the bundle layout, info, and locator safety."""

from __future__ import annotations

import os

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step
from ouro.errors import InvalidLocator


def _tree(bundle: Bundle) -> str:
    lines = []
    for dirpath, dirs, _files in os.walk(bundle.root):
        dirs.sort()
        rel = os.path.relpath(dirpath, bundle.root)
        if rel == ".":
            continue
        depth = rel.count(os.sep)
        lines.append("  " * depth + os.path.basename(dirpath) + "/")
    return "\n".join(lines)


def run(bundle: Bundle, step: Step, show: Show) -> None:
    step("the layout: arc/ is live continuity, desk/ is work and the record", _tree(bundle))
    step("ouro info", show(("info",), Library(bundle).info()))
    try:
        bundle.path("../outside.txt")
    except InvalidLocator as exc:
        step("locators never leave the bundle", f"'../outside.txt' refused: {exc.message}")
