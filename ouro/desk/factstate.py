"""An in-process view of ``facts.jsonl`` that stays cheap at 100k facts.

Why: every diary write must check exact and near duplicates, resolve
``supersedes`` and rewrite ``entities.json``; re-reading the whole log per write
costs ~1 s at 100k facts. ``DiaryState`` reads the log once per process and
afterwards only the bytes appended since (by us or anyone else), so a write
costs O(new lines). The near-duplicate token index (``Postings``) is per
entity: decoded from the snapshot, or built from that entity's facts, the first
time a write is about that entity; no process tokenises facts that no write asks
about.

Files stay the truth: the state remembers where it is in the log as the one
append-log cursor (``ouro.store.cursor``: inode, bytes consumed, the log's
stamp, the last bytes before the offset). If the inode changes, the file
shrinks, its stamp moves without it growing, or those bytes differ (an outside
rewrite), the state is rebuilt from scratch. (A rewrite that also
grows the file and keeps the bytes at the old end would pass as an append.)
Only complete lines are consumed; a partial tail waits. Lines that are not
facts are kept as bad lines (reported as warnings, never dropped).

Snapshot (``state/cache/diary-state.marshal``): a header (``SNAPSHOT_MAGIC``, the
length of the marshalled tuple, the version, the log's inode and the offset:
``ouro.desk.diary_snapshot``), a marshalled tuple (version, log path, inode, offset, mtime, tail, line
count, superseded, where each entity's fact ids are, last_seen, entity names,
where the entity lines are, table sizes, where each saved token index is),
that tuple, then two tables of fixed-width records sorted by their bytes:
``FACT_RECORD`` (id digest, start, length, line number, text digest) and
``NORM_RECORD`` (text digest, start, id digest, length) for the active facts,
then each entity's marshalled fact ids, the token indexes of the entities some
process indexed (a 16-byte digest of the rest, then marshalled ``(n, {word:
packed uint32 positions in the entity's first n ids})``), and the marshalled
entity lines (each part read only when a write is about that entity, or
rewrites entities.json). A restored index covers the entity's first n ids; the
facts after them are tokenised (their lines read) when the index is decoded,
and near() then reads the texts of the candidates only. A token index whose
digest does not match is rebuilt from the texts. A save re-encodes the indexes
this process holds and copies the others' bytes: it tokenises nothing. Besides
every ``SNAPSHOT_EVERY`` bytes of log, a process saves after it had to tokenise
``POSTINGS_SAVE_AT`` saved facts (an index the snapshot lacked or that was damaged).
A restored state maps the file and bisects the tables (``FactTable``,
``NormTable``); facts read after it live in dicts beside them. An id digest hit
is confirmed by reading the id on that log line, and saved text-digest entries
are filtered by the live ``superseded`` map. Saved atomically; anything torn,
foreign or of another version means "no snapshot".

Every call holds the state's thread lock (``mutex``). ``sync()`` with the diary
lock (``state/locks/diary.lock``) held may rebuild; ``sync(locked=False)``
(catching up before taking the lock) only consumes plain appends, which are
safe to read at any time because appenders write whole lines in one write().
The log is read in pieces of whole lines (``ouro.store.bounded.line_pieces``):
a line longer than ``LINE_LIMIT`` is a bad line (file and line), skipped
unread; a log that is not a regular file (a FIFO) is refused (``CorruptFile``).
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import marshal
import math
import mmap
import os
import struct
import sys
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final

from ouro.desk import diary_snapshot
from ouro.desk.diary_snapshot import _HEADER, SNAPSHOT_MAGIC, SNAPSHOT_VERSION
from ouro.desk.factnorm import NEAR_THRESHOLD, could_exceed, normalize_text, overlap, tokens
from ouro.errors import CorruptFile
from ouro.store import cursor as cursors
from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.bounded import NotRegularFile, line_pieces, open_regular, overlong
from ouro.store.jsonl import BadLine
from ouro.store.stamp import Stamp

TAIL = 64
#: ... or once this process tokenised this many saved facts to index entities
#: the snapshot had no token index for (the next process finds it saved)
POSTINGS_SAVE_AT = 2000


def norm_key(norm: str) -> bytes:
    """The exact-duplicate key: a 96-bit digest of the normalized text (a hit is
    confirmed against the line itself, ``DiaryState.exact``)."""
    return hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=12).digest()


#: Per fact: ``(norm_key, start, length, line_no)`` -- a plain tuple, so a
#: snapshot restores 100k of them without building an object each. The text is
#: kept apart (``DiaryState.texts``) and left out of the snapshot.
FactRef = tuple[bytes, int, int, int]
NORM: Final = 0
START: Final = 1
LENGTH: Final = 2
LINE_NO: Final = 3


def id_key(fid: str) -> bytes:
    """A fact id's 64-bit digest: the saved fact table's sort key (a hit is
    confirmed against the line)."""
    return hashlib.blake2b(fid.encode("utf-8", "surrogatepass"), digest_size=8).digest()


# Saved tables: fixed-width records sorted by their bytes, searched by bisect
# on the mapped snapshot file; offsets are big-endian so bytes sort as numbers.
#: id_key, start, length, line_no, norm_key
FACT_RECORD = struct.Struct(">8sQII12s")
#: norm_key, start, id_key, length
NORM_RECORD = struct.Struct(">12sQ8sI")


#: which save of the snapshot file this is (its stamp)
_file_id = stamps.of


def _stamp_of(st: os.stat_result) -> tuple[Stamp, bool]:
    """The log's stamp and whether it is trusted (outside the racy window)."""
    return stamps.of(st), not stamps.racy(st)


