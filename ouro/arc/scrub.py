"""``ouro record redact LOCATOR --match TEXT``: take a secret out of a record for good.

Desk and the record keep what the user wrote (render surfaces redact at render
time); when a secret was written into a record anyway, this rewrites the file
with every occurrence of TEXT replaced by ``[redacted:manual]``:

- ``file.jsonl#id``: only the record(s) with that id; ``file.jsonl``: every
  line. A line that parses is rewritten from its parsed value (the secret is
  replaced inside its string values, so JSON escapes cannot hide it; a diary
  fact's ``hash`` is recomputed from its new text); a malformed line is
  replaced as text. Other lines stay byte-identical.
- any other text file (Markdown, JSON): every occurrence, as text.

Only a record file is redacted: one under ``arc/`` or ``desk/``. ``bundle.json``,
``habits/`` (inputs, edited by hand) and ``state/`` (a machine-local cache:
deleted, it is derived again) are refused. Values are redacted, never keys or
syntax: a result that no longer reads as the file's format (a JSON file that
does not parse or lost a key, a JSONL line that parsed and no longer does or
lost a key, front matter that parsed and no longer does or lost a key) is
refused, so the TEXT given must be the secret, not a key or a quote.

The new content is written whole to a temporary file and renamed into place
(``atomic_write_bytes``), under the Arc lock, the domain lock of the record
(``diary`` for the diary, ``notes`` for notes) and, for a JSONL file, the
file's own append lock, so no concurrent append is lost. No copy of the old
content is kept: no backup, and the search index (``state/index``, a
rebuildable cache that held the old text) is dropped and marked for rebuild.
Then one Arc event (``record_redacted``) says what was redacted where — the
locator, how many occurrences, the marker — never the secret. The answer also
lists other bundle files that still contain TEXT, so they can be redacted too.

Nothing is written when TEXT is not found, the locator does not resolve, the
file is not a record file or not UTF-8 text, or the result would not parse.
Leftover copies outside the record are listed apart (``stillFoundOutsideRecord``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import orjson

from ouro.arc import paths
from ouro.arc.recorder import append_locked, build_event
from ouro.bundle import Bundle
from ouro.errors import InvalidInput, InvalidLocator, NotFound
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_bytes
from ouro.store.bounded import open_regular
from ouro.store.jsonl import encode_line
from ouro.store.locator import Locator
from ouro.store.lock import FileLock, lock_fd

MARKER = "[redacted:manual]"
#: Folders never scanned for leftover copies (rebuildable or private scratch).
_SKIP_SCAN = ("state/index", "state/locks")
MIN_MATCH = 4


def _replace(value: Any, match: str) -> tuple[Any, int]:
    """``value`` with ``match`` replaced in every string (keys too), and how often."""
    if isinstance(value, str):
        n = value.count(match)
        return (value.replace(match, MARKER), n) if n else (value, 0)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():  # values only: a key is the format's, kept
            out[key], n = _replace(item, match)
            total += n
        return out, total
    if isinstance(value, list):
        items = [_replace(v, match) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def _rehash(record: dict[str, Any]) -> None:
    """A diary fact's ``hash`` is of its text: keep it true to the redacted text."""
    if isinstance(record.get("text"), str) and str(record.get("hash", "")).startswith("sha256:"):
        from ouro.desk.factnorm import fact_hash

        record["hash"] = fact_hash(record["text"])


def _scrub_jsonl(data: bytes, match: str, record_id: str | None) -> tuple[bytes, int, int]:
    """(new bytes, occurrences replaced, records matched by id)."""
    lines = data.split(b"\n")
    total = matched = 0
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            value = jsonio.loads(raw)
        except jsonio.JSONDecodeError:
            value = None
        if record_id is not None:
            if not isinstance(value, dict) or value.get("id") != record_id:
                continue
            matched += 1
        if isinstance(value, (dict, list)):
            new, n = _replace(value, match)
            if n and isinstance(new, dict):
                _rehash(new)
            if n:
                lines[i] = encode_line(new).rstrip(b"\n")
                total += n
            elif match.encode() in raw:
                # Present only in an escaped form the parse undid differently: text pass.
                text = raw.decode("utf-8", "replace")
                lines[i] = text.replace(match, MARKER).encode()
                total += text.count(match)
        else:
            text = raw.decode("utf-8", "replace")
            n = text.count(match)
            if n:
                lines[i] = text.replace(match, MARKER).encode()
                total += n
    return b"\n".join(lines), total, matched


