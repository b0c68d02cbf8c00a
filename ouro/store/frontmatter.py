"""Markdown files with a YAML front matter block: the one reader and writer.

Format::

    ---
    key: value
    ---
    body text

``render(parse(text))`` returns ``text`` for anything ``render`` produced.
YAML timestamps stay strings (``2026-11-30`` is not turned into a date) so a
round trip never changes a value's type.

``parse`` is the one reader (``keys=`` asks for some keys only: a task's head).
It is cheap for the shape ouro writes: a front matter of flat ``key: value``
lines whose values are plain words, integers, ``null``, ``true``/``false``,
single-quoted or simple double-quoted strings, ``[]`` or ``{}``, and block lists
of such values (``tags:`` then ``- item`` lines, as ``render`` writes a note's
tags) is read without YAML. Anything else (nesting, indented or flow lists,
block scalars, anything a YAML resolver could read differently) goes to
PyYAML, so the answer is always YAML's; a key outside ``keys`` may hold any
block, which is skipped unread. PyYAML is imported only when a document needs
it or when writing.
"""

from __future__ import annotations

import re
from typing import Any

from ouro.errors import CorruptFile

_LOADER: Any = None


def _loader() -> Any:
    global _LOADER
    if _LOADER is None:
        import yaml

        base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class _Loader(base):  # type: ignore[misc]
            pass

        # Drop the implicit timestamp resolver: dates stay the strings we wrote.
        _Loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }
        _LOADER = _Loader
    return _LOADER


#: ``key: value`` (or ``key:``) on one line, the key a plain identifier
_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
#: characters YAML treats as breaks or refuses: leave such values to YAML
_ODD = "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ufeff"
#: a plain scalar that YAML 1.1 reads as this very string: starts with a
#: letter, no ``:`` or ``#`` anywhere, no odd character, no trailing blank
_PLAIN = re.compile(f"[A-Za-z][^:#{_ODD}]*(?<! )")
_ODD_CHAR = re.compile(f"[{_ODD}]")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_WORDS: dict[str, Any] = {
    "null": None,
    "Null": None,
    "NULL": None,
    "~": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
    "[]": [],
    "{}": {},
}
#: plain words other YAML 1.1 resolvers claim (booleans, floats): leave to YAML
_RESERVED = frozenset({"yes", "no", "on", "off", "y", "n", "nan", "inf"})


def _scalar(raw: str) -> tuple[bool, Any]:
    """(True, value) when ``raw`` is a value the fast reader is sure of."""
    if raw in _WORDS:
        value = _WORDS[raw]
        if isinstance(value, list | dict):
            value = type(value)()  # a fresh [] or {} each time
        return True, value
    first = raw[:1]
    if first in ("'", '"'):
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != first or _ODD_CHAR.search(inner):
            return False, None
        if first == "'" and "'" not in inner.replace("''", ""):
            return True, inner.replace("''", "'")
        if first == '"' and '"' not in inner and "\\" not in inner:
            return True, inner
        return False, None
    if _INT.fullmatch(raw):
        return True, int(raw)
    if _PLAIN.fullmatch(raw) and raw.lower() not in _RESERVED:
        return True, raw
    return False, None


def _top(line: str) -> tuple[str, bool, Any] | None:
    """A top-level ``key: value`` line as (key, opens a block, value), or None when
    the fast reader is not sure of it (YAML's job)."""
    match = _LINE.fullmatch(line)
    if match is None:
        return None
    key, raw = match.group(1), match.group(2)
    if key in _WORDS or key.lower() in _RESERVED:
        return None  # a key YAML would not read as a string
    if raw is None:
        return key, True, None  # a block list of plain items may follow
    ok, value = _scalar(raw)
    return (key, False, value) if ok else None


