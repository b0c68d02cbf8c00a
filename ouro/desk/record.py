"""The diary's facts: ``desk/_record/diary/facts.jsonl`` and ``entities.json``.

Contract (``docs/record.md`` has the line format):
- A write validates every draft first, then, holding ``state/locks/diary.lock``,
  checks duplicates against the current log and appends all new lines in ONE
  locked write (``append_jsonl``). Bad input or a refused near-duplicate raises
  before anything is written.
- Group commit: the append is not fsynced under the lock; after releasing it
  the writer fsyncs facts.jsonl and only then returns. So a write reports
  success only once its line, and every line before it (a fact it supersedes or
  returns as the duplicate, possibly appended unsynced by another writer), is on
  disk, while concurrent writers' fsyncs share journal commits.
- An exact duplicate of an active fact writes nothing and returns the existing
  fact with ``duplicate: true``. A near-duplicate (token overlap > 0.6 with an
  active fact sharing an ``about`` entity) raises ``Conflict`` with the
  existing fact's locator, unless ``force``; with the setting ``diary.near =
  meaning`` also one whose embedding has cosine >= 0.75 with such a fact
  (``ouro.embedding.near_fact``). ``supersedes`` retires an active
  fact by writing a new line; the old line is never rewritten.
- ``entities.json`` is derived from the log and rewritten whole (atomic
  replace) under the entities lock after the append (not the diary lock:
  other writers append meanwhile), from the in-process view of
  the log (``factstate``), unless another writer's rewrite already covers our
  lines, or every line since the last rewrite is a plain new fact and they are
  few (``entities.LAG_LIMIT``): then only the stamp records them and
  ``read_entities`` replays them (``entities.ensure_entities``). So what ouro
  reads always reflects a prefix of the log that includes every completed write.
- A fresh process does not replay the whole log: the writers' in-process view
  (``factstate.DiaryState``) is saved to ``state/cache/diary-state.marshal``
  each time the log has grown 1 MiB past the last save, and a new process
  restores it and reads only the lines after it (the restored inode, offset,
  mtime and last bytes are checked like a live state's; an outside rewrite
  means the whole log is read). It holds no fact texts (digests of the
  normalized text, byte ranges): texts are read from the log when a check needs them.
  The facts and text digests are sorted tables searched in place (``factstate``),
  so restoring does not cost O(facts).
- Readers (``iter_facts``, ``active_facts``) are pure and report bad lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.entities import ensure_entities, read_current, rewrite_entities
from ouro.desk.factnorm import (
    NEAR_THRESHOLD,
    could_exceed,
    fact_hash,
    normalize_entity,
    normalize_text,
    overlap,
)
from ouro.desk.factnorm import tokens as text_tokens
from ouro.desk.factstate import DiaryState, state_for
from ouro.errors import Conflict, CorruptFile, InvalidInput, NotFound, OuroError, OutsideBundle
from ouro.models.clock import parse_time, utc_now_iso
from ouro.models.ids import is_id, new_id
from ouro.models.plain import Frozen, Plain
from ouro.store import jsonio
from ouro.store.bounded import NotRegularFile
from ouro.store.guard import Inside, outside
from ouro.store.jsonl import BadLine, append_jsonl, fsync_path, read_jsonl
from ouro.store.lock import FileLock

FACTS_LOCATOR = "desk/_record/diary/facts.jsonl"
MAX_TEXT = 4000
MAX_FIELD = 500


def facts_path(bundle: Bundle) -> Path:
    return bundle.record / "diary" / "facts.jsonl"


def entities_path(bundle: Bundle) -> Path:
    return bundle.record / "diary" / "entities.json"


def fact_locator(fact_id: str) -> str:
    return f"{FACTS_LOCATOR}#{fact_id}"


class FactDraft(Frozen):
    """What a caller wants filed. ``fact_id``/``created_at`` are for importers.
    Immutable, compared and hashed by value (``ouro.models.plain``: no ``dataclasses``)."""

    __slots__ = (
        "about",
        "channel",
        "created_at",
        "fact_id",
        "friend_id",
        "friend_name",
        "origin",
        "session_ref",
        "source",
        "supersedes",
        "text",
        "tool",
        "trust",
    )  # fmt: skip
    text: str
    about: Sequence[str]
    source: str | None
    channel: str | None
    friend_id: str | None
    friend_name: str | None
    trust: str | None
    supersedes: str | None
    tool: str
    #: where it was written from: ``habit:<name>`` inside a habit session (``ouro.lane``)
    origin: str | None
    session_ref: str | None
    fact_id: str | None
    created_at: str | None

    def __init__(
        self,
        text: str,
        about: Sequence[str] = (),
        source: str | None = None,
        channel: str | None = None,
        friend_id: str | None = None,
        friend_name: str | None = None,
        trust: str | None = None,
        supersedes: str | None = None,
        tool: str = "diary_write",
        origin: str | None = None,
        session_ref: str | None = None,
        fact_id: str | None = None,
        created_at: str | None = None,
    ) -> None:
        self._set(text=text, about=about, source=source, channel=channel,
                  friend_id=friend_id, friend_name=friend_name, trust=trust,
                  supersedes=supersedes, tool=tool, origin=origin, session_ref=session_ref,
                  fact_id=fact_id, created_at=created_at)  # fmt: skip


class FactWrite(Plain):
    __slots__ = ("duplicate", "fact")

    def __init__(self, fact: dict[str, Any], duplicate: bool) -> None:
        self.fact = fact
        self.duplicate = duplicate

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact,
            "duplicate": self.duplicate,
            "locator": fact_locator(self.fact["id"]),
        }


class BatchResult(Plain):
    __slots__ = ("paths", "results", "warnings", "written")

    def __init__(self) -> None:
        self.results: list[FactWrite] = []
        self.written = 0
        self.warnings: list[str] = []
        self.paths: list[Path] = []


# --- building lines ----------------------------------------------------------
def _opt(value: str | None, name: str, limit: int = MAX_FIELD) -> str | None:
    if value is None:
        return None
    clean = value.strip()
    if "\x00" in clean or len(clean) > limit:
        raise InvalidInput(
            f"{name}: must be at most {limit} characters without NUL", hint=f"shorten {name}"
        )
    return clean or None


def _about(about: Iterable[str]) -> list[str]:
    out: list[str] = []
    for raw in about:
        entity = normalize_entity(raw)
        if not entity or "\x00" in entity or len(entity) > 200:
            raise InvalidInput(
                f"about: {raw!r} must be 1..200 characters without NUL",
                hint="name the entity the fact is about, e.g. --about ari",
            )
        if entity not in out:
            out.append(entity)
    return out


def build_fact(draft: FactDraft) -> dict[str, Any]:
    """Validate a draft and return the exact line object ``diary_write`` appends."""
    text = draft.text.strip()
    if not text or "\x00" in text or len(text) > MAX_TEXT:
        raise InvalidInput(
            f"text: a fact must be 1..{MAX_TEXT} characters without NUL",
            hint="write one atomic fact; put long material in a note",
        )
    if draft.supersedes is not None and not is_id(draft.supersedes, "f"):
        raise InvalidInput(
            f"supersedes: {draft.supersedes!r} is not a fact id (f-…)",
            hint="pass the id of the fact this one corrects",
        )
    if draft.fact_id is not None and not is_id(draft.fact_id, "f"):
        raise InvalidInput(f"id: {draft.fact_id!r} is not a fact id (f-…)", hint="omit it")
    created = draft.created_at or utc_now_iso()
    try:
        parse_time(created)
    except ValueError:
        raise InvalidInput(
            f"createdAt: {created!r} is not an ISO time", hint="use e.g. 2026-03-01T10:05:00.000Z"
        ) from None
    fact: dict[str, Any] = {
        "schemaVersion": 1,
        "id": draft.fact_id or new_id("f"),
        "text": text,
        "about": _about(draft.about),
        "source": _opt(draft.source, "source"),
        "createdAt": created,
        "provenance": {
            "tool": draft.tool,
            "channel": _opt(draft.channel, "channel", 200),
            "friendId": _opt(draft.friend_id, "friend", 200),
            "friendName": _opt(draft.friend_name, "friend_name", 200),
            "trust": _opt(draft.trust, "trust", 40),
        },
        "hash": fact_hash(text),
    }
    if draft.origin is not None:
        fact["provenance"]["origin"] = draft.origin
        fact["provenance"]["sessionRef"] = draft.session_ref
    if draft.supersedes is not None:
        fact["supersedes"] = draft.supersedes
    return fact


# --- writing -----------------------------------------------------------------
class _Pending:
    """Facts accepted earlier in the same batch, checked like the log."""

    def __init__(self) -> None:
        self.facts: dict[str, dict[str, Any]] = {}
        self.by_hash: dict[str, str] = {}
        self.by_entity: dict[str, list[str]] = {}
        self.toks: dict[str, frozenset[str]] = {}
        self.superseded: set[str] = set()

    def add(self, fact: dict[str, Any], toks: frozenset[str]) -> None:
        fid = fact["id"]
        self.facts[fid] = fact
        self.by_hash.setdefault(fact["hash"], fid)
        self.toks[fid] = toks
        for entity in fact["about"]:
            self.by_entity.setdefault(entity, []).append(fid)
        if "supersedes" in fact:
            self.superseded.add(fact["supersedes"])

    def near(self, toks: frozenset[str], about: list[str]) -> tuple[str, float] | None:
        for entity in about:
            for fid in self.by_entity.get(entity, ()):
                other = self.toks[fid]
                if fid in self.superseded or not could_exceed(len(toks), len(other)):
                    continue
                score = overlap(toks, other)
                if score > NEAR_THRESHOLD:
                    return fid, score
        return None


def _check(
    state: DiaryState, pending: _Pending, fact: dict[str, Any], force: bool, meaning: bool = False
) -> FactWrite | None:
    """None when the fact should be written; a duplicate result when it should not."""
    fid, target = fact["id"], fact.get("supersedes")
    if fid in state.facts or fid in pending.facts:
        raise Conflict(f"id: fact {fid} already exists", hint="omit the id to get a new one")
    if target is not None:
        if target not in state.facts and target not in pending.facts:
            raise NotFound(
                f"supersedes: no fact {target} in {FACTS_LOCATOR}",
                hint="find the fact's id with 'ouro diary consult --history'",
            )
        successor = state.superseded.get(target) or (
            target if target in pending.superseded else None
        )
        if successor is not None:
            raise Conflict(
                f"supersedes: fact {target} is already superseded by {successor}",
                hint=f"supersede the newer fact instead: --supersedes {successor}",
            )
    existing = pending.by_hash.get(fact["hash"]) or state.exact(
        normalize_text(fact["text"]), target
    )
    if existing is not None and existing != target and existing not in pending.superseded:
        line = pending.facts.get(existing) or state.line(existing)
        return FactWrite(line, duplicate=True)
    if force:
        return None
    toks = text_tokens(fact["text"])
    about = tuple(fact["about"])
    hit = state.near(toks, about, target) or pending.near(toks, fact["about"])
    if hit is not None:
        other, score = hit
        text = pending.facts[other]["text"] if other in pending.facts else state.text(other)
        raise Conflict(
            f"a fact about the same entity already says nearly this ({score:.2f} token "
            f"overlap > {NEAR_THRESHOLD}): {fact_locator(other)}: {text!r}",
            hint=f"to correct it pass --supersedes {other}; if it is a different fact, "
            "pass --force",
        )
    if meaning and about:
        _check_meaning(state, pending, fact, target)
    return None


def _by_meaning(
    bundle: Bundle, facts: list[dict[str, Any]], force: bool
) -> tuple[bool, str | None]:
    """Whether this write also checks near-duplicates by meaning (``diary.near``),
    and the warning to give when it cannot. ``bundle.json`` travels between
    machines: one without the embedding model checks by words only and says so
    (docs/index.md: without the extra everything works as before), never refuses."""
    if force or not any(fact["about"] for fact in facts):
        return False, None
    from ouro.config import lookup

    if lookup("diary.near", bundle.root) != "meaning":
        return False, None
    from ouro.embedding import ENABLE_HINT, available, model

    if not available():
        return False, (
            "diary.near = meaning, but the embedding model is not installed here: "
            f"near duplicates were checked by words only; {ENABLE_HINT}"
        )
    model()  # loaded now, not while every writer waits for the diary lock
    return True, None


def _check_meaning(
    state: DiaryState, pending: _Pending, fact: dict[str, Any], target: str | None
) -> None:
    """Refuse a fact that restates an active fact about the same entity in other words."""
    from ouro.embedding import NEAR_COSINE, near_fact

    seen: set[str] = set()
    candidates: list[tuple[str, str]] = []
    for entity in fact["about"]:
        ids = state.entity_ids(entity) or ()
        state.load_texts(ids)
        for fid in ids:
            if fid not in seen and fid != target and fid not in state.superseded:
                seen.add(fid)
                candidates.append((fid, state.text(fid)))
        for fid in pending.by_entity.get(entity, ()):
            if fid not in seen and fid not in pending.superseded:
                seen.add(fid)
                candidates.append((fid, pending.facts[fid]["text"]))
    hit = near_fact(fact["text"], candidates)
    if hit is not None:
        other, score = hit
        text = dict(candidates)[other]
        raise Conflict(
            f"a fact about the same entity already says this in other words (cosine "
            f"{score:.2f} >= {NEAR_COSINE}): {fact_locator(other)}: {text!r}",
            hint=f"to correct it pass --supersedes {other}; if it is a different fact, "
            "pass --force",
        )


def append_facts_batch(
    bundle: Bundle, drafts: Sequence[FactDraft], *, force: bool = False
) -> BatchResult:
    """Validate, de-duplicate and append facts in one locked write; update entities.json.

    ``write_fact`` is this with one draft, so a batch writes byte-identical lines.
    """
    facts = [build_fact(d) for d in drafts]
    path, lock = facts_path(bundle), bundle.lock_path("diary")
    state = state_for(path)
    if state.snapshot is None:
        state.snapshot = state_snapshot_path(bundle)
    result = BatchResult()
    meaning, meaning_warning = _by_meaning(bundle, facts, force)
    with state.mutex:
        # Catch up before taking the lock: a fresh process reads the whole log
        # (and tokenises an entity's facts) here, not while every writer waits.
        state.sync(locked=False)
        if not force:
            state.index_entities([e for fact in facts for e in fact["about"]])
    with FileLock(lock, purpose="diary write"), state.mutex:
        state.sync()
        pending = _Pending()
        for fact in facts:
            dup = _check(state, pending, fact, force, meaning)
            if dup is not None:
                result.results.append(dup)
                continue
            pending.add(fact, text_tokens(fact["text"]) if not force else frozenset())
            result.results.append(FactWrite(fact, duplicate=False))
        to_write = list(pending.facts.values())
        if to_write:
            append_jsonl(path, to_write, sync=False)  # fsynced below, after the lock
            state.sync()
        upto = state.offset  # our lines (if any) end at or before this byte
        result.warnings = bad_line_warnings(state.bad)
        if meaning_warning is not None:
            result.warnings.append(meaning_warning)
    if result.results:
        fsync_path(path)  # durable before we report success (group commit)
    if to_write:
        # Meanwhile other writers may have appended and one of them may have
        # rewritten entities.json already; then there is nothing left to do.
        entities = entities_path(bundle)
        stamp = entities_stamp_path(bundle)
        try:
            # Under the entities lock only: other writers keep appending while
            # this rewrite runs, and the next rewrite covers them (group commit).
            with FileLock(entities_lock(bundle), purpose="entities update"), state.mutex:
                ensure_entities(state, entities, stamp, upto, diary_lock=lock)
            result.paths = [path, entities]
        except OuroError as exc:
            # The facts are durable: report success, say what is stale, never
            # make the caller retry (and duplicate) a write that happened.
            with contextlib.suppress(OSError):  # "not known current": the next write rewrites it
                stamp.unlink()
            result.warnings.append(
                f"{FACTS_LOCATOR}: written; entities.json is stale ({exc.message})"
                " -- run 'ouro diary rebuild-entities' once the cause is fixed"
            )
            result.paths = [path]
    if to_write:
        # A cache for the next fresh process (``factstate``: "snapshot"); it
        # validates itself, so failing to save it costs only speed.
        with state.mutex, contextlib.suppress(OSError):
            state.save_snapshot()
    result.written = len(to_write)
    return result


def write_fact(
    bundle: Bundle, draft: FactDraft, *, force: bool = False
) -> tuple[FactWrite, BatchResult]:
    batch = append_facts_batch(bundle, [draft], force=force)
    return batch.results[0], batch


def bad_line_warnings(bad: Sequence[BadLine], limit: int = 10) -> list[str]:
    out = [
        f"{FACTS_LOCATOR}:{b.line_no}: {b.reason}; the line is left as it is" for b in bad[:limit]
    ]
    if len(bad) > limit:
        out.append(f"{FACTS_LOCATOR}: {len(bad) - limit} more bad lines")
    return out


# --- entities.json -----------------------------------------------------------
def state_snapshot_path(bundle: Bundle) -> Path:
    """The saved ``DiaryState`` (machine-local cache: inode numbers, byte offsets)."""
    return bundle.state / "cache" / "diary-state.marshal"


def save_state_if_missing(bundle: Bundle) -> bool:
    """Save the diary state for fresh processes when the saved one is missing,
    unusable or behind by ``SNAPSHOT_EVERY`` bytes (``index sync`` calls this).

    A log written without ouro's writers (generated, copied, pulled) has no
    saved state its inode matches, so its first write would replay the whole log
    (~1 s at 100k facts); ``index sync`` pays that once instead, and saves the
    near-duplicate token index of the busy entities with it (a first write about
    an entity with 23k facts would otherwise tokenise them all). Returns whether
    it saved.
    """
    path = facts_path(bundle)
    if not path.exists() or not Inside(bundle.root).path(path):
        return False  # behind a symlink leading outside: never read (index sync names it)
    state = state_for(path)
    if state.snapshot is None:
        state.snapshot = state_snapshot_path(bundle)
    with state.mutex:
        caught_up = state.sync(locked=False)  # restores a usable saved state, or reads the log
    if not caught_up:  # the saved state was for another file (a copy, a rewrite)
        with FileLock(bundle.lock_path("diary"), purpose="diary state save"), state.mutex:
            state.sync()
    with state.mutex:
        return state.save_snapshot(index_busy=True)


def _refuse_outside(bundle: Bundle, path: Path) -> None:
    inside = Inside(bundle.root)
    if not inside.path(path):
        raise OutsideBundle(
            outside(inside.rel(path)),
            hint="replace the symlink with the real file inside the bundle",
        )


def entities_lock(bundle: Bundle) -> Path:
    """Held by whoever rewrites entities.json (before the diary lock, if both)."""
    return bundle.lock_path("entities")


def entities_stamp_path(bundle: Bundle) -> Path:
    """Which log entities.json reflects (a cache; see ``ouro.desk.entities``).

    Next to the locks: only read and written under the entities lock, and like the locks
    it is machine-local (inode numbers) and ignored by git.
    """
    return bundle.lock_path("diary").with_name("diary.entities-stamp")


def rebuild_entities(bundle: Bundle) -> dict[str, int]:
    """Regenerate entities.json from facts.jsonl (e.g. after a git merge).

    A facts.jsonl behind a symlink leading outside the bundle is never read:
    refused (``OutsideBundle``) and entities.json left as it is."""
    path = facts_path(bundle)
    _refuse_outside(bundle, path)
    with (
        FileLock(entities_lock(bundle), purpose="entities rebuild"),
        FileLock(bundle.lock_path("diary"), purpose="entities rebuild"),
    ):
        state = DiaryState(path)
        state.sync()
        rewrite_entities(state, entities_path(bundle), entities_stamp_path(bundle), if_changed=True)
        shared = state_for(path)
        with shared.mutex:
            shared.reset()  # the next write re-reads the log from the start
    return {"entities": len(state.entity_keys), "facts": len(state.facts)}


# --- reading (pure) ------------------------------------------------------------
def iter_facts(bundle: Bundle) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """Every fact line in file order (first line per id wins) and the bad lines.

    A facts.jsonl behind a symlink leading outside the bundle, or that is not a
    regular file, is never read: no facts, and one bad line (line 0) saying so."""
    path = facts_path(bundle)
    inside = Inside(bundle.root)
    if not inside.path(path):
        return [], [BadLine(path, 0, outside(inside.rel(path)), b"")]
    try:
        read = read_jsonl(path)
    except NotRegularFile as exc:  # a FIFO there: never opened blocking, never read as empty
        return [], [BadLine(path, 0, f"{exc.strerror}; not read", b"")]
    bad = list(read.bad)
    facts: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    for record, line_no in zip(read.records, read.line_numbers, strict=True):
        fid, text = record.get("id"), record.get("text")
        raw = jsonio.dumps(record)
        if not isinstance(fid, str) or not isinstance(text, str):
            bad.append(BadLine(path, line_no, "a fact needs a string id and text", raw))
            continue
        if fid in seen:
            if seen[fid] != record:
                bad.append(BadLine(path, line_no, f"repeats id {fid} with other content", raw))
            continue
        seen[fid] = record
        facts.append(record)
    bad.sort(key=lambda b: b.line_no)
    return facts, bad


def superseded_by(facts: Iterable[dict[str, Any]]) -> dict[str, str]:
    """old fact id -> id of the first later fact that supersedes it."""
    out: dict[str, str] = {}
    for fact in facts:
        target = fact.get("supersedes")
        if isinstance(target, str) and target not in out:
            out[target] = fact["id"]
    return out


def active_facts(bundle: Bundle) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """Facts that no other fact supersedes, in file order, and the bad lines."""
    facts, bad = iter_facts(bundle)
    retired = superseded_by(facts)
    return [f for f in facts if f["id"] not in retired], bad


def read_entities(bundle: Bundle) -> dict[str, Any]:
    """entities.json as of the last completed write (pure); ``{}`` when missing.

    The file may lag the log by a few verified lines (``ouro.desk.entities``,
    "LAG_LIMIT"); they are replayed here (nothing is written).
    """
    path = entities_path(bundle)
    try:
        current = read_current(path, entities_stamp_path(bundle), facts_path(bundle))
    except FileNotFoundError:
        return {}
    if isinstance(current, dict):
        return current
    try:
        data = jsonio.loads(current)
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(
            f"{bundle.locator(path)}: not valid JSON ({exc})",
            hint="run 'ouro diary rebuild-entities'; it is derived from facts.jsonl",
        ) from None
    if not isinstance(data, dict):
        raise CorruptFile(
            f"{bundle.locator(path)}: must be a JSON object",
            hint="run 'ouro diary rebuild-entities'; it is derived from facts.jsonl",
        )
    return data