#: the record: the only folders whose files this redacts
RECORD_FOLDERS = ("arc/", "desk/")


def _require_record_file(locator: str) -> None:
    if locator.startswith(RECORD_FOLDERS):
        return
    if locator == "state" or locator.startswith("state/"):
        hint = "state/ is a machine-local cache: delete the file and ouro derives it again"
    else:
        hint = "edit it by hand (bundle.json and habits/ are the bundle's inputs, not records)"
    raise InvalidInput(
        f"{locator} is not a record file (only files under arc/ and desk/ are redacted); "
        "nothing was changed",
        hint=hint,
    )


def _shape(value: Any) -> Any:
    """The keys of a parsed value, nested (what a redaction must keep)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return None


def _json_shape(data: bytes) -> tuple[bool, Any]:
    """(whether ``data`` parses as JSON, its keys)."""
    try:
        return True, _shape(jsonio.loads(data))
    except jsonio.JSONDecodeError:
        return False, None


def _front_matter_shape(text: str) -> tuple[bool, Any]:
    from ouro.errors import CorruptFile
    from ouro.store import frontmatter

    try:
        return True, _shape(frontmatter.parse(text)[0])
    except CorruptFile:
        return False, None


def _broken_by(locator: str, old: bytes, new: bytes) -> str | None:
    """Where the redacted file no longer reads as its format (or lost a key), if it
    does: a part that read before must read the same way after (``_shape``)."""
    if locator.endswith(".jsonl"):
        before, after = old.split(b"\n"), new.split(b"\n")
        if len(before) != len(after):
            return locator
        for line_no, (a, b) in enumerate(zip(before, after, strict=True), start=1):
            if a != b and a.strip():
                was = _json_shape(a)
                if was[0] and _json_shape(b) != was:
                    return f"{locator}:{line_no}"
        return None
    if locator.endswith(".json"):
        was = _json_shape(old)
        return locator if was[0] and _json_shape(new) != was else None
    if locator.endswith(".md"):
        was = _front_matter_shape(old.decode("utf-8"))
        return locator if was[0] and _front_matter_shape(new.decode("utf-8")) != was else None
    return None


def _scrub_front_matter(text: str, match: str) -> tuple[bytes, int] | None:
    """A Markdown file whose front matter the text pass would break (a secret in a
    YAML flow list: ``[secret]`` -> ``[[redacted:manual]]``): its front matter's
    values redacted and written again (``frontmatter.render``), the body as text.
    None when that would leave it somewhere (a key): the text pass's result stands,
    and the check that follows refuses it."""
    from ouro.store import frontmatter

    meta, body = frontmatter.parse(text)
    new_meta, in_values = _replace(meta, match)
    new = frontmatter.render(new_meta, body.replace(match, MARKER))
    if match in new:
        return None
    return new.encode("utf-8"), in_values + body.count(match)


def _domain_lock(bundle: Bundle, locator: str) -> Path | None:
    if locator.startswith("desk/_record/diary/"):
        return bundle.lock_path("diary")
    if locator.startswith("desk/_record/notes/"):
        return bundle.lock_path("notes")
    return None


@contextmanager
def _append_lock(path: Path) -> Iterator[None]:
    """The lock ``append_jsonl`` takes on the file itself."""
    fd = os.open(path, os.O_RDWR)
    try:
        lock_fd(fd, path, 10.0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _leftovers(bundle: Bundle, match: str, skip: Path) -> list[str]:
    needles = {match.encode(), orjson.dumps(match)[1:-1]}
    found: list[str] = []
    for dirpath, dirs, files in os.walk(bundle.root):
        rel = Path(dirpath).relative_to(bundle.root).as_posix()
        dirs[:] = sorted(d for d in dirs if (d if rel == "." else f"{rel}/{d}") not in _SKIP_SCAN)
        for name in sorted(files):
            path = Path(dirpath) / name
            if path == skip:
                continue
            try:
                held = _holds(path, needles)
            except OSError:  # a FIFO holds nothing at rest: never opened blocking
                continue
            if held:
                found.append(bundle.locator(path))
    return found


_SCAN_PIECE = 1 << 20


def _holds(path: Path, needles: set[bytes]) -> bool:
    """Whether the regular file ``path`` holds one of ``needles``: read a piece
    at a time (overlapping by a needle's length), so a file of any size is
    looked through without being held whole."""
    overlap = max(map(len, needles)) - 1
    fd = open_regular(path)
    try:
        pos = 0
        while data := os.pread(fd, _SCAN_PIECE + overlap, pos):
            if any(n in data for n in needles):
                return True
            if len(data) <= overlap:
                return False
            pos += len(data) - overlap
        return False
    finally:
        os.close(fd)


def _drop_index(bundle: Bundle) -> bool:
    folder = bundle.root / "state" / "index"
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    folder.mkdir()
    return True


def redact_record(bundle: Bundle, locator: str, match: str) -> dict[str, Any]:
    if len(match) < MIN_MATCH:
        raise InvalidInput(
            f"--match must be at least {MIN_MATCH} characters (got {len(match)})",
            hint="give the whole secret, so nothing else is replaced",
        )
    loc = Locator.parse(locator)
    _require_record_file(loc.path)
    path = loc.resolve(bundle.root)
    if not path.is_file():
        raise InvalidLocator(f"{loc.path} is not a file in the bundle", hint="check the locator")
    if loc.fragment is not None and not loc.path.endswith(".jsonl"):
        raise InvalidLocator(
            f"{locator}: a '#id' fragment names a record in a .jsonl file only",
            hint="give the file's locator without '#…'",
        )
    with ExitStack() as stack:
        stack.enter_context(paths.arc_lock(bundle, "record redact"))
        domain = _domain_lock(bundle, loc.path)
        if domain is not None:
            stack.enter_context(FileLock(domain, purpose="record redact"))
        if loc.path.endswith(".jsonl"):
            stack.enter_context(_append_lock(path))
        data = path.read_bytes()
        if loc.path.endswith(".jsonl"):
            new, count, matched = _scrub_jsonl(data, match, loc.fragment)
            if loc.fragment is not None and not matched:
                raise NotFound(
                    f"{loc.path} has no record with id {loc.fragment!r}",
                    hint="check the locator ('ouro search' shows record locators)",
                )
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput(
                    f"{loc.path} is not UTF-8 text; nothing was changed",
                    hint="redact binary files by hand",
                ) from None
            count = text.count(match)
            new = text.replace(match, MARKER).encode("utf-8")
            if count and loc.path.endswith(".md") and _broken_by(loc.path, data, new):
                new, count = _scrub_front_matter(text, match) or (new, count)
        if not count:
            raise NotFound(
                f"the --match text is not in {locator}; nothing was changed",
                hint="give the secret exactly as it appears in the file",
            )
        broken = _broken_by(loc.path, data, new)
        if broken is not None:
            raise InvalidInput(
                f"redacting the --match text would break {broken} (it is in a key or the "
                "file's syntax, not only in a value); nothing was changed",
                hint="give the secret's own text as --match, or edit the file by hand",
            )
        atomic_write_bytes(path, new, mode=os.stat(path).st_mode & 0o777)
        dropped = _drop_index(bundle)
        line = build_event(
            bundle,
            "record_redacted",
            f"redacted {count} occurrence(s) of a secret in {locator}",
            meta={"locator": str(loc), "occurrences": count, "marker": MARKER},
            produced_refs=[{"kind": "redacted", "locator": loc.path}],
        )
        warnings = append_locked(bundle, line)
    leftovers = _leftovers(bundle, match, path)
    return {
        "locator": str(loc),
        "occurrences": count,
        "marker": MARKER,
        "event": line,
        "indexDropped": dropped,
        "stillFoundIn": [f for f in leftovers if f.startswith(RECORD_FOLDERS)],
        "stillFoundOutsideRecord": [f for f in leftovers if not f.startswith(RECORD_FOLDERS)],
        "warnings": warnings,
    }
