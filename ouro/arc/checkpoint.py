"""The resume checkpoint (``arc/flight-recorder/latest.json``): derive and load.

``compute(bundle)`` is pure: it loads the persisted checkpoint, checks its
cursor against the log, folds only the newer lines (or everything, when the
checkpoint is missing, malformed or inconsistent), refreshes the store
summaries, and returns the checkpoint as of now together with the issues met
on the way. The writer (``ouro.arc.recorder``) persists that; readers
(``ouro.arc.resume``) only look at it.

Top-level contract fields (see docs/arc.md): ``completeState``,
``canContinue``, ``missing``, ``currentAsk`` {value, confidence, sourceEventIds},
``nextSafeAction`` {value, stopBefore}, ``blockedBecause``, ``blockers``,
``activeObligationIds``, ``returnObligationIds``, ``recentClaimIds``,
``unverifiedClaimIds``, ``lastSafeCheckpoint``, ``lastEvent``, ``eventCount``,
``recorder`` {health ok|degraded|unavailable, issues}. ``fold`` holds the
cursor that makes the next fold cheap; ``storesDigest`` names the claim and
obligation summaries the view was derived from.

The summaries themselves (``ouro.arc.stores``: a stamp per store file, the item
read from it) are a machine-local cache, ``state/cache/arc-stores.marshal``,
not part of ``latest.json``: their stamps (inodes, ctimes) mean nothing on
another machine, and at a year's scale they are most of the checkpoint's bytes
(2,000 claims: ~550 kB), which every event used to rewrite and every read to
parse. ``compute`` takes them from the cache (or, written by an older ouro, from
``latest.json``'s own ``stores``), refreshes them, and when they changed saves
them again -- a read too, as a cache under ``state/`` may be (atomically; no
lock is needed: every line holds only under its file's stamp, so a summary
saved late by a slower process makes the next read re-read the files it
missed, never trust them). A missing or damaged cache is no cache: every
store file is read again.
"""

from __future__ import annotations

import _thread  # threading.local is _thread._local; threading itself costs ~4M instructions
import os

from ouro.arc import fold as folding
from ouro.arc import paths, stores
from ouro.bundle import Bundle
from ouro.edge import is_blank
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_bytes
from ouro.store.bounded import file_bytes, open_regular, torn_tail
from ouro.store.guard import Inside, outside

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

SCHEMA_VERSION = 2
CONFIRM_COMMAND = "ouro arc confirm"
RECENT_CLAIMS = 10


class Computed(NamedTuple):
    checkpoint: dict[str, Any]
    #: issues about the persisted checkpoint file itself (a writer fixes them)
    file_issues: list[dict[str, str]]
    folded: int = 0


#: the machine-local cache of the store summaries (bundle-relative)
STORES_CACHE = "state/cache/arc-stores.marshal"
_STORES_MAGIC = "ouro-arc-stores-1"
#: the most a stores cache is read to (2,000 claims: ~0.5 MB; beyond it: no cache)
_STORES_LIMIT = 1 << 28


def _load_stores(bundle: Bundle) -> tuple[dict[str, Any] | None, str | None]:
    """The cached store summaries and their digest; ``(None, None)`` when the cache is
    missing, damaged, not a regular file or behind a symlink leading outside."""
    import marshal

    path = bundle.root / STORES_CACHE
    if not Inside(bundle.root).path(path):
        return None, None
    try:
        fd = open_regular(path)  # a FIFO: no cache, never a hang
    except OSError:
        return None, None
    try:
        with open(fd, "rb", closefd=False) as handle:
            value = marshal.loads(handle.read(_STORES_LIMIT))
    except (OSError, ValueError, EOFError, TypeError):
        return None, None
    finally:
        os.close(fd)
    if type(value) is not tuple or len(value) != 3 or value[0] != _STORES_MAGIC:
        return None, None
    digest, summaries = value[1], value[2]
    if type(digest) is not str or not _well_formed(summaries):
        return None, None
    return summaries, digest


def _well_formed(summaries: object) -> bool:
    """True when ``summaries`` has the shape ``view`` reads (items are dicts with the
    fields it takes): a cache that does not is no cache, never a traceback."""
    if type(summaries) is not dict:
        return False
    for name, needed in (("claims", "status"), ("obligations", "inner")):
        part = summaries.get(name)
        if type(part) is not dict:
            return False
        if "error" in part:
            continue
        files, items, errors = part.get("files"), part.get("items"), part.get("errors")
        if type(files) is not dict or type(items) is not dict or type(errors) is not dict:
            return False
        if not all(type(item) is dict and needed in item for item in items.values()):
            return False
    return True


