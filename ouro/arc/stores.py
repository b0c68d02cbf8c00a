"""Cached summaries of the claim and obligation stores, kept in the checkpoint.

Reading every claim file costs milliseconds per thousand files, so the
checkpoint keeps a summary of each store keyed on its folder's mtime. Every
ouro write replaces a file by rename, which changes the folder's mtime, so an
unchanged mtime means no file was added, removed or replaced. On a mismatch
the store is read whole again.

Claim status also depends on the files a claim is about. A verified claim's
entry keeps a (size, mtime, ctime, inode) fingerprint of each watched file; if
any differs now, that claim alone is re-derived with real content hashes. So
"verified" is exact on every read. The sub-status of a claim that is not
verified (asserted vs unverifiable, say) may lag until the next write or
``ouro claim list``, which always derives every claim from scratch.

The claim schema (``ouro.arc.claim_status``, pydantic) is imported only when a
claim file must be read; the common path, an unchanged store, needs only
``stat_ref``, so host hooks start without pydantic.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ouro.arc.paths import claims_dir, inner_dir, obligations_dir
from ouro.arc.refs import stat_ref
from ouro.bundle import Bundle
from ouro.errors import CorruptFile

if TYPE_CHECKING:
    from ouro.arc.claim_status import Claim

Summary = dict[str, Any]
TEXT_LIMIT = 200


def _dir_mtime(folder: Path) -> int:
    return os.stat(folder).st_mtime_ns


def _json_files(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))


def claim_entry(bundle: Bundle, claim: Claim) -> dict[str, Any]:
    from ouro.arc.claim_status import derive_status, memo_hasher, watched_refs

    status, reason = derive_status(claim, memo_hasher(bundle))
    text = " ".join(claim.text.split())[:TEXT_LIMIT]
    entry: dict[str, Any] = {"status": status, "reason": reason, "text": text}
    if status == "verified":
        entry["watch"] = {ref: stat_ref(bundle, ref) for ref in watched_refs(claim)}
    return entry


def scan_claims(bundle: Bundle) -> Summary:
    from ouro.arc.claim_status import load_claim

    folder = claims_dir(bundle)
    try:
        mtime = _dir_mtime(folder)
        names = _json_files(folder)
    except OSError as exc:
        return {"error": f"cannot list {folder.name}/ ({exc.strerror or exc})"}
    items: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in names:
        try:
            claim = load_claim(folder / name)
        except CorruptFile as exc:
            errors[name[:-5]] = exc.message
            continue
        except OSError as exc:
            errors[name[:-5]] = f"cannot read ({exc.strerror})"
            continue
        items[claim.id] = claim_entry(bundle, claim)
    return {"dirMtimeNs": mtime, "items": items, "errors": errors}


def refresh_claims(bundle: Bundle, cached: Summary | None) -> Summary:
    """The claim summary as of now, reusing ``cached`` where still valid."""
    folder = claims_dir(bundle)
    try:
        mtime = _dir_mtime(folder)
    except OSError:
        return scan_claims(bundle)
    if not cached or cached.get("error") or cached.get("dirMtimeNs") != mtime:
        return scan_claims(bundle)
    items = dict(cached["items"])
    seen: dict[str, list[int] | None] = {}
    for claim_id, entry in cached["items"].items():
        watch = entry.get("watch")
        if not watch:
            continue
        for ref, fp in watch.items():
            if ref not in seen:
                seen[ref] = stat_ref(bundle, ref)
            if seen[ref] != fp:
                break
        else:
            continue
        from ouro.arc.claim_status import load_claim

        try:
            items[claim_id] = claim_entry(bundle, load_claim(folder / f"{claim_id}.json"))
        except (CorruptFile, OSError):
            return scan_claims(bundle)
    return {**cached, "items": items}


def _obligation_summary(data: Any, inner: bool) -> dict[str, Any]:
    keep = ("what", "owedTo", "due", "status", "route", "deskLocator")
    return {"inner": inner, **{k: data.get(k) for k in keep if data.get(k) is not None}}


def scan_obligations(bundle: Bundle) -> Summary:
    items: dict[str, Any] = {}
    errors: dict[str, str] = {}
    mtimes: list[int] = []
    for folder, inner in ((obligations_dir(bundle), False), (inner_dir(bundle), True)):
        try:
            mtimes.append(_dir_mtime(folder))
            names = _json_files(folder)
        except FileNotFoundError:
            if inner:
                mtimes.append(0)
                continue
            return {"error": f"{folder.name}/ is missing"}
        except OSError as exc:
            return {"error": f"cannot list {folder.name}/ ({exc.strerror or exc})"}
        for name in names:
            try:
                data = orjson.loads((folder / name).read_bytes())
            except (OSError, orjson.JSONDecodeError) as exc:
                errors[name[:-5]] = f"cannot read {folder.name}/{name} ({exc})"
                continue
            if not isinstance(data, dict) or not isinstance(data.get("id"), str):
                errors[name[:-5]] = f"{folder.name}/{name} is not an obligation record"
                continue
            if data.get("status") == "open":
                items[data["id"]] = _obligation_summary(data, inner)
    return {"dirMtimeNs": mtimes, "items": items, "errors": errors}


def refresh_obligations(bundle: Bundle, cached: Summary | None) -> Summary:
    try:
        outer = _dir_mtime(obligations_dir(bundle))
        inner_path = inner_dir(bundle)
        inner = _dir_mtime(inner_path) if inner_path.exists() else 0
    except OSError:
        return scan_obligations(bundle)
    if cached and not cached.get("error") and cached.get("dirMtimeNs") == [outer, inner]:
        return cached
    return scan_obligations(bundle)
