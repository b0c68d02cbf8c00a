"""Markdown files with a YAML front matter block.

Format::

    ---
    key: value
    ---
    body text

``render(parse(text))`` returns ``text`` for anything ``render`` produced.
YAML timestamps stay strings (``2026-11-30`` is not turned into a date) so a
round trip never changes a value's type.
"""

from __future__ import annotations

from typing import Any

import yaml

from ouro.errors import CorruptFile

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_BaseLoader):  # type: ignore[misc]
    pass


# Drop the implicit timestamp resolver: dates stay the strings we wrote.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str, *, source: str = "<yaml>") -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise CorruptFile(
            f"{where}: invalid YAML ({getattr(exc, 'problem', None) or exc})",
            hint="fix the YAML by hand; ouro left the file untouched",
        ) from None


def dump_yaml(data: Any) -> str:
    return str(
        yaml.dump(
            data,
            Dumper=_BaseDumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    )


def parse(text: str, *, source: str = "<markdown>") -> tuple[dict[str, Any], str]:
    """Split a document into (front matter, body). No front matter → ({}, text)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise CorruptFile(
                f"{source}:1: front matter opened with '---' but never closed",
                hint="add a closing '---' line after the front matter",
            )
    meta = load_yaml(text[4 : end + 1], source=source) if end > 3 else {}
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise CorruptFile(
            f"{source}:2: front matter must be a mapping of keys to values",
            hint="write the front matter as 'key: value' lines",
        )
    body = text[end + 5 :]
    return meta, body


def render(meta: dict[str, Any], body: str) -> str:
    if not meta:
        return body
    return f"---\n{dump_yaml(meta)}---\n{body}"