def save_stores(bundle: Bundle, summaries: dict[str, Any]) -> str:
    """Save ``summaries`` to the cache; returns their digest. A cache that cannot be
    written (a read-only disk, a full one) only means the next read reads the store
    files again."""
    import marshal

    from ouro.errors import OuroError

    # marshal's bytes of the same values are the same bytes (version 2: no
    # back-references), so their digest names the summaries' content
    try:  # hashlib's own blake2b, without hashlib's OpenSSL start-up (as ``ouro.arc.stores``)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without _blake2
        from hashlib import blake2b

    digest = "blake2b:" + blake2b(marshal.dumps(summaries, 2), digest_size=16).hexdigest()
    try:  # noqa: SIM105 - no contextlib import on the hooks' path
        atomic_write_bytes(
            bundle.root / STORES_CACHE, marshal.dumps((_STORES_MAGIC, digest, summaries), 4)
        )
    except (OuroError, OSError):
        pass
    return digest


def encode(checkpoint: dict[str, Any]) -> bytes:
    """The bytes of ``latest.json`` for ``checkpoint``: sorted keys, compact, without
    the store summaries (their cache is ``STORES_CACHE``)."""
    out = {k: v for k, v in checkpoint.items() if k != "stores"}
    return jsonio.dumps(out, sort_keys=True) + b"\n"  # orjson's bytes, without its import


def write(bundle: Bundle, checkpoint: dict[str, Any]) -> None:
    """Replace ``latest.json`` (atomically) with ``checkpoint`` (``encode``)."""
    path = paths.checkpoint_path(bundle)
    atomic_write_bytes(path, encode(checkpoint))
    if getattr(_RUN, "active", False):
        _RUN.written = (_key(path), checkpoint)


# --- one run reads the stores once ---------------------------------------------------
#: per thread: inside ``one_run``, the checkpoint this thread last wrote, keyed
#: on the stat of the file it wrote
_RUN = _thread._local()


def _key(path: Any) -> tuple[str, int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.fspath(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class one_run:
    """One short run (a host hook) that writes an event and then reads the
    checkpoint: the read takes the checkpoint that write computed, under the Arc
    lock, instead of folding and reading the claim and obligation stores again.

    It is the same read, made once: it holds only while ``latest.json`` is still
    the file this run wrote and the log has not grown since (another writer
    replaced the one or appended to the other: the read computes as usual).
    Nothing outlives the block. (A class rather than a
    ``contextlib.contextmanager``: the hooks start without ``contextlib``.)
    """

    def __enter__(self) -> None:
        _RUN.active, _RUN.written = True, None

    def __exit__(self, *exc: object) -> None:
        _RUN.active, _RUN.written = False, None


def _written(bundle: Bundle, folder: Any, names: list[str]) -> dict[str, Any] | None:
    """The checkpoint this run wrote, if it is still the one on disk and current."""
    written = getattr(_RUN, "written", None) if getattr(_RUN, "active", False) else None
    if written is None:
        return None
    key, checkpoint = written
    if key is None or key != _key(paths.checkpoint_path(bundle)):
        return None
    if folding.behind(checkpoint["fold"], folder, names):
        return None
    result: dict[str, Any] = checkpoint
    return result


def issue(code: str, message: str, severity: str = "degraded") -> dict[str, str]:
    return {"code": code, "severity": severity, "message": message}


def load_persisted(bundle: Bundle) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    data, problem, _ = _load_persisted(bundle)
    return data, problem


def _load_persisted(
    bundle: Bundle,
) -> tuple[dict[str, Any] | None, dict[str, str] | None, bytes]:
    """``load_persisted``, with the file's bytes (empty when it could not be read)."""
    path = paths.checkpoint_path(bundle)
    if not Inside(bundle.root).path(path):  # a derived file: never read, rebuilt from the log
        return None, issue("checkpoint_outside", f"{outside(paths.CHECKPOINT)}; rebuilt"), b""
    try:
        raw = file_bytes(path)  # a FIFO: unreadable, never a hang
    except FileNotFoundError:
        missing = issue(
            "checkpoint_missing", f"{paths.CHECKPOINT} is missing; rebuilt from the log"
        )
        return None, missing, b""
    except OSError as exc:
        unreadable = issue("checkpoint_unreadable", f"{paths.CHECKPOINT}: {exc.strerror}; rebuilt")
        return None, unreadable, b""
    data, problem = _parse_persisted(raw)
    return data, problem, raw


def _parse_persisted(raw: bytes) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    try:
        data = jsonio.loads(raw)
    except jsonio.JSONDecodeError as exc:
        return None, issue(
            "checkpoint_malformed", f"{paths.CHECKPOINT} is not valid JSON ({exc}); rebuilt"
        )
    if isinstance(data, dict) and data.get("schemaVersion") != SCHEMA_VERSION:
        # Written by another version of ouro: a cache to rebuild, not damage.
        return None, issue(
            "checkpoint_outdated",
            f"{paths.CHECKPOINT} has schemaVersion {data.get('schemaVersion')!r} "
            f"(this ouro writes {SCHEMA_VERSION}); rebuilt from the log",
            "info",
        )
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("fold"), dict)
        or not isinstance(data["fold"].get("cursor"), dict)
    ):
        return None, issue(
            "checkpoint_malformed",
            f"{paths.CHECKPOINT} lacks the fold cursor; rebuilt from the log",
        )
    return data, None


