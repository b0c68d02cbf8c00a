"""The derived artifacts of a bundle, each declared once (``ouro.derived``).

Every check here leaves the record and the index as they are (it opens
nothing of theirs for writing, not even the index's ``-wal``); the
notes-manifest check saves what the manifest lists in its machine-local cache
(``notes-listed``). The modules that own each file are imported on use, so
``ouro index status`` pays only for what it looks at.
"""

from __future__ import annotations

import os
from pathlib import Path

from ouro.derived import Artifact, Check
from ouro.store import stamp as stamps
from ouro.store.bounded import file_bytes, open_regular

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

    from ouro.bundle import Bundle

FACTS = "desk/_record/diary/facts.jsonl"
ENTITIES = "desk/_record/diary/entities.json"
NOTES = "desk/_record/notes"
MANIFEST = "desk/_record/notes/.index.json"
EVENTS = "arc/flight-recorder/events"
CHECKPOINT = "arc/flight-recorder/latest.json"
SENTINEL_LATEST = "arc/flight-recorder/context-loss-sentinel/latest.json"
SENTINEL_HISTORY = "arc/flight-recorder/context-loss-sentinel/history"
HEADS = "state/cache/desk-heads.bin"
DIARY_STATE = "state/cache/diary-state.marshal"
INDEX = "state/index/ouro.sqlite3"
HOOK_STATE = "state/hooks"
DECLARED = "state/cache/declared-checks.json"
ARC_DIGESTS = "state/cache/arc-digests.marshal"  # ouro.arc.fold.DIGESTS_CACHE
ARC_STORES = "state/cache/arc-stores.marshal"  # ouro.arc.checkpoint.STORES_CACHE
NOTES_LISTED = "state/cache/notes-listed.marshal"


# --- arc: the resume checkpoint (the recorder's writes keep it current) --------


def _check_checkpoint(bundle: Bundle) -> Check:
    from ouro.arc import checkpoint, fold, paths

    persisted, problem = checkpoint.load_persisted(bundle)
    try:
        names = checkpoint.day_files(bundle, [])  # none behind a link leading outside
    except OSError as exc:
        return Check("unavailable", f"cannot list {EVENTS} ({exc})")
    if persisted is None:
        if problem is not None and problem["code"] == "checkpoint_missing":
            return (
                Check("missing", "no checkpoint yet" if names else None)
                if names
                else Check("fresh")
            )
        return Check("stale", problem["message"] if problem else "unreadable")
    state = persisted["fold"]
    try:
        if fold.behind(state, paths.events_dir(bundle), names):
            return Check(
                "stale", "the event log has lines past its cursor; the next Arc write folds them in"
            )
        fold.check_cursor(state, paths.events_dir(bundle), names)
    except fold.Inconsistent as exc:
        return Check("stale", str(exc))
    except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
        return Check("stale", f"its fold state is unusable ({exc!r})")
    return Check("fresh")


def _rebuild_checkpoint(bundle: Bundle) -> None:
    from ouro.arc import paths
    from ouro.arc.recorder import write_checkpoint

    with paths.arc_lock(bundle, "regenerate checkpoint"):
        write_checkpoint(bundle)


# --- the sentinel's latest receipt ---------------------------------------------


def _newest_history_line(folder: Path) -> bytes | None:
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return None
    for name in reversed(names):
        try:
            with open(open_regular(folder / name), "rb") as handle:  # a FIFO: skipped
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - 65536))
                lines = [line for line in handle.read().split(b"\n") if line.strip()]
        except OSError:
            continue
        if lines:
            return lines[-1]
    return None


def _check_sentinel(bundle: Bundle) -> Check:
    from ouro.store import jsonio

    latest = bundle.root / SENTINEL_LATEST
    try:
        data = jsonio.loads(file_bytes(latest))
    except FileNotFoundError:
        return Check("missing", "no receipt yet; 'ouro sentinel refresh' writes one")
    except (OSError, jsonio.JSONDecodeError) as exc:
        return Check("stale", f"unreadable ({exc}); 'ouro sentinel refresh' replaces it")
    line = _newest_history_line(bundle.root / SENTINEL_HISTORY)
    if line is None or not isinstance(data, dict):
        return Check("fresh")
    try:
        newest = jsonio.loads(line)
    except jsonio.JSONDecodeError:
        return Check("fresh")  # the ledger's own reader reports a bad line
    if isinstance(newest, dict) and (newest.get("generatedAt") or "", newest.get("id") or "") > (
        data.get("generatedAt") or "",
        data.get("id") or "",
    ):
        return Check("stale", "the history ledger holds a newer receipt; 'ouro sentinel refresh'")
    return Check("fresh")


