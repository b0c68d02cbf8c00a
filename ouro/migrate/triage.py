"""Journal triage: every journal entry routed to task, facts, note or drop.

Contract (``docs/migrating.md``, "Journal triage"): pure and deterministic --
the same bytes give the same entries, routes and rules.

- **Entries.** A journal text file is one entry, located by its path
  (``journal/2025-01-17.md``). A file without front matter that holds two or
  more dated headings (``#``..``###`` with a ``YYYY-MM-DD`` date) is split at
  each of them: every section is an entry located as ``<path>#<date>`` (a
  repeated date gets ``-2``, ``-3``...); text before the first dated heading
  belongs to the first section. Entries are byte ranges that together cover
  the whole file, so every byte of it is routed exactly once.
- **Rules** (``RULES``, first match wins) look at the entry's *content lines*
  (non-blank, not a heading, list bullets stripped).
- **Routes**: ``task`` (a task in the ``journal-import`` track), ``facts``
  (each content line a diary fact), ``note`` (a Desk record note with the
  entry's title), ``drop`` (kept only in the verified backup).
- **Items.** An entry routed to ``task`` is split into its items
  (``split_items``): each open checklist line (``- [ ] ...``) and each TODO /
  ``Next:`` line, with the more-indented lines under it, becomes its own task
  (located ``<file>:<line>``); a done checklist line (``- [x] ...``) is
  finished work and never becomes open work (route ``drop``, rule
  ``done-item``: it stays in the backup); the entry's other lines (headings,
  prose) are its context, written under each task's own item
  (``task_body``). An entry with no open item becomes one task.
- **The review file** (``ouro migrate --dry-run --plan FILE``) lists every
  entry with its proposed route and rule; ``read_routes`` validates an edited
  one completely before anything is planned or written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile, InvalidInput
from ouro.migrate import documents
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

ROUTES = ("task", "facts", "note", "drop")
TRACK = "journal-import"
FACT_LINE_MAX = 280
NOTE_MIN_WORDS = 60
PLAN_KIND = "ouro-migrate-journal-routes"

#: (rule, route, what fires it), in the order they are tried.
RULES: tuple[tuple[str, str, str], ...] = (
    ("empty", "drop", "no text besides headings and blank lines"),
    (
        "scratch",
        "drop",
        "marked as scratch thinking: its heading or first line starts with scratch, "
        "brainstorm, thinking out loud, random thoughts or musing",
    ),
    ("open-checklist", "task", "an open checklist item (- [ ] ...)"),
    ("todo-line", "task", "a line starting with TODO or Next:"),
    (
        "fact-marker",
        "facts",
        "a line starting with Learned, Note to self, Decided or TIL, and every content "
        f"line at most {FACT_LINE_MAX} characters",
    ),
    ("titled", "note", "front matter with a title"),
    ("reference-prose", "note", f"at least {NOTE_MIN_WORDS} words of prose"),
    ("log-like", "drop", "anything else: a short log-like entry"),
)
#: the rules of the items of an entry routed to task (``split_items``)
ITEM_RULES: tuple[tuple[str, str, str], ...] = (
    ("done-item", "drop", "a done checklist item (- [x] ...): finished work, kept in the backup"),
    (
        "entry-context",
        "drop",
        "blank lines around an entry's items, with no other text: kept in the backup",
    ),
)
RULE_ROUTE = {name: route for name, route, _ in (*RULES, *ITEM_RULES)}
RULE_WHY = {name: why for name, _, why in (*RULES, *ITEM_RULES)}

_DATED = re.compile(r"^#{1,3}\s+.*?(\d{4}-\d{2}-\d{2})")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")
_OPEN = re.compile(r"^\s*[-*+]\s+\[ \]\s+(.+)$")
_DONE = re.compile(r"^\s*[-*+]\s+\[[xX]\](?:\s+(.*))?$")
_TODO = re.compile(r"^(?:[-*+]\s+)?(?:TODO\b[:\s-]*|next:\s*)(.+)$", re.IGNORECASE)
_MARKER = re.compile(r"^(?:learned\b|note to self\b|decided\b|til\b)", re.IGNORECASE)
_LABEL = re.compile(r"^(?:learned|note to self|decided|til)\s*:\s*", re.IGNORECASE)
_SCRATCH = re.compile(
    r"^(?:scratch|brainstorm|thinking out loud|random thoughts|musing)", re.IGNORECASE
)


@dataclass(frozen=True)
class Entry:
    locator: str  # journal/x.md or journal/x.md#2025-01-20
    path: str  # the legacy file
    start: int  # byte range in the file
    end: int
    first_line: int  # 1-based line of the file where the entry starts
    text: str  # the entry's bytes, decoded
    date: str | None  # YYYY-MM-DD from the heading or the file name
    whole: bool  # the entry is the whole file
    title: str | None = None  # a section's dated heading, as written

    @property
    def bytes(self) -> int:
        return self.end - self.start


def split_entries(path: str, data: bytes) -> list[Entry]:
    """The entries of one journal file (see the module contract)."""
    text = data.decode("utf-8")
    lines = text.splitlines(keepends=True)
    file_date = _date_in(path)
    starts: list[tuple[int, str, str]] = []  # (line index, date, heading)
    if not text.startswith("---\n"):
        for n, line in enumerate(lines):
            match = _DATED.match(line)
            if match:
                found = _HEADING.match(line.strip())
                starts.append((n, match.group(1), found.group(1) if found else match.group(1)))
    if len(starts) < 2:
        return [Entry(path, path, 0, len(data), 1, text, file_date, True)]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    out: list[Entry] = []
    seen: dict[str, int] = {}
    for k, (n, date, title) in enumerate(starts):
        first = 0 if k == 0 else n
        last = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        seen[date] = seen.get(date, 0) + 1
        name = date if seen[date] == 1 else f"{date}-{seen[date]}"
        body = "".join(lines[first:last])
        out.append(
            Entry(
                f"{path}#{name}",
                path,
                offsets[first],
                offsets[last],
                first + 1,
                body,
                date,
                False,
                title,
            )
        )
    return out


def _date_in(text: str) -> str | None:
    match = re.search(r"(\d{4})-(\d{2})-(\d{2})", text)
    return match.group(0) if match else None


def content_lines(body: str, first_line: int = 1) -> list[tuple[int, str]]:
    """(file line number, text with bullets stripped) of every non-blank, non-heading line."""
    out = []
    for n, raw in enumerate(body.splitlines(), start=first_line):
        line = raw.strip()
        if not line or _HEADING.match(line) or line in ("---", "***"):
            continue
        out.append((n, _BULLET.sub("", line, count=1).strip() or line))
    return out


def heading(body: str) -> str | None:
    for raw in body.splitlines():
        match = _HEADING.match(raw.strip())
        if match and match.group(1):
            return match.group(1)
    return None


def classify(body: str, meta: dict[str, Any]) -> str:
    """The rule that fires for an entry (its body without front matter)."""
    lines = content_lines(body)
    if not lines:
        return "empty"
    first = heading(body) or ""
    if _SCRATCH.match(first) or _SCRATCH.match(lines[0][1]):
        return "scratch"
    raw = body.splitlines()
    if any(_OPEN.match(r) for r in raw):
        return "open-checklist"
    if any(_TODO.match(r.strip()) for r in raw if not _HEADING.match(r.strip())):
        return "todo-line"
    if any(_MARKER.match(t) for _, t in lines) and all(len(t) <= FACT_LINE_MAX for _, t in lines):
        return "fact-marker"
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return "titled"
    if sum(len(t.split()) for _, t in lines) >= NOTE_MIN_WORDS:
        return "reference-prose"
    return "log-like"


@dataclass(frozen=True)
class Part:
    """One piece of an entry routed to task: an item (``open``, ``todo``, ``done``)
    with the more-indented lines under it, or a line of ``context``, or the file's
    front matter (``meta``). Offsets are bytes in the file; lines are 1-based."""

    kind: str
    start: int
    end: int
    line: int
    text: str
    title: str | None = None  # an item's text, for its task's title

    @property
    def bytes(self) -> int:
        return self.end - self.start


def _item_start(line: str) -> tuple[str, str] | None:
    """(kind, text) when ``line`` starts an item."""
    found = _OPEN.match(line)
    if found and found.group(1).strip():
        return "open", found.group(1)
    done = _DONE.match(line)
    if done:
        return "done", done.group(1) or ""
    bare = line.strip()
    todo = _TODO.match(bare) if not _HEADING.match(bare) else None
    if todo and todo.group(1).strip():
        return "todo", todo.group(1)
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def split_items(entry: Entry) -> list[Part]:
    """The parts of ``entry`` in file order, covering its bytes exactly (see the module
    contract): each item with its more-indented continuation lines, each other line as
    context, a whole file's front matter as one ``meta`` part."""
    text = entry.text
    body = text
    if entry.whole and text.startswith("---\n"):
        try:
            body = documents.body_of(text, source=entry.path)
        except CorruptFile:  # quarantined before it is triaged; kept whole here
            body = text
        if not text.endswith(body):
            body = text
    parts: list[Part] = []
    offset, line_no = entry.start, entry.first_line
    head = text[: len(text) - len(body)]
    if head:
        size = len(head.encode("utf-8"))
        parts.append(Part("meta", offset, offset + size, line_no, head))
        offset, line_no = offset + size, line_no + head.count("\n")
    lines = body.splitlines(keepends=True)
    k = 0
    while k < len(lines):
        raw = lines[k]
        started = _item_start(raw.rstrip("\r\n"))
        if started is None:
            kind, title, span = "context", None, [raw]
        else:
            kind, title = started
            span, depth = [raw], _indent(raw)
            while k + len(span) < len(lines):
                nxt = lines[k + len(span)]
                bare = nxt.rstrip("\r\n")
                if not bare.strip() or _indent(nxt) <= depth or _item_start(bare):
                    break
                span.append(nxt)
        chunk = "".join(span)
        size = len(chunk.encode("utf-8"))
        part = Part(kind, offset, offset + size, line_no, chunk, title)
        if kind == "context" and parts and parts[-1].kind == "context":
            last = parts.pop()
            part = Part("context", last.start, part.end, last.line, last.text + chunk)
        parts.append(part)
        offset, line_no, k = offset + size, line_no + len(span), k + len(span)
    return parts