class EventsOutside(NotADirectoryError):
    """The events folder resolves outside the bundle (its message says so)."""


def day_files(bundle: Bundle, skipped: list[str]) -> list[str]:
    """The event log's day files, oldest first, as every fold of it reads them:
    the events folder is resolved once, and none behind a symlink leading
    outside the bundle is listed (their bundle-relative paths go to
    ``skipped``). Raises OSError when the folder cannot be listed, and
    ``EventsOutside`` naming it when it resolves outside the bundle."""
    folder = paths.events_dir(bundle)
    inside = Inside(bundle.root)
    if inside.folder(folder) is None:
        raise EventsOutside(outside(inside.rel(folder)))
    return folding.day_files(folder, skipped)


def compute(bundle: Bundle) -> Computed:
    folder = paths.events_dir(bundle)
    skipped: list[str] = []  # day files behind a symlink leading outside the bundle
    try:
        names = day_files(bundle, skipped)
    except OSError as exc:
        empty = folding.empty_state()
        out = view(bundle, empty, *_summaries(bundle, None), [])
        out["recorder"] = {
            "health": "unavailable",
            "issues": [issue("events_unreadable", f"cannot list {paths.EVENTS_DIR} ({exc})")],
        }
        out["canContinue"] = False
        out["completeState"] = False
        out["missing"] = [*out["missing"], "recorder: unavailable"]
        return Computed(out, [])
    written = _written(bundle, folder, names) if not skipped else None
    if written is not None:
        return Computed(written, [])
    persisted, load_issue, _ = _load_persisted(bundle)
    file_issues: list[dict[str, str]] = [issue("events_outside", outside(r)) for r in skipped]
    state: dict[str, Any] | None = None
    folded = 0
    if persisted is not None:
        try:
            state = persisted["fold"]
            if folding.behind(state, folder, names):
                state, folded = folding.catch_up(state, folder, names)
            if folded:
                file_issues.append(
                    issue(
                        "checkpoint_behind",
                        f"{paths.CHECKPOINT} was {folded} event(s) behind the log "
                        "(a writer stopped before rewriting it); folded them in",
                        "info",
                    )
                )
            else:
                folding.check_cursor(state, folder, names)
        except folding.Inconsistent as exc:
            state = None
            file_issues.append(issue("checkpoint_inconsistent", f"{exc}; rebuilt from the log"))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # A hand-edited checkpoint with the right shape but wrong types.
            state = None
            file_issues.append(
                issue("checkpoint_malformed", f"{paths.CHECKPOINT} fold state unusable ({exc!r})")
            )
    elif load_issue is not None and (names or load_issue["code"] != "checkpoint_missing"):
        file_issues.append(load_issue)
    if state is None:
        state, folded = folding.catch_up(folding.empty_state(), folder, names)
    out = view(bundle, state, *_summaries(bundle, persisted), file_issues)
    return Computed(out, file_issues, folded)