class _Table:
    """A sorted run of fixed-width records in a buffer (the mapped snapshot)."""

    __slots__ = ("buf", "count", "start", "width")

    def __init__(self, buf: Any, start: int, count: int, width: int) -> None:
        self.buf, self.start, self.count, self.width = buf, start, count, width

    def records(self, key: bytes) -> list[bytes]:
        """Every record whose bytes start with ``key`` (in sorted order)."""
        buf, width, base, size = self.buf, self.width, self.start, len(key)
        lo, hi = 0, self.count
        while lo < hi:
            mid = (lo + hi) // 2
            at = base + mid * width
            if buf[at : at + size] < key:
                lo = mid + 1
            else:
                hi = mid
        out = []
        while lo < self.count:
            at = base + lo * width
            record = bytes(buf[at : at + width])
            if record[:size] != key:
                break
            out.append(record)
            lo += 1
        return out

    def all(self) -> list[bytes]:
        buf, width, base = self.buf, self.width, self.start
        return [bytes(buf[base + i * width : base + (i + 1) * width]) for i in range(self.count)]


_EMPTY = _Table(b"", 0, 0, 1)


class FactTable:
    """fact id -> ``FactRef``: the saved facts (a sorted table, by id digest)
    plus the facts read since (a dict). Ids are confirmed against the log line."""

    def __init__(self, id_of: Callable[[int, int], str | None]) -> None:
        self.base = _EMPTY
        self.new: dict[str, FactRef] = {}
        self._id_of = id_of  # the id on the log line at (start, length)

    def _base_ref(self, fid: str) -> FactRef | None:
        if not self.base.count:
            return None
        for record in self.base.records(id_key(fid)):
            _key, start, length, line_no, norm = FACT_RECORD.unpack(record)
            if self._id_of(start, length) == fid:
                return (norm, start, length, line_no)
        return None

    def get(self, fid: str) -> FactRef | None:
        ref = self.new.get(fid)
        return ref if ref is not None else self._base_ref(fid)

    def __contains__(self, fid: object) -> bool:
        return isinstance(fid, str) and self.get(fid) is not None

    def __getitem__(self, fid: str) -> FactRef:
        ref = self.get(fid)
        if ref is None:
            raise KeyError(fid)
        return ref

    def __setitem__(self, fid: str, ref: FactRef) -> None:
        self.new[fid] = ref

    def __len__(self) -> int:
        return self.base.count + len(self.new)

    def __iter__(self) -> Iterator[str]:
        """Fact ids in log order (reads the saved ids from the log: not for a write)."""
        return iter([fid for fid, _ref in self.items()])

    def records(self) -> list[bytes]:
        """Every fact as a sorted ``FACT_RECORD`` (for the snapshot)."""
        out = self.base.all()
        out.extend(FACT_RECORD.pack(id_key(f), r[START], r[LENGTH], r[LINE_NO], r[NORM])
                   for f, r in self.new.items())  # fmt: skip
        out.sort()
        return out

    def items(self) -> list[tuple[str, FactRef]]:
        """Every fact by id, in log order (reads the saved ids from the log; tests)."""
        pairs = []
        for record in self.base.all():
            _key, start, length, line_no, norm = FACT_RECORD.unpack(record)
            pairs.append((str(self._id_of(start, length)), (norm, start, length, line_no)))
        pairs.extend(self.new.items())
        return sorted(pairs, key=lambda p: p[1][LINE_NO])