# --- the diary: entities.json and the saved diary state -------------------------


def _check_entities(bundle: Bundle) -> Check:
    from ouro.desk import entities_stamp

    facts = bundle.root / FACTS
    target = bundle.root / ENTITIES
    from ouro.store.guard import Inside, outside

    if not Inside(bundle.root).path(facts):  # never read
        return Check("unavailable", outside(FACTS))
    try:
        target_st = os.stat(target)
    except FileNotFoundError:
        return (
            Check("missing", "facts.jsonl has facts; 'ouro index sync' derives it")
            if (facts.is_file() and facts.stat().st_size)
            else Check("fresh")
        )
    except OSError as exc:
        return Check("unavailable", str(exc))
    stamp = bundle.lock_path("diary").with_name(
        "diary.entities-stamp"
    )  # record.entities_stamp_path
    return Check(*entities_stamp.freshness(facts, target_st, stamp))


def _rebuild_entities(bundle: Bundle) -> None:
    from ouro.desk.record import rebuild_entities
    from ouro.store.guard import Inside

    if Inside(bundle.root).path(bundle.root / FACTS):  # else never read: index sync names it
        rebuild_entities(bundle)


def _check_diary_state(bundle: Bundle) -> Check:
    from ouro.desk import diary_snapshot

    facts = stamps.stat(bundle.root / FACTS)
    saved = diary_snapshot.saved_cursor(bundle.root / DIARY_STATE)
    if facts is None:
        return Check("fresh")
    if saved is None:
        if facts[0] < diary_snapshot.SNAPSHOT_EVERY:
            return Check("fresh")  # a log this small is read whole faster than a save is loaded
        return Check("missing", "the first diary write of each process reads the whole log")
    inode, offset = saved
    if inode != facts[3]:
        return Check("stale", "saved for another facts.jsonl (a copy or a rewrite)")
    if facts[0] - offset > diary_snapshot.SNAPSHOT_EVERY:
        return Check("stale", f"{facts[0] - offset} bytes of facts.jsonl behind")
    return Check("fresh")


def _save_diary_state(bundle: Bundle) -> None:
    from ouro.desk.record import save_state_if_missing

    save_state_if_missing(bundle)


# --- notes manifest ------------------------------------------------------------------


class _Unreadable(Exception):
    """A note file that cannot be ``stat``ed (its slug-relative name)."""


def _note_mtimes(top: str) -> dict[str, int]:
    """Every note under ``top`` (its file's name relative to ``top``, ``slug.md``
    -> mtime_ns; folders and files whose name starts with a dot left out, as
    ``os.walk`` without following links): one listing per folder and one ``stat``
    per note, relative to its folder. Keyed by file name, not slug: a top-level
    note's key is its entry's own name string (no new string per note)."""
    found: dict[str, int] = {}
    stack = [("", top)]
    while stack:
        prefix, path = stack.pop()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            raise _Unreadable(prefix or "the notes folder") from None
        try:
            folders: list[os.DirEntry[str]] = []
            set_aside = folders.append  # returns None: a folder's test below is None
            with os.scandir(fd) as listing:
                # One comprehension over the listing (a loop's bytecode costs ~400
                # instructions more an entry): each folder set aside to walk next,
                # each note's mtime from its entry's stat (relative to the open
                # folder, links followed; each entry and its stat freed as it goes).
                found.update(
                    {
                        prefix + name: e.stat().st_mtime_ns
                        for e in listing
                        if (e.is_dir() and set_aside(e)) is False
                        and (name := e.name).endswith(".md")
                        and name[0] != "."
                    }
                )
        except OSError:
            raise _Unreadable(_unreadable_note(fd, prefix)) from None
        finally:
            os.close(fd)
        stack += [
            (f"{prefix}{e.name}/", f"{path}{os.sep}{e.name}")
            for e in folders
            if e.name[:1] != "." and not e.is_symlink()
        ]
    return found


