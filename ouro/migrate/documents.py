"""Markdown content for migrated notes, journal entries and daily files.

Contract: every function here is pure and deterministic (the same legacy bytes
give the same output), so an interrupted migration rebuilds identical files.
The legacy body is never edited: front matter is added or completed *around*
it, and ``body_of(result) == body_of(source)`` always holds -- that is what
the accounting checks.

Current note front matter (``docs/record.md``, "Notes"): title, tags, created,
updated, then any keys already present; migrated documents add
``provenance: {tool: migrate, source, sourceHash}``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ouro.models.clock import format_time
from ouro.store import frontmatter

NOTE_KEYS = ("title", "tags", "created", "updated")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def split(text: str, *, source: str) -> tuple[dict[str, Any], str]:
    """(front matter, body); raises CorruptFile if the front matter is broken."""
    return frontmatter.parse(text, source=source)


def body_of(text: str, *, source: str) -> str:
    return split(text, source=source)[1]


def _title(meta: dict[str, Any], body: str, hint: dict[str, Any], stem: str) -> str:
    for value in (meta.get("title"), hint.get("title")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    match = _HEADING.search(body)
    return match.group(1).strip() if match else stem


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def mtime_iso(mtime_ns: int) -> str:
    return format_time(datetime.fromtimestamp(mtime_ns / 1e9, UTC))


def _provenance(source: str, source_hash: str, kind: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": "migrate", "source": source, "sourceHash": source_hash}
    if kind:
        out["kind"] = kind
    return out


def note_meta(
    text: str,
    *,
    source: str,
    source_hash: str,
    stem: str,
    mtime_ns: int,
    hint: dict[str, Any],
) -> dict[str, Any] | None:
    """The front matter a legacy note needs, or None when it is complete (moved as is)."""
    meta, body = split(text, source=source)
    if all(meta.get(k) not in (None, "") for k in NOTE_KEYS):
        return None
    created = meta.get("created") or hint.get("created") or mtime_iso(mtime_ns)
    out: dict[str, Any] = {
        "title": _title(meta, body, hint, stem),
        "tags": _tags(meta.get("tags", hint.get("tags"))),
        "created": str(created),
        "updated": str(meta.get("updated") or hint.get("updated") or created),
    }
    out.update((k, v) for k, v in meta.items() if k not in out)
    out.setdefault("provenance", _provenance(source, source_hash, None))
    return out


def journal_meta(
    text: str, *, source: str, source_hash: str, stem: str, mtime_ns: int
) -> dict[str, Any]:
    meta, body = split(text, source=source)
    date = _DATE.search(source)
    created = meta.get("created") or (
        f"{date.group(1)}-{date.group(2)}-{date.group(3)}T00:00:00.000Z"
        if date
        else mtime_iso(mtime_ns)
    )
    tags = _tags(meta.get("tags"))
    if "journal" not in tags:
        tags.append("journal")
    out: dict[str, Any] = {
        "title": _title(meta, body, {}, stem),
        "tags": tags,
        "created": str(created),
        "updated": str(meta.get("updated") or created),
    }
    out.update((k, v) for k, v in meta.items() if k not in out)
    out["provenance"] = _provenance(source, source_hash, "journal")
    return out


def render_with(meta: dict[str, Any], text: str, *, source: str) -> str:
    """The legacy text's body under ``meta`` (body bytes untouched)."""
    return frontmatter.render(meta, body_of(text, source=source))


def daily_separator(source: str) -> str:
    return f"\n---\n\n<!-- migrated from {source} (legacy diary) -->\n\n"


def daily_join(current: str, legacy: str, source: str) -> str:
    """``current`` + separator + ``legacy``; the legacy text is appended, never merged in."""
    lead = current if current.endswith("\n") or not current else current + "\n"
    return lead + daily_separator(source) + legacy


def daily_contains(current: str, legacy: str, source: str) -> bool:
    return current == legacy or (daily_separator(source) + legacy) in current