def _summaries(bundle: Bundle, persisted: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The claim and obligation summaries as of now and their digest: the cached ones
    refreshed (``ouro.arc.stores``), saved again when they changed.

    The cache is ``STORES_CACHE``; a ``latest.json`` written by an older ouro holds
    them itself (``stores``), which serves until the cache is saved."""
    cached, digest = _load_stores(bundle)
    if cached is None and persisted is not None and _well_formed(persisted.get("stores")):
        cached = persisted["stores"]
    cached = cached or {}
    claims, obligations = cached.get("claims"), cached.get("obligations")
    summaries = {
        "claims": stores.refresh_claims(bundle, claims),
        "obligations": stores.refresh_obligations(bundle, obligations),
    }
    moved = summaries["claims"] is not claims or summaries["obligations"] is not obligations
    # (a file read again within the racy window reads back to the same lines: no write)
    if digest is None or (moved and summaries != cached):
        digest = save_stores(bundle, summaries)
    return summaries, digest


def _locator(ref: dict[str, Any] | None) -> str | None:
    return paths.event_locator(ref["file"], ref["eventId"]) if ref else None


def _confirm(ask: dict[str, Any], nxt: dict[str, Any] | None) -> dict[str, Any]:
    """What ``ouro arc confirm`` would confirm, and why it is asked for."""
    boundary = ask["confirmBecause"]
    session = ask.get("sessionRef") or "an earlier session"
    what = "the ask and next safe action" if nxt is not None else "the ask"
    cause = boundary["kind"] + (f" ({boundary['source']})" if boundary.get("source") else "")
    return {
        "askEventId": ask["eventId"],
        "nextEventId": nxt["eventId"] if nxt is not None else None,
        "fromSession": ask.get("sessionRef"),
        "recordedAt": ask["recordedAt"],
        "boundary": boundary,
        "command": CONFIRM_COMMAND,
        "message": (
            f"{what} came from {session} at {ask['recordedAt']}; a {cause} came after "
            f"({boundary['eventId']}); confirm with '{CONFIRM_COMMAND}' or record a new ask"
        ),
    }


def view(
    bundle: Bundle,
    state: dict[str, Any],
    store: dict[str, Any],
    digest: str,
    extra: list[dict[str, str]],
) -> dict[str, Any]:
    """The checkpoint of the folded ``state`` and the store summaries ``store`` (whose
    digest is ``digest``), with the ``extra`` issues met reading them."""
    issues = list(extra)
    missing: list[str] = []
    for bad in state["badLines"]:
        issues.append(
            issue(
                "event_line_unreadable",
                f"{paths.EVENTS_DIR}/{bad['file']}:{bad['line']}: {bad['reason']}",
            )
        )
    tail = state.get("pendingTail")
    if tail:
        issues.append(
            issue(
                "event_tail_torn",
                f"{paths.EVENTS_DIR}/{tail['file']} {torn_tail(tail['offset'])}",
            )
        )
    claims, obligations = store["claims"], store["obligations"]
    for label, summary, base in (
        ("claims", claims, paths.CLAIMS_DIR),
        ("obligations", obligations, paths.OBLIGATIONS_DIR),
    ):
        if summary.get("error"):
            missing.append(f"{label}: unknown ({summary['error']})")
            issues.append(issue(f"{label}_unreadable", f"{base}: {summary['error']}"))
        for item_id, reason in sorted(summary.get("errors", {}).items()):
            issues.append(issue(f"{label}_file_unreadable", f"{item_id}: {reason}"))
            missing.append(f"{label}: {item_id} unknown ({reason})")

    ask = state["ask"]
    confirm: dict[str, Any] | None = None
    # Text already in the files (written by hand or an old ouro) may be blank:
    # a blank ask or next action is missing, never a perfect recovery state.
    blank_ask = ask is not None and is_blank(ask["value"])
    if ask is None:
        confidence, reason = "unknown", "no ask recorded; record one with 'ouro arc ask'"
        missing.append("currentAsk: none recorded")
    elif blank_ask:
        confidence = "unknown"
        reason = f"the ask recorded by {ask['eventId']} is blank; record one with 'ouro arc ask'"
        missing.append(
            f"currentAsk: blank ({ask['eventId']} holds no text); record one with 'ouro arc ask'"
        )
    elif ask["staleBecause"]:
        confidence, reason = "stale_risky", ask["staleBecause"]
    elif ask.get("confirmBecause"):
        confidence = "needs_confirmation"
        confirm = _confirm(ask, state["next"] if folding.next_is_current(state) else None)
        reason = confirm["message"]
    else:
        confidence, reason = "current", None
    nxt = state["next"]
    next_current = folding.next_is_current(state)
    previous = None
    if nxt is not None and is_blank(nxt["value"]):
        missing.append(
            f"nextSafeAction: blank ({nxt['eventId']} holds no text); record one with "
            "'ouro arc next'"
        )
        nxt = None
    elif nxt is not None and not next_current:
        previous = {
            "value": nxt["value"],
            "stopBefore": nxt["stopBefore"],
            "askEventId": nxt.get("askEventId"),
            "recordedAt": nxt["recordedAt"],
            "locator": _locator(nxt),
        }
        missing.append(
            "nextSafeAction: none recorded for the current ask (the last one, "
            f"{nxt['eventId']}, is from the previous ask); record one with 'ouro arc next'"
        )
        nxt = None
    elif nxt is None:
        missing.append("nextSafeAction: none recorded")
    claim_items = claims.get("items", {})
    unverified = sorted(
        cid for cid, e in claim_items.items() if e["status"] not in ("verified", "superseded")
    )
    ob_items = obligations.get("items", {})
    ob_err, cl_err = bool(obligations.get("error")), bool(claims.get("error"))
    health = "degraded" if any(i["severity"] == "degraded" for i in issues) else "ok"
    complete = not missing
    blockers = state["blockers"]
    if not complete or blockers or health != "ok" or confidence in ("unknown", "stale_risky"):
        continuation = "no"
    elif confidence == "needs_confirmation":
        continuation = "needs_confirmation"
    else:
        continuation = "yes"
    handoff = state.get("handoff")
    last_useful = state.get("lastUseful") or state["lastEvent"]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "completeState": complete,
        "canContinue": continuation == "yes",
        "continuation": continuation,
        "confirm": confirm,
        "missing": missing,
        "currentAsk": {
            "value": ask["value"] if ask and not blank_ask else None,
            "confidence": confidence,
            "reason": reason,
            "sourceEventIds": [ask["eventId"]] if ask else [],
            "locator": _locator(ask),
            "recordedAt": ask["recordedAt"] if ask else None,
            "sessionRef": ask.get("sessionRef") if ask else None,
            "refs": list(ask.get("refs") or []) if ask else [],
        },
        "nextSafeAction": {
            "value": nxt["value"] if nxt else None,
            "stopBefore": [s for s in nxt["stopBefore"] if not is_blank(s)] if nxt else [],
            "sourceEventIds": [nxt["eventId"]] if nxt else [],
            "locator": _locator(nxt),
            "askEventId": nxt.get("askEventId") if nxt else None,
            "recordedAt": nxt["recordedAt"] if nxt else None,
            "refs": list(nxt.get("refs") or []) if nxt else [],
            "fromPreviousAsk": previous,
        },
        "handoff": (
            {
                "value": handoff["text"],
                "eventId": handoff["id"],
                "recordedAt": handoff["recordedAt"],
                "sessionRef": handoff.get("sessionRef"),
                "locator": _locator({"file": handoff["file"], "eventId": handoff["id"]}),
            }
            if handoff and not is_blank(handoff["text"])
            else None
        ),
        "blockedBecause": "; ".join(b["text"] for b in blockers) or None,
        "blockers": [
            {
                "id": b["id"],
                "text": b["text"],
                "recordedAt": b["recordedAt"],
                "locator": _locator(b),
            }
            for b in blockers
        ],
        # None, not [], when a store cannot be read: unknown stays unknown.
        "activeObligationIds": None
        if ob_err
        else sorted(k for k, v in ob_items.items() if not v["inner"]),
        # Files that could not be read: their state is unknown (named, never dropped).
        "unreadableObligationIds": None if ob_err else sorted(obligations.get("errors", {})),
        "unreadableClaimIds": None if cl_err else sorted(claims.get("errors", {})),
        "returnObligationIds": None
        if ob_err
        else sorted(k for k, v in ob_items.items() if v["inner"]),
        "recentClaimIds": None if cl_err else sorted(claim_items, reverse=True)[:RECENT_CLAIMS],
        "unverifiedClaimIds": None if cl_err else unverified,
        "lastSafeCheckpoint": (
            {**state["lastSafe"], "locator": _locator(state["lastSafe"])}
            if state["lastSafe"]
            else None
        ),
        "lastEvent": (
            {
                **state["lastEvent"],
                "locator": paths.event_locator(
                    state["lastEvent"]["file"], state["lastEvent"]["id"]
                ),
            }
            if state["lastEvent"]
            else None
        ),
        "lastUsefulEvent": (
            {
                **last_useful,
                "locator": paths.event_locator(last_useful["file"], last_useful["id"]),
            }
            if last_useful
            else None
        ),
        "eventCount": state["eventCount"],
        "recorder": {"health": health, "issues": issues},
        "fold": state,
        "stores": store,  # in memory only: their cache is STORES_CACHE
        "storesDigest": digest,
    }