def _unreadable_note(fd: int, prefix: str) -> str:
    """Which note of the open folder ``fd`` cannot be ``stat``ed (its slug-relative
    name), once the listing's stats failed; the folder when none fails now."""
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                name = entry.name
                if name.endswith(".md") and name[0] != "." and not entry.is_dir():
                    try:
                        entry.stat()
                    except OSError:
                        return prefix + name
    except OSError:
        pass
    return prefix or "the notes folder"


_LISTED_MAGIC = "ouro-notes-listed-3"  # 3: the note files' names (``slug.md``), not slugs


class _Listed:
    """What the manifest lists: its note files' names (``slug.md``, as
    ``_note_mtimes`` keys them), and each slug's hash (decoded only when a note
    changed in the manifest's own tick asks for one)."""

    def __init__(self, names: frozenset[str], hashes: bytes | dict[str, str | None]) -> None:
        self.names = names
        self._hashes = hashes

    def hash(self, slug: str) -> str | None:
        if isinstance(self._hashes, bytes):
            import marshal

            try:
                value = marshal.loads(self._hashes)
            except (ValueError, EOFError, TypeError):
                value = None
            self._hashes = value if type(value) is dict else {}
        found = self._hashes.get(slug)
        return found if isinstance(found, str) else None


def _load_listed(bundle: Bundle, st: os.stat_result) -> _Listed | None:
    """What the manifest lists, from the machine-local cache, or None when there
    is none saved for the manifest as it is now (its stamp). The cache is one
    marshal tuple: the note files' names joined by newlines (one string, read at
    the cost of a copy) and the marshalled ``slug -> hash`` (bytes, decoded on use)."""
    import marshal

    try:
        with open(open_regular(bundle.root / NOTES_LISTED), "rb") as handle:
            value = marshal.loads(handle.read(1 << 24))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if (
        type(value) is not tuple
        or len(value) != 4
        or value[0] != _LISTED_MAGIC
        or value[1] != stamps.of(st)
        or type(value[2]) is not str
        or type(value[3]) is not bytes
    ):
        return None
    return _Listed(frozenset(value[2].split("\n")) if value[2] else frozenset(), value[3])


def _save_listed(bundle: Bundle, st: os.stat_result, hashes: dict[str, str | None]) -> None:
    """Save what the manifest stamped ``st`` lists when that stamp is trusted
    (atomically, under its lock; skipped while another holds it; a failure only
    means the next read parses the manifest again)."""
    import marshal

    from ouro.errors import OuroError
    from ouro.store.atomic import atomic_write_bytes
    from ouro.store.lock import FileLock

    stamp = stamps.trusted(st)
    if stamp is None or any("\n" in slug for slug in hashes):
        return
    names = "\n".join(slug + ".md" for slug in hashes)
    value = (_LISTED_MAGIC, stamp, names, marshal.dumps(hashes, 4))
    try:
        lock = FileLock(bundle.lock_path("notes-listed"), purpose="notes listed cache")
        if not lock.try_acquire():
            return
        try:
            path = bundle.root / NOTES_LISTED
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, marshal.dumps(value, 4))
        finally:
            lock.release()
    except (OSError, OuroError):
        pass


def _read_listed(bundle: Bundle, st: os.stat_result) -> _Listed | Check:
    """What the manifest (stat ``st``) lists: from the cache while the manifest
    keeps its stamp, else parsed and the cache saved again; a Check when the
    manifest is not one."""
    listed = _load_listed(bundle, st)
    if listed is not None:
        return listed
    from ouro.store import jsonio

    try:
        data = jsonio.loads(file_bytes(bundle.root / MANIFEST))  # a FIFO: stale
    except FileNotFoundError:
        return Check("missing", "'ouro notes rebuild-manifest' writes it")
    except (OSError, jsonio.JSONDecodeError) as exc:
        return Check("stale", f"unreadable ({exc})")
    entries = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return Check("stale", "not a notes manifest")
    hashes: dict[str, str | None] = {}
    for entry in entries:
        slug, digest = entry.get("slug"), entry.get("hash")
        if not isinstance(slug, str) or slug in hashes:
            return Check("stale", "the note files differ from what it lists")
        hashes[slug] = digest if isinstance(digest, str) else None
    _save_listed(bundle, st, hashes)
    return _Listed(frozenset(slug + ".md" for slug in hashes), hashes)