def task_body(data: bytes, item: list[int] | None, context: list[list[int]]) -> str:
    """A migrated task's body from the journal file's bytes: its item's lines, then (after
    a blank line) the entry's context; with no item, the context alone."""
    ctx = "".join(data[a:b].decode("utf-8") for a, b in context)
    if item is None:
        return ctx
    own = data[item[0] : item[1]].decode("utf-8")
    if not own.endswith("\n"):
        own += "\n"
    return own + ("\n" + ctx if ctx.strip() else "")


def fact_texts(body: str, first_line: int) -> list[tuple[int, str]]:
    """(file line, fact text) per content line; a leading ``Learned:``-style label is cut."""
    return [(n, _LABEL.sub("", t).strip() or t) for n, t in content_lines(body, first_line)]


def task_title(body: str, fallback: str) -> str:
    """The first open item, else TODO line, heading or content line; never blank."""
    for raw in body.splitlines():
        match = _OPEN.match(raw)
        if match and match.group(1).strip():
            return _short(match.group(1))
    for raw in body.splitlines():
        line = raw.strip()
        match = _TODO.match(line) if not _HEADING.match(line) else None
        if match and match.group(1).strip():
            return _short(match.group(1))
    lines = content_lines(body)
    return _short(heading(body) or (lines[0][1] if lines else "")) or fallback


