"""Locators: bundle-relative POSIX paths, optionally ``#<id>`` for a record
inside a JSONL file (``desk/_record/diary/facts.jsonl#f-…``).

A locator never leaves its bundle: absolute paths, ``..``, NUL, backslashes and
symlinks that point outside are refused with ``InvalidLocator``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ouro.errors import InvalidLocator

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ouro.tuples import NamedTuple

_HINT = "use a bundle-relative path such as 'desk/<track>/<task>/task.md' or 'desk/_record/diary/facts.jsonl#f-…'"


class Locator(NamedTuple):
    """A parsed locator (immutable, ordered by path then fragment)."""

    path: str
    fragment: str | None = None

    @classmethod
    def parse(cls, text: str) -> Locator:
        if not isinstance(text, str) or not text:
            raise InvalidLocator("locator is empty", hint=_HINT)
        if "\x00" in text:
            raise InvalidLocator("locator contains a NUL byte", hint=_HINT)
        if "\\" in text:
            raise InvalidLocator(f"locator {text!r} contains a backslash", hint=_HINT)
        path, sep, fragment = text.partition("#")
        if sep and not fragment:
            raise InvalidLocator(f"locator {text!r} has an empty '#' fragment", hint=_HINT)
        if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
            raise InvalidLocator(f"locator {text!r} is absolute", hint=_HINT)
        parts = path.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise InvalidLocator(f"locator {text!r} has an empty, '.' or '..' segment", hint=_HINT)
        return cls(path, fragment or None)

    def __str__(self) -> str:
        return self.path if self.fragment is None else f"{self.path}#{self.fragment}"

    def resolve(self, root: Path) -> Path:
        """The absolute path inside ``root``; refuses anything that escapes it."""
        base = Path(os.path.realpath(root))
        target = Path(os.path.realpath(base / self.path))
        if target != base and base not in target.parents:
            raise InvalidLocator(
                f"locator {self} resolves outside the bundle (through a symlink)", hint=_HINT
            )
        return target

    @classmethod
    def for_path(cls, root: Path, path: Path, fragment: str | None = None) -> Locator:
        """The locator of an absolute path inside ``root``."""
        base = Path(os.path.realpath(root))
        full = Path(os.path.realpath(path))
        try:
            rel = full.relative_to(base)
        except ValueError:
            raise InvalidLocator(f"{path} is not inside the bundle {root}", hint=_HINT) from None
        return cls.parse(rel.as_posix() + (f"#{fragment}" if fragment else ""))