#: short lines read before -> what ``_top`` / ``_scalar`` made of them: most
#: lines of ouro's front matter repeat from file to file (``status: open``,
#: ``heldBy: null``, a tag). Values ``[]`` and ``{}`` are copied on every use.
_SEEN_TOP: dict[str, tuple[str, bool, Any] | None] = {}
_SEEN_ITEM: dict[str, tuple[bool, Any]] = {}
_SEEN_LONGEST = 32
_SEEN_MOST = 4096
_FRESH = (list, dict)
_MISSING: Any = object()


def _plain(block: str, keys: frozenset[str] | None) -> dict[str, Any] | None:
    """The front matter block (between the ``---`` lines) read without YAML, or
    None when it is not in the plain shape described in the module doc. With
    ``keys``, only those keys are read and any other key's block is skipped."""
    meta: dict[str, Any] = {}
    seen: set[str] = set()
    current: str | None = None  # the ``key:`` whose block the following lines belong to
    tops, items = _SEEN_TOP, _SEEN_ITEM
    for line in block.split("\n"):
        if not line:
            continue
        if line[0] in " -":
            if current is None:
                return None  # a stray block
            if keys is not None and current not in keys:
                if line[0] == "-" and line != "-" and not line.startswith("- "):
                    return None
                continue  # a block nobody asked for: skipped, not read
            if line[:2] != "- ":
                return None  # nesting: YAML's job
            scalar = items.get(line)
            if scalar is None:
                scalar = _scalar(line[2:])
                if len(line) <= _SEEN_LONGEST:
                    if len(items) >= _SEEN_MOST:
                        items.clear()
                    items[line] = scalar
            ok, item = scalar
            if not ok:
                return None
            if item.__class__ in _FRESH:
                item = item.__class__()
            if meta[current] is None:
                meta[current] = []
            meta[current].append(item)
            continue
        top = tops.get(line, _MISSING)
        if top is _MISSING:
            top = _top(line)
            if len(line) <= _SEEN_LONGEST:
                if len(tops) >= _SEEN_MOST:
                    tops.clear()
                tops[line] = top
        if top is None:
            return None
        key, opens, value = top
        if key in seen:
            return None  # a repeated key
        seen.add(key)
        current = None
        wanted = keys is None or key in keys
        if opens:
            if wanted:
                meta[key] = None
            current = key
            continue
        if wanted:
            meta[key] = value.__class__() if value.__class__ in _FRESH else value
    return meta


def load_yaml(text: str, *, source: str = "<yaml>") -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise CorruptFile(
            f"{where}: invalid YAML ({getattr(exc, 'problem', None) or exc})",
            hint="fix the YAML by hand; ouro left the file untouched",
        ) from None


def dump_yaml(data: Any) -> str:
    import yaml

    return str(
        yaml.dump(
            data,
            Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    )


def split(text: str, *, source: str = "<markdown>") -> tuple[str | None, str]:
    """(front matter block, body); (None, text) when there is no front matter.
    A block opened with ``---`` and never closed is ``CorruptFile``."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise CorruptFile(
                f"{source}:1: front matter opened with '---' but never closed",
                hint="add a closing '---' line after the front matter",
            )
    return (text[4 : end + 1] if end > 3 else ""), text[end + 5 :]


def parse(
    text: str, *, source: str = "<markdown>", keys: frozenset[str] | None = None
) -> tuple[dict[str, Any], str]:
    """Split a document into (front matter, body). No front matter → ({}, text).
    With ``keys``, the front matter holds only those of them that are present."""
    block, body = split(text, source=source)
    if block is None:
        return {}, text
    meta = _plain(block, keys)
    if meta is not None:
        return meta, body
    meta = load_yaml(block, source=source)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise CorruptFile(
            f"{source}:2: front matter must be a mapping of keys to values",
            hint="write the front matter as 'key: value' lines",
        )
    if keys is not None:
        meta = {k: v for k, v in meta.items() if k in keys}
    return meta, body


def render(meta: dict[str, Any], body: str) -> str:
    if not meta:
        return body
    return f"---\n{dump_yaml(meta)}---\n{body}"
