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
from ouro.store.bounded import NotRegularFile, file_text


def read_doc(path: Path, *, source: str) -> tuple[dict[str, Any], str]:
    try:
        text = file_text(path)  # a FIFO: refused, never a hang
    except FileNotFoundError:
        raise NotFound(f"{source} does not exist", hint="check the name or id") from None
    except NotRegularFile as exc:
        raise CorruptFile(
            f"{source}: {exc.strerror}",
            hint="replace it with a regular file; ouro left it untouched",
        ) from None
    except OSError as exc:  # TooLarge (past DOC_LIMIT, never read), permissions, ...
        raise CorruptFile(
            f"{source}: cannot read ({exc.strerror or exc})",
            hint="fix the file by hand; ouro left it untouched",
        ) from None
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


def refreshed_meta(
    path: Path, source: str, fields: dict[str, Any], keys: Sequence[str], now: str
) -> tuple[dict[str, Any], bool]:
    """Front matter for (re)writing a titled document: the given fields, ``created``
    kept from an existing file (and hand-added keys after ours), ``updated`` = now.
    Returns (front matter, whether the file is new). Caller holds the writer's lock."""
    created = not path.exists()
    old: dict[str, Any] = {} if created else read_doc(path, source=source)[0]
    merged = {**old, **fields, "created": old.get("created") or now, "updated": now}
    return ordered(merged, keys), created


def render_doc(meta: dict[str, Any], body: str) -> str:
    if body and not body.endswith("\n"):
        body += "\n"
    return frontmatter.render(meta, body) if meta else body


def write_doc(path: Path, meta: dict[str, Any], body: str) -> None:
    atomic_write_text(path, render_doc(meta, body))