def _check_manifest(bundle: Bundle) -> Check:
    """The manifest lists exactly the note files, none changed since it was
    written: a note whose mtime is past the manifest's is stale; one in the same
    tick (the racy case) is hashed and compared with its entry. What it lists is
    read from ``state/cache/notes-listed.marshal`` while the manifest keeps its
    stamp (the ``notes-listed`` artifact), so the check parses it once per change."""
    folder = bundle.root / NOTES
    if not folder.is_dir():
        return Check("fresh")
    try:
        st = os.stat(bundle.root / MANIFEST)
    except FileNotFoundError:
        return Check("missing", "'ouro notes rebuild-manifest' writes it")
    except OSError as exc:
        return Check("stale", f"unreadable ({exc})")
    listed = _read_listed(bundle, st)
    if isinstance(listed, Check):
        return listed
    try:
        found = _note_mtimes(os.fspath(folder))
    except _Unreadable as exc:
        return Check("stale", f"{exc} cannot be read")
    if found.keys() != listed.names:
        return Check("stale", "the note files differ from what it lists")
    written = st.st_mtime_ns
    if max(found.values(), default=0) < written:  # the usual case: one compare per note
        return Check("fresh")
    for name, mtime in found.items():
        if mtime > written:
            return Check("stale", f"{name} changed after it was written")
        if mtime == written:  # the same tick: the content decides
            from ouro.models.hashing import hash_file
            from ouro.store.bounded import DOC_LIMIT

            try:
                same = hash_file(folder / name, limit=DOC_LIMIT) == listed.hash(name[:-3])
            except OSError:  # past the limit (listed without a hash), or unreadable
                same = False
            if not same:
                return Check("stale", f"{name} changed after it was written")
    return Check("fresh")


def _check_notes_listed(bundle: Bundle) -> Check:
    if not (bundle.root / NOTES_LISTED).is_file():
        return Check("fresh", "none saved: the next notes-manifest check saves one")
    return Check("fresh", "it holds only while the notes manifest keeps its stamp")


def _rebuild_manifest(bundle: Bundle) -> None:
    from ouro.desk.notes import regenerate_manifest

    regenerate_manifest(bundle)


# --- desk heads --------------------------------------------------------------------


def _check_heads(bundle: Bundle) -> Check:
    from ouro.desk import heads

    return Check(*heads.freshness(bundle))


def _refresh_heads(bundle: Bundle, touched: list[Path]) -> None:
    from ouro.desk import heads

    heads.refresh_heads(bundle, touched)


def _rebuild_heads(bundle: Bundle) -> None:
    from ouro.desk import heads

    heads.refresh_heads(bundle)


# --- the index and its vectors ---------------------------------------------------


def _check_index(bundle: Bundle) -> Check:
    from ouro.index.state import index_status

    found = index_status(str(bundle.root))
    return Check(found["state"], found.get("reason"))


def _refresh_index(bundle: Bundle, touched: list[Path]) -> None:
    from ouro.index.sync import touch_paths

    touch_paths(bundle, touched)  # never raises: marks the index stale instead


def _sync_index(bundle: Bundle) -> Any:
    from ouro.index.sync import sync

    return sync(bundle)


def _rebuild_index(bundle: Bundle) -> Any:
    from ouro.index.sync import rebuild

    return rebuild(bundle)


def _check_vectors(bundle: Bundle) -> Check:
    import sqlite3

    from ouro import embedding

    if not embedding.available():
        return Check(
            "not installed", f"search by meaning is not installed; {embedding.ENABLE_HINT}"
        )
    from ouro.errors import IndexUnavailable
    from ouro.index import db, semantic

    if not db.db_path(bundle.root).is_file():
        return Check("missing", "no index yet")
    try:
        conn = db.open_read_only(bundle.root)
    except IndexUnavailable as exc:
        return Check("unavailable", exc.message)
    try:
        if semantic.none_missing(conn):
            return Check("fresh")
        left = semantic.missing(conn)
    except sqlite3.Error as exc:
        return Check("unavailable", str(exc))
    finally:
        conn.close()
    if not left:
        return Check("fresh")
    budget = semantic.SEARCH_BUDGET
    if budget is not None and left > budget:
        # more than a search embeds itself (ouro.index.semantic.catch_up_once)
        return Check(
            "stale",
            f"{left} item(s) have no vector yet; 'ouro index sync' computes them; a search "
            f"by meaning computes at most {budget} itself and answers by words meanwhile",
        )
    return Check(
        "stale", f"{left} item(s) have no vector yet; the next search by meaning computes them"
    )


