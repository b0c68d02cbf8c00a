"""From Desk files to index rows (pure: bytes in, rows out, no database).

Which files are indexed (paths relative to ``desk/``, formats in docs/record.md):

=================================  ==========  ==============================
path                               file kind   searchable items (doc kind)
=================================  ==========  ==============================
``<track>/track.md``               track       one ``track``
``<track>/<task>/task.md``         task        one ``task``
``<track>/<task>/iterations/N.md`` iteration   one ``iteration``
``_friction/<id>.md``              friction    one ``friction``
``_meta/tips/<slug>.md``           tip         one ``tip``
``_record/notes/**/<slug>.md``     note        one ``note``
``_record/diary/daily/<date>.md``  daily       one ``daily`` (the whole day)
``_record/diary/facts.jsonl``      facts       one ``fact`` per good line (``Fact``)
``_record/diary/entities.json``    entities    none (``entities`` rows come from facts)
=================================  ==========  ==============================

Anything else (hidden files, ``featured.md``, the notes manifest, stray files)
is not indexed. A malformed file or line becomes a ``Problem`` with its
locator and line and yields no rows; it never stops the sync.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, NamedTuple

from ouro.desk.heads import require_id
from ouro.errors import CorruptFile
from ouro.index.fresh import ENTITIES, FACTS
from ouro.models.plain import Frozen, Plain
from ouro.store import jsonio
from ouro.store.frontmatter import parse as parse_frontmatter

_DATE_MD = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_ITERATION_MD = re.compile(r"^(\d+)\.md$")
_HEADING_TIME = re.compile(r"^## (\d{2}:\d{2}:\d{2})Z?\s*$", re.MULTILINE)
_LINE_IN_MESSAGE = re.compile(r":(\d+): ")
TITLE_CHARS = 80


class Doc(Plain):
    """One searchable item plus the structured row of its kind."""

    __slots__ = ("body", "keys", "kind", "labels", "locator", "row", "title", "track", "updated")

    def __init__(
        self,
        locator: str,
        kind: str,
        title: str,
        body: str,
        keys: str = "",
        updated: str | None = None,
        track: str | None = None,
        row: dict[str, Any] | None = None,
        labels: list[str] | None = None,
    ) -> None:
        self.locator = locator
        self.kind = kind
        self.title = title
        self.body = body
        self.keys = keys
        self.updated = updated
        self.track = track
        #: structured table -> row (without doc_id)
        self.row: dict[str, Any] = {} if row is None else row
        #: fact entities or note tags
        self.labels: list[str] = [] if labels is None else labels


class Problem(Frozen):
    __slots__ = ("file", "line", "reason")
    file: str
    line: int
    reason: str

    def __init__(self, file: str, line: int, reason: str) -> None:
        self._set(file=file, line=line, reason=reason)

    def describe(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


def classify(locator: str) -> str | None:
    """The file kind of a bundle-relative locator, or None if it is not indexed."""
    parts = locator.split("/")
    if parts[0] != "desk" or len(parts) < 3 or any(p.startswith(".") for p in parts):
        return None
    rest = parts[1:]
    if locator == FACTS:
        return "facts"
    if locator == ENTITIES:
        return "entities"
    if len(rest) == 4 and rest[:3] == ["_record", "diary", "daily"] and _DATE_MD.match(rest[3]):
        return "daily"
    if len(rest) >= 3 and rest[:2] == ["_record", "notes"] and rest[-1].endswith(".md"):
        return "note"  # subfolders too: migrated journal entries live in notes/journal/
    if len(rest) == 2 and rest[0] == "_friction" and rest[1].endswith(".md"):
        return "friction"
    if len(rest) == 3 and rest[:2] == ["_meta", "tips"] and rest[2].endswith(".md"):
        return "tip"
    if rest[0].startswith("_"):
        return None
    if len(rest) == 2 and rest[1] == "track.md":
        return "track"
    if len(rest) == 3 and rest[2] == "task.md":
        return "task"
    if len(rest) == 4 and rest[2] == "iterations" and _ITERATION_MD.match(rest[3]):
        return "iteration"
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _labels(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    seen: dict[str, None] = {}
    for item in value:
        if item is not None and str(item).strip():
            seen.setdefault(str(item).strip(), None)
    return list(seen)


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    if (
        len(text) <= limit
        and text.isprintable()  # no whitespace but the ASCII space (nor any control)
        and "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
    ):
        return text  # already one line of single-spaced words: most facts
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def extract_markdown(kind: str, locator: str, data: bytes) -> tuple[list[Doc], list[Problem]]:
    """Rows for one Markdown file of ``kind`` (see ``classify``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], [Problem(locator, 1, f"not UTF-8 ({exc.reason} at byte {exc.start})")]
    if kind == "daily":
        return [_daily(locator, text)], []
    try:
        meta, body = parse_frontmatter(text, source=locator)
        if kind == "task":
            require_id(meta, locator)  # a task.md without one is no task: a problem
    except CorruptFile as exc:
        match = _LINE_IN_MESSAGE.search(exc.message)
        line = int(match.group(1)) if match else 1
        # the problem names its file and line itself: the message without them
        reason = exc.message.removeprefix(f"{locator}:{line}: " if match else f"{locator}: ")
        return [], [Problem(locator, line, reason)]
    parts = locator.split("/")
    builder = _BUILDERS[kind]
    return [builder(locator, parts, meta, body)], []


