"""Markdown documents with front matter, as Desk reads and writes them.

Contract: keys ouro knows are written first, in the order ``docs/record.md``
lists them; keys added by hand are preserved after them. A document is written
by atomic replace, so a reader never sees half a task. A file whose front
matter cannot be parsed raises ``CorruptFile`` naming it and is never
rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile, NotFound
from ouro.store import frontmatter
from ouro.store.atomic import atomic_write_text


def read_doc(path: Path, *, source: str) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"{source} does not exist", hint="check the name or id") from None
    except UnicodeDecodeError as exc:
        raise CorruptFile(
            f"{source}: not UTF-8 ({exc})", hint="fix the file by hand; ouro left it untouched"
        ) from None
    return frontmatter.parse(text, source=source)


def ordered(meta: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """Known keys in contract order (missing ones as None), then the rest as found."""
    out = {key: meta.get(key) for key in keys}
    out.update((k, v) for k, v in meta.items() if k not in out)
    return out


def render_doc(meta: dict[str, Any], body: str) -> str:
    if body and not body.endswith("\n"):
        body += "\n"
    return frontmatter.render(meta, body) if meta else body


def write_doc(path: Path, meta: dict[str, Any], body: str) -> None:
    atomic_write_text(path, render_doc(meta, body))