def preview(body: str) -> str:
    lines = content_lines(body)
    return _short(lines[0][1] if lines else heading(body) or "(empty)")


def _short(text: str, limit: int = 120) -> str:
    clean = " ".join(text.split())
    return clean if len(clean) <= limit else clean[: limit - 1].rstrip() + "…"


# --- the review file --------------------------------------------------------------


def review_document(bundle: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "kind": PLAN_KIND,
        "bundle": bundle,
        "howTo": "set each entry's 'route' to one of task, facts, note, drop; then run "
        "'ouro migrate --plan THIS_FILE'",
        "routes": list(ROUTES),
        "rules": [{"rule": n, "route": r, "when": w} for n, r, w in RULES],
        "entries": entries,
    }


def read_routes(path: Path) -> dict[str, dict[str, Any]]:
    """``{locator: {route, sourceHash}}`` from an edited review file; raises naming the entry."""
    where = str(path)
    try:
        data = jsonio.loads(file_bytes(path))
    except FileNotFoundError:
        raise InvalidInput(
            f"--plan: {where} does not exist",
            hint="write it first with 'ouro migrate --dry-run --plan FILE'",
        ) from None
    except jsonio.JSONDecodeError as exc:
        raise InvalidInput(f"--plan: {where} is not valid JSON ({exc})", hint="fix it") from None
    if not isinstance(data, dict) or data.get("kind") != PLAN_KIND:
        raise InvalidInput(
            f"--plan: {where} is not a journal routes file (kind {PLAN_KIND!r})",
            hint="write one with 'ouro migrate --dry-run --plan FILE'",
        )
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise InvalidInput(f"--plan: {where}: 'entries' must be a list", hint="fix it")
    out: dict[str, dict[str, Any]] = {}
    for n, raw in enumerate(entries):
        label = f"{where}: entries[{n}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("entry"), str):
            raise InvalidInput(f"--plan: {label} has no 'entry' locator", hint="fix it")
        loc = raw["entry"]
        route = raw.get("route")
        if route not in ROUTES:
            raise InvalidInput(
                f"--plan: {label} ({loc}): route {route!r} is not one of " + ", ".join(ROUTES),
                hint="set the route to task, facts, note or drop; nothing was written",
            )
        if loc in out:
            raise InvalidInput(f"--plan: {label}: {loc} is listed twice", hint="keep one")
        out[loc] = {"route": route, "sourceHash": raw.get("sourceHash")}
    return out