class NormTable:
    """norm_key -> ids of active facts with that normalized text: the saved
    entries (a sorted table, filtered by the live ``superseded``) plus a dict."""

    def __init__(self, id_of: Callable[[int, int], str | None], superseded: dict[str, str]) -> None:
        self.base = _EMPTY
        self.new: dict[bytes, list[str]] = {}
        self._id_of = id_of
        self.superseded = superseded

    def get(self, norm: bytes) -> list[str]:
        out = []
        if self.base.count:
            for record in self.base.records(norm):
                _norm, start, _key, length = NORM_RECORD.unpack(record)
                fid = self._id_of(start, length)
                if fid is not None and fid not in self.superseded:
                    out.append(fid)
        out.extend(self.new.get(norm, ()))
        return out

    def add(self, norm: bytes, fid: str) -> None:
        self.new.setdefault(norm, []).append(fid)

    def drop(self, norm: bytes, fid: str) -> None:
        """``fid`` is superseded now (saved entries are filtered by ``superseded``)."""
        ids = self.new.get(norm)
        if ids and fid in ids:
            ids.remove(fid)
            if not ids:
                del self.new[norm]

    def records(self, facts: FactTable) -> list[bytes]:
        """Every active entry as a sorted ``NORM_RECORD`` (for the snapshot)."""
        gone = {id_key(t) for t in self.superseded}
        out = []
        for record in self.base.all():
            _norm, start, key, length = NORM_RECORD.unpack(record)
            if key in gone and self._id_of(start, length) in self.superseded:
                continue
            out.append(record)
        for norm, ids in self.new.items():
            for fid in ids:
                ref = facts[fid]
                out.append(NORM_RECORD.pack(norm, ref[START], id_key(fid), ref[LENGTH]))
        out.sort()
        return out

    def as_dict(self) -> dict[bytes, list[str]]:
        """Every entry (reads the saved ids from the log; tests)."""
        out: dict[bytes, list[str]] = {}
        for record in self.base.all():
            norm = record[:12]
            if norm not in out:
                out[norm] = self.get(norm)
        for norm in self.new:
            if norm not in out:
                out[norm] = self.get(norm)
        return {k: v for k, v in out.items() if v}


#: a saved position: unsigned 32-bit, little-endian (``Postings``)
_POS = next(code for code in "IL" if array(code).itemsize == 4)
_SWAP = sys.byteorder != "little"
#: a saved token index starts with a digest of the rest: damage means "rebuild it"
_POSTINGS_DIGEST = 16


def _unpack_positions(raw: bytes) -> list[int]:
    out = array(_POS, raw)
    if _SWAP:
        out.byteswap()
    return out.tolist()


def _pack_positions(positions: list[int]) -> bytes:
    out = array(_POS, positions)
    if _SWAP:
        out.byteswap()
    return out.tobytes()


class Postings:
    """One entity's near-duplicate token index: word -> positions, in the
    entity's id list (``DiaryState.entity_ids``), of its facts with that word.

    ``saved`` is what a snapshot kept: per word the packed positions below
    ``covered`` (decoded only for the words a check probes). ``live`` holds the
    positions this process indexed (``covered`` and after). Superseded facts stay
    in; ``DiaryState.near`` skips them.
    """

    __slots__ = ("covered", "live", "saved")

    def __init__(self, saved: dict[str, bytes] | None = None, covered: int = 0) -> None:
        self.saved: dict[str, bytes] = saved or {}
        self.covered = covered
        self.live: dict[str, list[int]] = {}

    def add(self, words: Iterable[str], position: int) -> None:
        live = self.live
        for word in words:
            live.setdefault(word, []).append(position)

    def count(self, word: str) -> int:
        return len(self.saved.get(word, b"")) // 4 + len(self.live.get(word, ()))

    def positions(self, word: str) -> list[int]:
        raw = self.saved.get(word)
        out = _unpack_positions(raw) if raw else []
        out.extend(self.live.get(word, ()))
        return out

    def encode(self, size: int) -> bytes:
        """The saved form, covering the entity's first ``size`` ids: a digest,
        then marshalled ``(size, {word: packed positions})``."""
        words = dict(self.saved)
        for word, positions in self.live.items():
            words[word] = words.get(word, b"") + _pack_positions(positions)
        payload = marshal.dumps((size, words))
        return hashlib.blake2b(payload, digest_size=_POSTINGS_DIGEST).digest() + payload

    @classmethod
    def decode(cls, blob: bytes, size: int) -> Postings | None:
        """A saved index of an entity that has ``size`` ids now; None when it is
        not usable (damaged, another shape, or covering ids the entity lacks)."""
        payload = blob[_POSTINGS_DIGEST:]
        digest = hashlib.blake2b(payload, digest_size=_POSTINGS_DIGEST).digest()
        if blob[:_POSTINGS_DIGEST] != digest:
            return None
        try:
            covered, words = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        # (the digest vouches for the words: this version's saver wrote them)
        if not (type(covered) is int and 0 <= covered <= size and type(words) is dict):
            return None
        return cls(words, covered)