def _track(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    name = parts[1]
    return Doc(
        locator,
        "track",
        _text(meta.get("title")) or name,
        body,
        keys=name,
        updated=_text(meta.get("created")),
        track=name,
        row={"name": name, "created": _text(meta.get("created"))},
    )


def _task(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    track, slug = parts[1], parts[2]
    acceptance = _text(meta.get("acceptance"))
    return Doc(
        locator,
        "task",
        _text(meta.get("title")) or slug,
        body if not acceptance else f"{body}\n\nAcceptance: {acceptance}",
        keys=track,
        updated=_text(meta.get("updated")) or _text(meta.get("created")),
        track=track,
        row={
            "id": _text(meta.get("id")),
            "track": track,
            "slug": slug,
            "status": _text(meta.get("status")),
            "priority": _int(meta.get("priority")),
            "created": _text(meta.get("created")),
            "updated": _text(meta.get("updated")),
            "claimed_by": _text(meta.get("heldBy") or meta.get("claimedBy")),
            "lease_until": _text(meta.get("leaseUntil")),
        },
    )


def _iteration(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    track, slug, number = parts[1], parts[2], parts[4][:-3]
    return Doc(
        locator,
        "iteration",
        f"{slug} iteration {int(number)}",
        body,
        keys=track,
        updated=_text(meta.get("created")),
        track=track,
        row={
            "task": _text(meta.get("task")),
            "n": _int(meta.get("n")) or int(number),
            "created": _text(meta.get("created")),
            "agent": _text(meta.get("agent")),
        },
    )


def _friction(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    track = _text(meta.get("track"))
    return Doc(
        locator,
        "friction",
        _text(meta.get("title")) or parts[-1][:-3],
        body,
        keys=track or "",
        updated=_text(meta.get("created")),
        track=track,
        row={
            "id": _text(meta.get("id")),
            "severity": _text(meta.get("severity")),
            "track": track,
            "task": _text(meta.get("task")),
            "created": _text(meta.get("created")),
        },
    )


def _tip(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    tags = _labels(meta.get("tags"))
    return Doc(
        locator,
        "tip",
        _text(meta.get("title")) or parts[-1][:-3],
        body,
        keys=" ".join(tags),
        updated=_text(meta.get("updated")) or _text(meta.get("created")),
        row={
            "slug": parts[-1][:-3],
            "created": _text(meta.get("created")),
            "updated": _text(meta.get("updated")),
        },
    )


def _note(locator: str, parts: list[str], meta: dict[str, Any], body: str) -> Doc:
    tags = _labels(meta.get("tags"))
    slug = "/".join(parts[3:])[:-3]  # as in the notes manifest: journal/<name> for a subfolder
    return Doc(
        locator,
        "note",
        _text(meta.get("title")) or slug,
        body,
        keys=" ".join(tags),
        updated=_text(meta.get("updated")) or _text(meta.get("created")),
        row={
            "slug": slug,
            "created": _text(meta.get("created")),
            "updated": _text(meta.get("updated")),
        },
        labels=tags,
    )


def _daily(locator: str, text: str) -> Doc:
    date = locator.rsplit("/", 1)[-1][:-3]
    times = _HEADING_TIME.findall(text)
    return Doc(
        locator,
        "daily",
        f"Daily reflection {date}",
        text,
        updated=f"{date}T{times[-1]}Z" if times else date,
        row={"date": date, "entries": len(times)},
    )


_BUILDERS = {
    "track": _track,
    "task": _task,
    "iteration": _iteration,
    "friction": _friction,
    "tip": _tip,
    "note": _note,
}


class Fact(NamedTuple):
    """One good facts.jsonl line, as the index stores it (a plain tuple: a rebuild
    makes 100k of them; the fact's text is the FTS body and is stored only there).
    ``apply._insert_facts`` indexes it by position: keep the field order."""

    id: str
    line: int
    text: str
    about: list[str]
    #: FTS ``keys``: the entities, then the friend's name
    keys: str
    created_at: str | None
    supersedes: str | None


#: ``Fact(*fields)`` without the Python frame of a NamedTuple's ``__new__``
_fact = partial(tuple.__new__, Fact)
_STR = frozenset({str})


def _about(value: Any) -> list[str]:
    """``_labels`` with a fast path for the usual list of distinct, trimmed strings."""
    if (
        type(value) is list
        and set(map(type, value)) <= _STR
        and "" not in value
        and len(set(value)) == len(value)
        and list(map(str.strip, value)) == value
    ):
        return value
    return _labels(value)


def extract_fact(record: dict[str, Any], line: int) -> Fact | Problem:
    """One facts.jsonl record (already parsed) as a Fact, or why it is bad."""
    get = record.get
    fact_id, text = get("id"), get("text")
    if not isinstance(fact_id, str) or not fact_id or "#" in fact_id:
        return Problem(FACTS, line, "fact has no string 'id'")
    if not isinstance(text, str):
        return Problem(FACTS, line, f"fact {fact_id} has no string 'text'")
    prov = get("provenance")
    friend_name = prov.get("friendName") if isinstance(prov, dict) else None
    created, supersedes = get("createdAt"), get("supersedes")
    if not (
        (friend_name is None or type(friend_name) is str)
        and (created is None or type(created) is str)
        and (supersedes is None or type(supersedes) is str)
    ):  # numbers and the like are indexed as text
        friend_name, created, supersedes = _text(friend_name), _text(created), _text(supersedes)
    about = _about(get("about"))
    keys = " ".join([*about, friend_name] if friend_name else about)
    return _fact((fact_id, line, text, about, keys, created, supersedes))


def extract_fact_lines(data: bytes, first_line: int) -> tuple[list[Fact], list[Problem]]:
    """Facts from complete JSONL lines; ``first_line`` is the 1-based number of the first.

    The usual line (a string id, a string text, one trimmed entity, string or null
    provenance fields) is read here, inline; any other goes through ``extract_fact``
    (a rebuild reads 100k lines: a call per line is a tenth of its Python time)."""
    facts: list[Fact] = []
    problems: list[Problem] = []
    loads, decode_error = jsonio.loads_for(len(data)), jsonio.JSONDecodeError
    add, fact, none_or_str = facts.append, _fact, _NONE_OR_STR
    for offset, raw in enumerate(data.split(b"\n"), first_line):
        if not raw:
            continue
        try:
            value = loads(raw)
        except decode_error as exc:
            if raw.strip():
                problems.append(Problem(FACTS, offset, f"not valid JSON ({exc})"))
            continue
        if type(value) is not dict:
            if not isinstance(value, dict):
                problems.append(Problem(FACTS, offset, "not a JSON object"))
                continue
        else:
            get = value.get
            fact_id, text, about, prov = get("id"), get("text"), get("about"), get("provenance")
            friend = prov.get("friendName") if type(prov) is dict else None
            created, supersedes = get("createdAt"), get("supersedes")
            if (
                type(fact_id) is str
                and fact_id
                and "#" not in fact_id
                and type(text) is str
                and type(about) is list
                and len(about) == 1
                and friend is None
                and type(created) in none_or_str
                and type(supersedes) in none_or_str
            ):
                entity = about[0]
                if type(entity) is str and entity and entity.strip() == entity:
                    add(fact((fact_id, offset, text, about, entity, created, supersedes)))
                    continue
        item = extract_fact(value, offset)
        if isinstance(item, Fact):
            add(item)
        else:
            problems.append(item)
    return facts, problems


_NONE_OR_STR = frozenset({type(None), str})
