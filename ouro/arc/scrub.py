"""``ouro record redact LOCATOR --match TEXT``: take a secret out of a record for good.

Desk and the record keep what the user wrote (render surfaces redact at render
time); when a secret was written into a record anyway, this rewrites the file
with every occurrence of TEXT replaced by ``[redacted:manual]``:

- ``file.jsonl#id``: only the record(s) with that id; ``file.jsonl``: every
  line. A line that parses is rewritten from its parsed value (the secret is
  replaced inside its strings, keys included, so JSON escapes cannot hide
  it; a diary fact's ``hash`` is recomputed from its new text); a malformed
  line is replaced as text. Other lines stay byte-identical.
- any other text file (Markdown, JSON): every occurrence, as text.

The new content is written whole to a temporary file and renamed into place
(``atomic_write_bytes``), under the Arc lock, the domain lock of the record
(``diary`` for the diary, ``notes`` for notes) and, for a JSONL file, the
file's own append lock, so no concurrent append is lost. No copy of the old
content is kept: no backup, and the search index (``state/index``, a
rebuildable cache that held the old text) is dropped and marked for rebuild.
Then one Arc event (``record_redacted``) says what was redacted where — the
locator, how many occurrences, the marker — never the secret. The answer also
lists other bundle files that still contain TEXT, so they can be redacted too.

Nothing is written when TEXT is not found, the locator does not resolve, or
the file is not UTF-8 text.
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
        for key, item in value.items():
            new_key, a = _replace(key, match)
            new_item, b = _replace(item, match)
            out[new_key] = new_item
            total += a + b
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
                data = path.read_bytes()
            except OSError:
                continue
            if any(n in data for n in needles):
                found.append(bundle.locator(path))
    return found


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
        if not count:
            raise NotFound(
                f"the --match text is not in {locator}; nothing was changed",
                hint="give the secret exactly as it appears in the file",
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
    return {
        "locator": str(loc),
        "occurrences": count,
        "marker": MARKER,
        "event": line,
        "indexDropped": dropped,
        "stillFoundIn": _leftovers(bundle, match, path),
        "warnings": warnings,
    }