class DiaryState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.mutex = threading.RLock()
        #: where this state is saved between processes (see "Snapshot" below)
        self.snapshot: Path | None = None
        self.snapshot_tried = False
        self.snapshot_offset = 0
        #: the stamp of the snapshot file this state restored or saved
        self.snapshot_seen: Stamp | None = None
        self.reset()

    def reset(self) -> None:
        self.ino: int | None = None
        self.offset = 0
        #: (the log's stamp, trusted) when this state had read all of it (else None)
        self.stamp: tuple[Stamp, bool] | None = None
        self.tail = b""
        self.lines = 0
        #: fact id -> FactRef (the saved ones searched in the snapshot's table)
        self.facts = FactTable(self._id_at)
        #: fact id -> text, for facts read here; a restored state reads texts
        #: from the log when a check needs them (``text``, ``load_texts``)
        self.texts: dict[str, str] = {}
        self.superseded: dict[str, str] = {}
        # norm_key(normalized text) -> ids of active facts with it (recomputed from
        # the text, not the line's ``hash``: a hand-edited text must not keep its old hash)
        self.by_norm = NormTable(self._id_at, self.superseded)
        self.by_entity: dict[str, list[str]] = {}
        #: entity -> where its marshalled fact ids are in the mapped snapshot
        #: (``entity_ids`` decodes one when a write asks about that entity)
        self.entity_refs: dict[str, tuple[int, int]] = {}
        self.mapped: Any = b""
        #: where the marshalled entity lines are in the mapped snapshot (read
        #: when entities.json is rewritten or a new entity appears)
        self.fragments_ref: tuple[int, int] | None = None
        self.last_seen: dict[str, str] = {}
        # sorted entity names and, in the same order, each one's serialized line
        self.entity_keys: list[str] = []
        self._fragments: list[bytes] = []
        self.dirty: set[str] = set()
        # entity -> its factIds already JSON-encoded (``"f-1","f-2"``): a busy
        # entity's list is encoded once, then only extended
        self.encoded: dict[str, tuple[int, bytearray]] = {}
        self.bad: list[BadLine] = []
        #: where the last line that was not a plain new fact ends (a bad line, a
        #: repeated id): ``entities.json`` may be brought up to date from the
        #: log after this byte by replaying the lines (``ouro.desk.entities``)
        self.irregular = 0
        #: entity -> its near-duplicate token index, decoded from the snapshot
        #: (or built from the texts) on the first check about that entity, then
        #: kept up to date by _ingest
        self.postings: dict[str, Postings] = {}
        #: entity -> where its saved token index is in the mapped snapshot
        self.postings_refs: dict[str, tuple[int, int]] = {}
        #: saved facts tokenised (their lines read) since the last save: an
        #: index the snapshot lacked, worth saving for the next process
        self.tokenised = 0

    # --- reading the log ---------------------------------------------------
    def sync(self, *, locked: bool = True) -> bool:
        """Consume whatever complete lines the file gained since the last call.

        ``locked=False`` (the diary lock is not held): only a plain append is
        consumed. Anything that looks like a rewrite is left for the next locked
        call, because an append in flight can look like one (ext4 sets the new
        mtime before the new size); then it returns False (not caught up).
        """
        if not self.snapshot_tried and self.ino is None and not self.offset:
            self.snapshot_tried = True
            self._load_snapshot()
        try:
            st = os.stat(self.path)  # a stat, no open: a write syncs several times
            if not S_ISREG(st.st_mode):
                open_regular(self.path)  # raises NotRegularFile, saying what it is
        except FileNotFoundError:
            if locked and (self.ino is not None or self.offset):
                self.reset()
            return locked or (self.ino is None and not self.offset)
        except NotRegularFile as exc:
            raise CorruptFile(
                f"{self.path}: {exc.strerror}; the diary log must be a regular file",
                hint="move it aside and restore facts.jsonl from git or a backup",
            ) from None
        # the one append-log cursor: only growth is replayed; a copy, a shorter
        # file, a same-size file whose stamp moved or other bytes before the
        # offset are a rewrite
        if self.ino is not None and self.offset:
            stamp, trusted = self.stamp if self.stamp is not None else (None, False)
            cur = cursors.Cursor(self.offset, self.ino, stamp, trusted, cursors.digest(self.tail))
            if cursors.follow(self.read_bytes, st, cur) == cursors.REWRITTEN:
                if not locked:
                    return False
                self.reset()
                self.snapshot_offset = 0  # the saved state describes the old file: save anew
        self.ino = st.st_ino
        if st.st_size <= self.offset:
            self.stamp = _stamp_of(st) if st.st_size == self.offset else None
            return True
        fd = open_regular(self.path)
        try:
            return self._read_on(fd, st)
        finally:
            os.close(fd)

    def _read_on(self, fd: int, st: os.stat_result) -> bool:
        """Consume the whole lines after ``offset`` (the log is ``st`` in size)."""
        begun = self.offset
        # whole lines a piece at a time: a line past LINE_LIMIT is a bad line, never held
        for start, data in line_pieces(fd, begun, st.st_size):
            if isinstance(data, int):
                self.lines += 1
                self.bad.append(BadLine(self.path, self.lines, overlong(data), b""))
                self.offset = self.irregular = start + data
                continue
            self._consume(data, start)
            self.offset = start + len(data)
        if self.offset == begun:
            return True
        self.stamp = _stamp_of(st) if st.st_size == self.offset else None
        start = max(0, self.offset - TAIL)
        self.tail = os.pread(fd, self.offset - start, start)
        return True

    def read_bytes(self, start: int, size: int) -> bytes:
        fd = open_regular(self.path)  # os-level: a write syncs several times
        try:
            return os.pread(fd, size, start)
        finally:
            os.close(fd)

    def _consume(self, data: bytes, base: int) -> None:
        # The cyclic GC would rescan the growing state many times while a fresh
        # process ingests 100k lines (~40% of the time); nothing here makes cycles.
        paused = gc.isenabled()
        gc.disable()
        try:
            self._consume_lines(data, base)
        finally:
            if paused:
                gc.enable()

    def _consume_lines(self, data: bytes, base: int) -> None:
        loads, invalid = jsonio.loads_for(len(data)), jsonio.JSONDecodeError
        pos = base
        for raw in data.split(b"\n")[:-1]:
            self.lines += 1
            start = pos
            pos += len(raw) + 1
            try:
                value = loads(raw)
            except invalid as exc:
                if raw.strip():  # blank lines are allowed
                    self.bad.append(BadLine(self.path, self.lines, f"not valid JSON ({exc})", raw))
                    self.irregular = pos
                continue
            known = len(self.facts)
            self._ingest(value, raw, start)
            if len(self.facts) == known:
                self.irregular = pos

    def _ingest(self, value: Any, raw: bytes, start: int) -> None:
        if not isinstance(value, dict):
            self.bad.append(BadLine(self.path, self.lines, "not a JSON object", raw))
            return
        fid, text = value.get("id"), value.get("text")
        if not isinstance(fid, str) or not isinstance(text, str):
            self.bad.append(
                BadLine(self.path, self.lines, "a fact needs a string id and text", raw)
            )
            return
        if fid in self.facts:
            # The first line with an id wins (docs/record.md); a later one that
            # says something else is reported, as iter_facts does. (Rare: the
            # first line is read back only when an id repeats.)
            first = self.facts[fid]
            if raw != self.read_bytes(first[START], first[LENGTH]) and value != _loads(
                self.read_bytes(first[START], first[LENGTH])
            ):
                self.bad.append(
                    BadLine(self.path, self.lines, f"repeats id {fid} with other content", raw)
                )
            return
        about_raw = value.get("about")
        about = (
            tuple(e for e in about_raw if isinstance(e, str))
            if about_raw and isinstance(about_raw, list)
            else ()
        )
        norm = norm_key(normalize_text(text))
        self.facts[fid] = (norm, start, len(raw), self.lines)
        self.texts[fid] = text
        target = value.get("supersedes")
        if isinstance(target, str) and target not in self.superseded:
            self.superseded[target] = fid
            old = self.facts.get(target)
            if old is not None:
                self.by_norm.drop(old[NORM], target)
        if fid not in self.superseded:
            self.by_norm.add(norm, fid)
        if not about:
            return
        created = value.get("createdAt")
        toks: frozenset[str] | None = None
        for entity in about:
            ids = self.entity_ids(entity)
            if ids is None:
                ids = self.by_entity[entity] = []
                at = bisect.bisect_left(self.entity_keys, entity)
                self.entity_keys.insert(at, entity)
                self.fragments.insert(at, b"")
            elif ids[-1] == fid:
                continue  # the entity is named twice in this line's about
            ids.append(fid)
            if isinstance(created, str) and created > self.last_seen.get(entity, ""):
                self.last_seen[entity] = created
            self.dirty.add(entity)
            posts = self.postings.get(entity)
            if posts is not None:
                toks = tokens(text) if toks is None else toks
                posts.add(toks, len(ids) - 1)

    def index_entities(self, entities: Iterable[str]) -> None:
        """Build the near-duplicate token index of these entities now."""
        for entity in entities:
            self._entity_postings(entity)

    def index_unsaved(self, min_facts: int) -> None:
        """Build the token index of every entity with at least ``min_facts``
        facts that has none yet, here or in the snapshot (``index sync``)."""
        for entity in self.entity_keys:
            if entity in self.postings or entity in self.postings_refs:
                continue
            ids = self.entity_ids(entity)
            if ids is not None and len(ids) >= min_facts:
                self._entity_postings(entity)

    def _entity_postings(self, entity: str) -> Postings:
        """The entity's token index: the saved one (if it is sound) brought up
        to date with the facts after it, else built from all its facts' texts."""
        posts = self.postings.get(entity)
        if posts is None:
            ids = self.entity_ids(entity) or []
            ref = self.postings_refs.pop(entity, None)
            if ref is not None:
                posts = Postings.decode(self.mapped[ref[0] : ref[0] + ref[1]], len(ids))
            if posts is None:
                posts = Postings()
            rest = ids[posts.covered :]
            texts = self.texts
            self.tokenised += sum(1 for fid in rest if fid not in texts)
            self.load_texts(rest)
            for at, fid in enumerate(rest, posts.covered):
                posts.add(tokens(texts[fid]), at)
            self.postings[entity] = posts
        return posts

    def load_texts(self, fids: Iterable[str]) -> None:
        """Read the texts a snapshot left out, for these facts, from the log (one open)."""
        texts = self.texts
        # confirming a saved id reads its line and keeps its text (``_id_at``)
        refs = [(self.facts[f], f) for f in fids if f not in texts]
        missing = [(ref, f) for ref, f in refs if f not in texts]
        if not missing:
            return
        fd = open_regular(self.path)
        try:
            for ref, fid in sorted(missing):
                value = _loads(os.pread(fd, ref[LENGTH], ref[START]))
                text = value.get("text") if isinstance(value, dict) else None
                texts[fid] = text if isinstance(text, str) else ""
        finally:
            os.close(fd)

    def text(self, fid: str) -> str:
        """A fact's text (from the log when a snapshot left it out)."""
        if fid not in self.texts:
            self.load_texts((fid,))
        return self.texts[fid]

    def entity_ids(self, entity: str) -> list[str] | None:
        """The ids of the facts about ``entity`` in log order (None: no such entity)."""
        ids = self.by_entity.get(entity)
        if ids is None:
            ref = self.entity_refs.pop(entity, None)
            if ref is not None:
                ids = self.by_entity[entity] = marshal.loads(self.mapped[ref[0] : ref[0] + ref[1]])
        return ids

    @property
    def fragments(self) -> list[bytes]:
        """Each entity's line of entities.json, in ``entity_keys`` order."""
        if self.fragments_ref is not None:
            start, size = self.fragments_ref
            self._fragments = marshal.loads(self.mapped[start : start + size])
            self.fragments_ref = None
        return self._fragments

    @fragments.setter
    def fragments(self, value: list[bytes]) -> None:
        self._fragments, self.fragments_ref = value, None

    def _id_at(self, start: int, length: int) -> str | None:
        """The id on the log line at ``start`` (its text is kept for the checks)."""
        value = _loads(self.read_bytes(start, length))
        if not isinstance(value, dict):
            return None
        fid, text = value.get("id"), value.get("text")
        if not isinstance(fid, str):
            return None
        if isinstance(text, str) and fid not in self.texts:
            self.texts[fid] = text
        return fid

    # --- snapshot: a fresh process does not replay the whole log ------------
    def _load_snapshot(self) -> None:
        """Restore the state a process saved (``save_snapshot``), if it is ours.

        Never trusted blindly: the restored inode, offset, mtime and last bytes
        go through the same checks as a live state in ``sync`` (an outside
        rewrite resets it and the log is read from the start). Anything odd
        about the file itself (missing, torn, another version) means "no
        snapshot".
        """
        if self.snapshot is None:
            return
        paused = gc.isenabled()
        gc.disable()  # 100k objects, no cycles: the cyclic GC would rescan them many times
        try:
            self._restore(self.snapshot)
        finally:
            if paused:
                gc.enable()

    def _restore(self, snapshot: Path) -> None:
        """Map the snapshot: a small marshalled part, then the two sorted tables.

        The tables stay in the file (mapped, searched by bisect), so a fresh
        process reads only the records a write looks up, not 100k facts.
        """
        try:
            with open(open_regular(snapshot), "rb") as handle:
                # what is there, usable or not: a save replaces it unless it changes
                self.snapshot_seen = _file_id(os.fstat(handle.fileno()))
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # missing, or empty (nothing to map)
            return
        try:
            magic, size, _version, _ino, _offset = _HEADER.unpack(mapped[: _HEADER.size])
            if magic != SNAPSHOT_MAGIC:
                return
            data = marshal.loads(mapped[_HEADER.size : _HEADER.size + size])
        except (struct.error, EOFError, ValueError, TypeError):
            return
        if not (isinstance(data, tuple) and len(data) == 15 and data[0] == SNAPSHOT_VERSION):
            return
        if data[1] != str(self.path):
            return
        try:
            (_v, _p, ino, offset, stamp, tail, lines, superseded, entity_refs, last_seen,
             entity_keys, fragments_ref, n_facts, n_norms, postings_refs) = data  # fmt: skip
            if stamp is not None and (
                len(stamp) != 2 or stamps.parse(stamp[0]) != stamp[0] or stamp[1] not in (0, 1)
            ):
                raise TypeError("not a stamp")
            stamp = None if stamp is None else (stamp[0], bool(stamp[1]))
            at = _HEADER.size + size
            region = at + n_facts * FACT_RECORD.size + n_norms * NORM_RECORD.size
            frag_at, frag_size = fragments_ref
            if len(mapped) != region + frag_at + frag_size:
                raise TypeError("torn or not this version's shape")
            if (
                not (isinstance(superseded, dict) and isinstance(entity_refs, dict))
                or len(entity_refs) != len(entity_keys)
                or not all(e in entity_refs for e in entity_keys)
                or not isinstance(postings_refs, dict)
                or not all(e in entity_refs for e in postings_refs)
            ):
                raise TypeError("not this version's shape")
            refs = {e: (region + rel, n) for e, (rel, n) in entity_refs.items()}
            posting_refs = {e: (region + rel, n) for e, (rel, n) in postings_refs.items()}
        except (TypeError, ValueError):
            self.reset()
            return
        self.ino, self.offset, self.stamp, self.tail, self.lines = (
            ino, offset, stamp, tail, lines,
        )  # fmt: skip
        self.texts, self.encoded = {}, {}
        self.superseded = superseded
        self.facts = FactTable(self._id_at)
        self.facts.base = _Table(mapped, at, n_facts, FACT_RECORD.size)
        self.by_norm = NormTable(self._id_at, superseded)
        self.by_norm.base = _Table(
            mapped, at + n_facts * FACT_RECORD.size, n_norms, NORM_RECORD.size
        )
        self.mapped = mapped
        self.by_entity = {}
        self.entity_refs = refs
        self.postings, self.postings_refs, self.tokenised = {}, posting_refs, 0
        self.last_seen, self.entity_keys = last_seen, entity_keys
        self.fragments_ref = (region + frag_at, frag_size)
        self.dirty = set()
        self.irregular = offset  # not known for the restored part
        self.snapshot_offset = offset

    def save_snapshot(self, *, index_busy: bool = False) -> bool:
        """Save the state when the log grew ``SNAPSHOT_EVERY`` bytes since the last save.

        ``index_busy`` (not for a write: it may tokenise many facts): first
        build the token index of every entity with ``POSTINGS_SAVE_AT`` facts
        or more that the snapshot has none for, so no fresh write has to.

        Bad lines are not saved: a state restored from a snapshot that had some
        is not saved in the first place (they are re-read from the log).
        """
        if self.snapshot is None or self.bad or self.ino is None:
            return False
        if (
            self.offset - self.snapshot_offset < diary_snapshot.SNAPSHOT_EVERY
            and self.tokenised < POSTINGS_SAVE_AT
        ):
            return False
        # One saver at a time, and none when another process saved since this one
        # restored or saved: with 8 writers every process crossed the threshold at
        # once and each spent ~1 s of CPU on the same 10 MB file.
        try:
            now: Stamp | None = _file_id(os.stat(self.snapshot))
        except FileNotFoundError:
            now = None
        if now is not None and now != self.snapshot_seen:
            # (that save may lack the token index this process built; a later
            # process that needs it builds and saves it then)
            self.snapshot_offset, self.snapshot_seen, self.tokenised = self.offset, now, 0
            return False
        from ouro.errors import OuroError
        from ouro.store.lock import FileLock

        lock = FileLock(self.snapshot.parent.parent / "locks" / "diary-state.lock")
        try:
            if not lock.try_acquire():
                return False
        except OuroError:  # no lock file here (read-only, full): a cache, not saved
            return False
        try:
            if index_busy:
                self.index_unsaved(POSTINGS_SAVE_AT)
            return self._save_snapshot(self.snapshot)
        finally:
            lock.release()

    def _save_snapshot(self, snapshot: Path) -> bool:
        from ouro.store.atomic import atomic_write_bytes

        self.entities_chunks()  # fragments current before they are saved
        facts = self.facts.records()
        norms = self.by_norm.records(self.facts)
        # each entity's ids (still marshalled if no write asked), then the lines
        region: list[bytes] = []
        refs: dict[str, tuple[int, int]] = {}
        used = 0
        for entity in self.entity_keys:
            ids = self.by_entity.get(entity)
            if ids is not None:
                blob = marshal.dumps(ids)
            else:
                start, size = self.entity_refs[entity]
                blob = bytes(self.mapped[start : start + size])
            refs[entity] = (used, len(blob))
            region.append(blob)
            used += len(blob)
        # each entity's token index: re-encoded if this process holds it, else
        # the saved bytes carried forward (no save tokenises facts)
        postings_refs: dict[str, tuple[int, int]] = {}
        for entity in self.entity_keys:
            posts = self.postings.get(entity)
            if posts is not None:
                blob = posts.encode(len(self.entity_ids(entity) or ()))
            elif entity in self.postings_refs:
                start, size = self.postings_refs[entity]
                blob = bytes(self.mapped[start : start + size])
            else:
                continue
            postings_refs[entity] = (used, len(blob))
            region.append(blob)
            used += len(blob)
        fragments = marshal.dumps(self.fragments)
        data = marshal.dumps(
            (
                SNAPSHOT_VERSION,
                str(self.path),
                self.ino,
                self.offset,
                self.stamp,
                self.tail,
                self.lines,
                self.superseded,
                refs,
                self.last_seen,
                self.entity_keys,
                (used, len(fragments)),
                len(facts),
                len(norms),
                postings_refs,
            )
        )
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        header = _HEADER.pack(SNAPSHOT_MAGIC, len(data), SNAPSHOT_VERSION, self.ino, self.offset)
        atomic_write_bytes(snapshot, b"".join([header, data, *facts, *norms, *region, fragments]))
        self.snapshot_offset, self.tokenised = self.offset, 0
        self.snapshot_seen = _file_id(os.stat(snapshot))
        return True

    # --- questions a write asks ---------------------------------------------
    def line(self, fid: str) -> dict[str, Any]:
        ref = self.facts[fid]
        value: dict[str, Any] = jsonio.loads(self.read_bytes(ref[START], ref[LENGTH]))
        return value

    def exact(self, norm: str, exclude: str | None) -> str | None:
        """An active fact whose normalized text is ``norm`` (other than ``exclude``)."""
        for fid in self.by_norm.get(norm_key(norm)):
            if fid != exclude and normalize_text(self.text(fid)) == norm:
                return fid
        return None

    def near(
        self, toks: frozenset[str], about: tuple[str, ...], exclude: str | None
    ) -> tuple[str, float] | None:
        """The earliest active fact sharing an entity whose overlap exceeds the threshold.

        Prefix filter: overlap > t needs |A ∩ B| >= m = floor(t·|A|) + 1, so B
        must contain one of any |A| - m + 1 tokens of A; probing A's rarest
        tokens (within each entity's facts) keeps the candidate set small even
        for busy entities.
        """
        if not toks or not about:
            return None
        need = math.floor(NEAR_THRESHOLD * len(toks)) + 1
        candidates: set[str] = set()
        for entity in about:
            posts = self._entity_postings(entity)
            ids = self.entity_ids(entity) or ()
            probe = sorted(toks, key=lambda w: (posts.count(w), w))[: len(toks) - need + 1]
            for word in probe:
                candidates.update([ids[at] for at in posts.positions(word)])
        for fid in sorted(candidates, key=lambda f: self.facts[f][LINE_NO]):
            if fid == exclude or fid in self.superseded:
                continue
            other = tokens(self.text(fid))
            if not could_exceed(len(toks), len(other)):
                continue
            score = overlap(toks, other)
            if score > NEAR_THRESHOLD:
                return fid, score
        return None

    # --- entities.json -------------------------------------------------------
    def entities_chunks(self) -> list[bytes]:
        """entities.json in three pieces (write them with one ``writev``).

        One entity per line, keys sorted (docs/record.md). Only entities touched
        since the last call are re-serialized; the cached lines are joined in
        one pass. A fresh state (``rebuild_entities``) gives the same bytes.
        """
        keys = self.entity_keys
        for entity in self.dirty:
            at = bisect.bisect_left(keys, entity)
            self.fragments[at] = self._fragment(entity)
        self.dirty.clear()
        if not keys:
            return [b"{}\n"]
        return [b"{\n", b",\n".join(self.fragments), b"\n}\n"]

    def _fragment(self, entity: str) -> bytes:
        """``"name": {"count":…,"factIds":[…],"lastSeenAt":…}``, as orjson writes it."""
        ids = self.entity_ids(entity)
        assert ids is not None  # a dirty entity has facts
        done, ids_json = self.encoded.get(entity) or (0, bytearray())
        if done < len(ids):
            if done:
                ids_json += b","
            ids_json += jsonio.dumps(ids[done:])[1:-1]
            self.encoded[entity] = (len(ids), ids_json)
        return b"".join(
            (
                jsonio.dumps(entity),
                b': {"count":%d,"factIds":[' % len(ids),
                ids_json,
                b'],"lastSeenAt":',
                jsonio.dumps(self.last_seen.get(entity)),
                b"}",
            )
        )

    def entities_bytes(self) -> bytes:
        return b"".join(self.entities_chunks())


_STATES: dict[Path, DiaryState] = {}
_STATES_LOCK = threading.Lock()


def state_for(path: Path) -> DiaryState:
    with _STATES_LOCK:
        state = _STATES.get(path)
        if state is None:
            state = _STATES[path] = DiaryState(path)
        return state


def _loads(raw: bytes) -> Any:
    try:
        return jsonio.loads(raw)
    except jsonio.JSONDecodeError:
        return None