def _embed(bundle: Bundle) -> Any:
    from ouro.index.semantic import embed_bundle

    return embed_bundle(bundle.root)


# --- the declared checks (what the PostToolUse hook looks up) ----------------------


def _check_declared(bundle: Bundle) -> Check:
    from ouro.derived import checks

    return checks.check(bundle)


def _rebuild_declared(bundle: Bundle) -> None:
    from ouro.derived import checks

    checks.rebuild(bundle)


# --- the arc digests (which day-file prefixes a read has verified) ---------------------


def _check_arc_digests(bundle: Bundle) -> Check:
    from ouro.arc.fold import DIGESTS_CACHE

    if not (bundle.root / DIGESTS_CACHE).is_file():
        return Check("fresh", "none saved: a read that digests a copied or cloned log saves one")
    return Check("fresh", "each entry holds only while its day file keeps its stamp")


# --- the arc stores (the claim and obligation summaries the checkpoint is derived from) --


def _check_arc_stores(bundle: Bundle) -> Check:
    from ouro.arc.checkpoint import _load_stores

    if not (bundle.root / ARC_STORES).exists():
        return Check("missing", "none saved: the next read of the checkpoint saves one")
    if _load_stores(bundle)[0] is None:
        return Check("stale", "unreadable; the next read of the checkpoint saves it again")
    return Check("fresh", "each line holds only while its store file keeps its stamp")


def _rebuild_arc_stores(bundle: Bundle) -> None:
    from ouro.arc.checkpoint import save_stores
    from ouro.arc.stores import scan_claims, scan_obligations

    save_stores(bundle, {"claims": scan_claims(bundle), "obligations": scan_obligations(bundle)})


# --- hook state (per session; a new session starts without one) ---------------------


def _check_hook_state(bundle: Bundle) -> Check:
    folder = bundle.root / HOOK_STATE
    try:
        count = sum(1 for name in os.listdir(folder) if name.endswith(".json"))
    except FileNotFoundError:
        return Check("fresh")
    except OSError as exc:
        return Check("unavailable", str(exc))
    return Check("fresh", f"{count} session(s); each compared against the packet it injected")


ARTIFACTS: tuple[Artifact, ...] = (
    # the record's derived files first: rebuilding one rewrites a file under desk/
    # or arc/, which the caches after them then take in
    Artifact("entities", ENTITIES, (FACTS,), False, _check_entities, None, _rebuild_entities),
    Artifact("notes-manifest", MANIFEST, (NOTES,), False, _check_manifest, None, _rebuild_manifest),
    Artifact("checkpoint", CHECKPOINT, (EVENTS, "arc/claims", "arc/obligations"), False,
             _check_checkpoint, None, _rebuild_checkpoint),
    Artifact("sentinel", SENTINEL_LATEST, (SENTINEL_HISTORY,), False, _check_sentinel, None, None),
    # the machine-local caches; the index first after a write, so its lines are searchable
    Artifact("index", INDEX, ("desk",), True, _check_index, _refresh_index, _rebuild_index, _sync_index),
    Artifact("vectors", INDEX, ("desk",), True, _check_vectors, None, _embed),
    Artifact("desk-heads", HEADS, ("desk",), True, _check_heads, _refresh_heads, _rebuild_heads),
    Artifact("diary-state", DIARY_STATE, (FACTS,), True, _check_diary_state, None, _save_diary_state),
    Artifact("declared-checks", DECLARED, ("arc/claims", "desk"), True, _check_declared, None,
             _rebuild_declared),
    Artifact("hook-state", HOOK_STATE, (), True, _check_hook_state, None, None),
    Artifact("arc-digests", ARC_DIGESTS, (EVENTS,), True, _check_arc_digests, None, None),
    Artifact("arc-stores", ARC_STORES, ("arc/claims", "arc/obligations"), True, _check_arc_stores,
             None, _rebuild_arc_stores),
    Artifact("notes-listed", NOTES_LISTED, (MANIFEST,), True, _check_notes_listed, None, None),
)  # fmt: skip
