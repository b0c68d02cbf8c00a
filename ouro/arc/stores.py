"""Cached summaries of the claim and obligation stores, kept in the checkpoint.

No cache outlives its source. Each summary keeps, per store file, a
fingerprint ``[size, mtime_ns, ctime_ns, inode]`` beside what was read from
it. Every read lists the folders and stats every file: a file whose
fingerprint equals the cached one is not read again; any other (new, replaced,
edited in place, made unreadable or readable again — ``chmod`` changes the
ctime) is read again, alone. A file that vanished drops out. So an in-place
edit is seen on the next read, and an unreadable or malformed file is reported
per file (``errors``), never folded into "none".

Each entry also keeps a digest of the file's bytes. A file changed within
``RACY_NS`` of the moment it was read gets no fingerprint (``null``): file
times are coarse (a kernel tick), so a second same-size edit in that window
could keep the same times (git's "racily clean" rule). Such a file, and any
file whose fingerprint moved, has its bytes read and digested again; only when
the digest differs is it parsed again (so an unchanged claim never needs the
claim schema, even right after a write).

Claim status also depends on the files a claim is about: each claim entry
keeps a (size, mtime, ctime, inode) fingerprint of every ref it watches
(``watched_refs``); if any differs now, that claim alone is re-derived with
real content hashes. ``ouro claim list`` always derives every claim from
scratch.

Summary shape (both stores): ``{"files": {name: entry}, "items": {id: …},
"errors": {id: reason}}``, or ``{"error": reason}`` when the folder itself
cannot be listed (unknown, never empty). Obligation file names under
``inner/`` are keyed ``inner/<name>``.

The claim schema (``ouro.arc.claim_status``, pydantic) is imported only when a
claim file must be read; the common path, unchanged files, needs only
``os.stat``, so host hooks start without pydantic.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ouro.arc.paths import claims_dir, inner_dir, obligations_dir
from ouro.arc.refs import stat_ref
from ouro.bundle import Bundle
from ouro.errors import InvalidInput

if TYPE_CHECKING:
    from ouro.arc.claim_status import Claim

Summary = dict[str, Any]
Entry = dict[str, Any]
TEXT_LIMIT = 200
#: Files changed this recently (ns) when read are not trusted by fingerprint.
RACY_NS = 100_000_000


def _json_files(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _entries(
    folder: Path,
    prefix: str,
    cached: dict[str, Any],
    parse: Callable[[bytes, str], Entry],
    out: dict[str, Entry],
) -> None:
    """Fill ``out`` with an entry per JSON file in ``folder``. Raises OSError (listing)."""
    names = _json_files(folder)
    now = time.time_ns()
    for name in names:
        key = prefix + name
        path = folder / name
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue  # removed between the listing and the stat
        except OSError as exc:
            out[key] = {"fp": None, "id": name[:-5], "error": f"cannot stat ({exc.strerror})"}
            continue
        fp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        old = cached.get(key)
        if isinstance(old, dict) and old.get("fp") is not None and old["fp"] == fp:
            out[key] = old
            continue
        trusted = fp if now - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS else None
        try:
            data = path.read_bytes()
        except OSError as exc:
            out[key] = {"fp": trusted, "id": name[:-5], "error": f"cannot read ({exc.strerror})"}
            continue
        digest = _digest(data)
        if isinstance(old, dict) and old.get("digest") == digest and not old.get("readError"):
            out[key] = {**old, "fp": trusted}
            continue
        entry = parse(data, name)
        entry["fp"] = trusted
        entry["digest"] = digest
        out[key] = entry


def _cached_files(cached: Summary | None) -> dict[str, Any]:
    files = cached.get("files") if isinstance(cached, dict) else None
    return files if isinstance(files, dict) else {}


# --- claims -------------------------------------------------------------------


def claim_entry(bundle: Bundle, claim: Claim) -> dict[str, Any]:
    from ouro.arc.claim_status import derive_status, memo_hasher, watched_refs

    status, reason = derive_status(claim, memo_hasher(bundle))
    text = " ".join(claim.text.split())[:TEXT_LIMIT]
    entry: dict[str, Any] = {"status": status, "reason": reason, "text": text}
    entry["watch"] = {ref: stat_ref(bundle, ref) for ref in watched_refs(claim)}
    return entry


def _parse_claim(bundle: Bundle, folder: Path) -> Callable[[bytes, str], Entry]:
    def parse(data: bytes, name: str) -> Entry:
        from ouro.arc.claim_status import Claim

        try:
            claim = Claim.from_json(orjson.loads(data), source=str(folder / name))
        except orjson.JSONDecodeError as exc:
            return {"id": name[:-5], "error": f"{folder / name}: not valid JSON ({exc})"}
        except InvalidInput as exc:
            return {"id": name[:-5], "error": exc.message}
        return {"id": claim.id, "claim": claim_entry(bundle, claim)}

    return parse


def refresh_claims(bundle: Bundle, cached: Summary | None) -> Summary:
    """The claim summary as of now, reusing ``cached`` entries whose files are unchanged."""
    folder = claims_dir(bundle)
    files: dict[str, Entry] = {}
    parse = _parse_claim(bundle, folder)
    try:
        _entries(folder, "", _cached_files(cached), parse, files)
    except OSError as exc:
        return {"error": f"cannot list {folder.name}/ ({exc.strerror or exc})"}
    seen: dict[str, list[int] | None] = {}
    for key, entry in files.items():
        watch = (entry.get("claim") or {}).get("watch")
        if not watch:
            continue
        for ref, fp in watch.items():
            if ref not in seen:
                seen[ref] = stat_ref(bundle, ref)
            if seen[ref] != fp:
                # A watched file changed: re-derive this claim (its file is unchanged).
                try:
                    fresh = parse((folder / key).read_bytes(), key)
                except OSError as exc:
                    fresh = {"id": entry["id"], "error": f"cannot read ({exc.strerror})"}
                files[key] = {**fresh, "fp": entry.get("fp"), "digest": entry.get("digest")}
                break
    items: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for entry in files.values():
        if entry.get("error"):
            errors[entry["id"]] = entry["error"]
        else:
            items[entry["id"]] = entry["claim"]
    return {"files": files, "items": items, "errors": errors}


def scan_claims(bundle: Bundle) -> Summary:
    """The claim summary read from every file (no cache)."""
    return refresh_claims(bundle, None)


# --- obligations ----------------------------------------------------------------


def _obligation_summary(data: Any, inner: bool) -> dict[str, Any]:
    keep = ("what", "owedTo", "due", "status", "route", "deskLocator")
    return {"inner": inner, **{k: data.get(k) for k in keep if data.get(k) is not None}}


def _read_obligation(inner: bool) -> Callable[[bytes, str], Entry]:
    where = "obligations/inner" if inner else "obligations"

    def read(raw: bytes, name: str) -> Entry:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return {"id": name[:-5], "error": f"{where}/{name} is not valid JSON ({exc})"}
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return {"id": name[:-5], "error": f"{where}/{name} is not an obligation record"}
        status = data.get("status")
        if status not in ("open", "done", "dropped"):
            return {"id": data["id"], "error": f"{where}/{name}: unknown status {status!r}"}
        summary = _obligation_summary(data, inner) if status == "open" else None
        return {"id": data["id"], "open": summary}

    return read


def refresh_obligations(bundle: Bundle, cached: Summary | None) -> Summary:
    """The open obligations as of now, reusing ``cached`` entries whose files are unchanged."""
    files: dict[str, Entry] = {}
    old = _cached_files(cached)
    outer = obligations_dir(bundle)
    try:
        _entries(outer, "", old, _read_obligation(False), files)
    except FileNotFoundError:
        return {"error": f"{outer.name}/ is missing"}
    except OSError as exc:
        return {"error": f"cannot list {outer.name}/ ({exc.strerror or exc})"}
    try:
        _entries(inner_dir(bundle), "inner/", old, _read_obligation(True), files)
    except FileNotFoundError:
        pass  # no return obligation was ever recorded
    except OSError as exc:
        return {"error": f"cannot list {outer.name}/inner/ ({exc.strerror or exc})"}
    items: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for entry in files.values():
        if entry.get("error"):
            errors[entry["id"]] = entry["error"]
        elif entry.get("open") is not None:
            items[entry["id"]] = entry["open"]
    return {"files": files, "items": items, "errors": errors}


def scan_obligations(bundle: Bundle) -> Summary:
    """The obligation summary read from every file (no cache)."""
    return refresh_obligations(bundle, None)
