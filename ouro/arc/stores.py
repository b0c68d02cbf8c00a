"""Cached summaries of the claim and obligation stores, kept in the checkpoint.

No cache outlives its source. Each summary keeps, per store file, a
fingerprint (size, mtime_ns, ctime_ns, inode) beside what was read from
it. Every read lists the folders and stats every file: when every name, ctime
and inode equals the cached columns (``cols``: compared whole, in C, the
steady state of a hook on every prompt), the summary is the cached one;
otherwise a file whose fingerprint equals the cached one is not read again
and any other (new, replaced, edited in place, made unreadable or readable
again — ``chmod`` changes the ctime) is read again, alone. A file that vanished drops out. So an in-place
edit is seen on the next read, and an unreadable or malformed file is reported
per file (``errors``), never folded into "none".

Each line also keeps a digest of the file's bytes. A file changed within
``ouro.store.stamp.RACY_NS`` of the moment it was read gets no fingerprint (``-``): file
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

Summary shape (both stores): ``{"files": {name: "<fp> <digest> <id>"},
"items": {id: …}, "errors": {id: reason}, "cols": {prefix: [names, ctimes,
inodes] or None}}`` — one short string per file (``fp`` =
``size:mtime_ns:ctime_ns:inode``, ``-`` when not trusted), and per folder
(``prefix``: ``""``, or ``inner/`` for return obligations) its files in listing
order with their ctimes and inodes, None when a line is not trusted — or
``{"error": reason}`` when the
folder itself cannot be listed (unknown, never empty). Obligation file names
under ``inner/`` are keyed ``inner/<name>``; a closed obligation has a file
line and no item; a file the obligation reader refuses is an error keyed by
its file name (``inner/<name>`` for a return obligation).

No store file or folder is read through a symlink that leads outside the
bundle (``ouro.store.guard.Inside``): each folder is resolved once per read; a file
is looked at only when the listing says it is a symlink. Such a file is never
stat'ed nor opened: its line is untrusted and it is an error naming its
bundle-relative path (unknown, never absent); such a folder is
``{"error": reason}``.

A claim file that must be read goes through the one claim reader
(``ouro.arc.claim_status.claim_from_json``: no schema library, so orient,
resume and host hooks start without pydantic) and its status is derived by the
same ``derive_status`` the claim commands use; a file it refuses is reported
with the field it names.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from pathlib import Path

from ouro.arc.paths import claims_dir, inner_dir, obligations_dir
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.bounded import file_bytes
from ouro.store.guard import Inside, outside

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

    Summary = dict[str, Any]
    #: What parsing one file gives: (id, item or None, error or None).
    Parsed = tuple[str, Any, str | None]

try:  # hashlib's own blake2b, without hashlib's OpenSSL start-up (~2 ms on orient's path)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without _blake2
    from hashlib import blake2b

if TYPE_CHECKING:
    from ouro.arc.claim_status import Claim

TEXT_LIMIT = 200
UNTRUSTED = stamps.UNTRUSTED


def _digest(data: bytes) -> str:
    return blake2b(data, digest_size=8).hexdigest()


def fp_text(st: os.stat_result) -> str:
    return stamps.text_of(st)


def persistable(summary: Summary) -> Summary:
    """What ``latest.json`` keeps of a summary (all of it: it is already compact)."""
    return summary


def _part(cached: Summary | None, key: str) -> dict[str, Any]:
    value = cached.get(key) if isinstance(cached, dict) and not cached.get("error") else None
    return value if isinstance(value, dict) else {}


#: a listed entry's name, and a stat's ctime and inode: the columns ``_unchanged``
#: compares (each list whole, in C)
_NAME = operator.attrgetter("name")
_CTIME = operator.attrgetter("st_ctime_ns")
_INO = operator.attrgetter("st_ino")


def _unchanged(folders: tuple[tuple[Path, str], ...], cached: Summary | None) -> Summary | None:
    """``cached`` itself when ``folders`` hold exactly its files, every stamp unchanged.

    The common read (a hook on every prompt): nothing moved since the summary was
    written. The summary's ``cols`` hold, per folder, its store files' names in
    listing order with the ctime and inode of each as they were read; a folder
    is listed again and each file stat'ed, and the three columns are compared
    whole. Any write, truncate, ``utime`` or ``chmod`` sets a file's ctime to
    the current time, past the ctime of a file read at least ``RACY_NS`` after
    it last changed (only those get columns), and a file put in another's
    place has its own inode: a changed file never keeps both (the rule of
    ``ouro.desk.heads``). None as soon as a name, a ctime or an inode differs,
    a file cannot be stat'ed, a folder cannot be listed or has no columns (a
    file read within the racy window, unreadable or outside the bundle):
    ``_scan`` then settles each file. A missing folder holds no files. No
    symlink check here: ``_scan`` never gives columns to a folder holding a
    link that leads outside, and a new link moves the folder's listing.
    """
    cols = cached.get("cols") if cached is not None else None
    if type(cols) is not dict:
        return None
    for folder, prefix in folders:
        col = cols.get(prefix)
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            if col is None or col == [[], [], []]:
                continue
            return None
        except OSError:
            return None
        if type(col) is not list or len(col) != 3:
            os.close(fd)
            return None
        try:
            with os.scandir(fd) as listing:
                entries = [e for e in listing if e.name.endswith(".json") and e.name[0] != "."]
            if list(map(_NAME, entries)) != col[0]:
                return None
            stats = list(map(os.DirEntry.stat, entries))
        except OSError:
            return None
        finally:
            os.close(fd)
        if list(map(_CTIME, stats)) != col[1] or list(map(_INO, stats)) != col[2]:
            return None
    return cached


def _scan(
    folder: Path,
    prefix: str,
    cached: Summary | None,
    parse: Callable[[bytes, str], Parsed],
    out: Summary,
    inside: Inside,
) -> None:
    """Add a line per JSON file in ``folder`` to ``out`` (and its item or error).

    One pass over the listing: each entry is stat'ed and settled as it comes
    (no list of a thousand stat results held at once). Raises OSError when the
    folder cannot be listed. A symlink that leads outside the bundle is never
    stat'ed nor opened: its line is untrusted and its item an error (unknown).
    """
    old_files, old_items, old_errors = (_part(cached, k) for k in ("files", "items", "errors"))
    now = time.time_ns()
    base = os.fspath(folder)
    # listed through a descriptor: each entry's stat is then relative to the
    # folder (``fstatat``), not a walk of its whole path again
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        listing = (fd, base, prefix, inside)
        _scan_listing(listing, (old_files, old_items, old_errors), parse, out, now)
    finally:
        os.close(fd)


def _scan_listing(
    where: tuple[int, str, str, Inside],
    old: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
    parse: Callable[[bytes, str], Parsed],
    out: Summary,
    now: int,
) -> None:
    fd, base, prefix, inside = where
    old_files, old_items, old_errors = old
    files, items, errors = out["files"], out["items"], out["errors"]
    # the columns ``_unchanged`` compares next time: every file that got a line,
    # in listing order, with the stat its line was settled on (None: a line is
    # untrusted, so the next read settles each file again)
    cols: list[list[Any]] | None = [[], [], []]
    with os.scandir(fd) as listing:
        for dir_entry in listing:
            name = dir_entry.name
            if not name.endswith(".json") or name.startswith("."):
                continue
            key = prefix + name
            if dir_entry.is_symlink() and not inside.entry(dir_entry, base):
                ident = prefix + name[:-5]  # as the obligation reader keys a refused file
                files[key] = f"{UNTRUSTED} - {ident}"
                errors[ident] = outside(inside.rel(os.path.join(base, name)))
                cols = None
                continue
            try:
                st = dir_entry.stat()
            except FileNotFoundError:
                continue  # removed between the listing and the stat
            except OSError:
                files[key] = f"{UNTRUSTED} - {name[:-5]}"
                errors[name[:-5]] = f"cannot stat {key}"
                cols = None
                continue
            # the line's stamp field as it would start the line (``fp_text`` and its
            # space, inline: this runs once per store file on every hook run)
            head = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino} "
            line = old_files.get(key)
            reuse: str | None
            if type(line) is str and line.startswith(head):
                reuse = line  # unchanged since it was read (an untrusted line never matches)
            else:
                fp = head[:-1] if not stamps.racy(st, now) else UNTRUSTED
                reuse = _reread(os.path.join(base, name), key, line, fp, parse, out)
            if reuse is not None:
                files[key] = reuse
                item_id = reuse.split(" ", 2)[2]
                if item_id in old_errors:
                    errors[item_id] = old_errors[item_id]
                elif item_id in old_items:
                    items[item_id] = old_items[item_id]
            if cols is not None and files[key][0] != UNTRUSTED:
                cols[0].append(name)
                cols[1].append(st.st_ctime_ns)
                cols[2].append(st.st_ino)
            else:
                cols = None
    out["cols"][prefix] = cols


def _reread(
    path: str,
    key: str,
    line: Any,
    fp: str,
    parse: Callable[[bytes, str], Parsed],
    out: Summary,
) -> str | None:
    """A file whose fingerprint moved or was never trusted: digest it, parse it if it changed.

    Returns the old line (with the new fingerprint) when the bytes are the same,
    else None after recording the freshly parsed file in ``out``.
    """
    name = key.rpartition("/")[2]
    try:
        data = file_bytes(path)  # a FIFO, a file past DOC_LIMIT: reported, never a hang
    except OSError as exc:
        out["files"][key] = f"{UNTRUSTED} - {name[:-5]}"
        out["errors"][name[:-5]] = f"cannot read {key} ({exc.strerror})"
        return None
    digest = _digest(data)
    if isinstance(line, str):
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] == digest:
            return f"{fp} {digest} {parts[2]}"
    item_id, item, error = parse(data, name)
    out["files"][key] = f"{fp} {digest} {item_id}"
    if error is not None:
        out["errors"][item_id] = error
    elif item is not None:
        out["items"][item_id] = item
    return None


def _empty() -> Summary:
    return {"files": {}, "items": {}, "errors": {}, "cols": {}}


def _roots(bundle: Bundle) -> tuple[str, str]:
    """The bundle's and its repository's roots, which watched refs are relative to.

    ``ouro.proof.refs`` is imported here, when a claim watches a file: a read of
    claims that watch nothing (a host hook's usual case) neither imports it nor
    looks for the repository."""
    from ouro.proof.refs import repo_root

    return (os.fspath(bundle.root), repo_root(bundle))


def _stat_ref(roots: tuple[str, str], ref: str) -> str | None:
    """``stat_ref`` as text, with the bundle and repository roots already resolved."""
    from ouro.proof.refs import BUNDLE_AREAS

    path = ref.partition("#")[0]
    root = roots[0] if path.split("/", 1)[0] in BUNDLE_AREAS else roots[1]
    try:
        return fp_text(os.stat(os.path.join(root, path)))
    except (OSError, ValueError):
        return None


# --- claims -------------------------------------------------------------------


def claim_entry(bundle: Bundle, claim: Claim) -> dict[str, Any]:
    from ouro.arc.claim_status import derive_status, watched_refs
    from ouro.proof.refs import memo_hasher

    status, reason = derive_status(claim, memo_hasher(bundle))
    text = " ".join(claim.text.split())[:TEXT_LIMIT]
    entry: dict[str, Any] = {"status": status, "reason": reason, "text": text}
    refs = watched_refs(claim)
    roots = _roots(bundle) if refs else ("", "")
    entry["watch"] = {ref: _stat_ref(roots, ref) for ref in refs}
    return entry


def _parse_claim(bundle: Bundle, folder: Path) -> Callable[[bytes, str], Parsed]:
    def parse(data: bytes, name: str) -> Parsed:
        from ouro.arc.claim_status import claim_from_json

        try:
            raw = jsonio.loads(data)
        except jsonio.JSONDecodeError as exc:
            return name[:-5], None, f"{folder / name}: not valid JSON ({exc})"
        try:
            claim = claim_from_json(raw, source=str(folder / name))
        except InvalidInput as exc:
            return name[:-5], None, exc.message
        return claim.id, claim_entry(bundle, claim), None

    return parse


def refresh_claims(bundle: Bundle, cached: Summary | None) -> Summary:
    """The claim summary as of now, reusing ``cached`` entries whose files are unchanged."""
    folder = claims_dir(bundle)
    inside = Inside(bundle.root)
    if inside.folder(folder) is None:  # once per read: the listing's entries are then checked
        return {"error": outside(inside.rel(folder))}
    parse = _parse_claim(bundle, folder)
    out = _unchanged(((folder, ""),), cached)
    if out is None:
        out = _empty()
        try:
            _scan(folder, "", cached, parse, out, inside)
        except OSError as exc:
            return {"error": f"cannot list {folder.name}/ ({exc.strerror or exc})"}
    # the claims whose watched files changed: re-derived, alone (their own files are not)
    seen: dict[str, str | None] = {}
    roots: tuple[str, str] | None = None  # resolved once per read, when first needed
    stale: list[str] = []
    for claim_id, item in out["items"].items():
        watch = item.get("watch")
        if not watch or type(watch) is not dict:
            continue
        for ref, fp in watch.items():
            if ref not in seen:
                roots = roots or _roots(bundle)
                seen[ref] = _stat_ref(roots, ref)
            if seen[ref] != fp:
                stale.append(claim_id)
                break
    if not stale:
        return out
    out = {key: dict(part) for key, part in out.items()}  # ``cached`` is the basis's
    by_id = {line.split(" ", 2)[2]: k for k, line in out["files"].items()}
    for claim_id in stale:
        key = by_id.get(claim_id, f"{claim_id}.json")
        del out["items"][claim_id]
        try:
            data = file_bytes(folder / key)
        except OSError as exc:
            out["errors"][claim_id] = f"cannot read {key} ({exc.strerror})"
            continue
        new_id, new_item, error = parse(data, key)
        if error is not None:
            out["errors"][new_id] = error
        else:
            out["items"][new_id] = new_item
    return out


def scan_claims(bundle: Bundle) -> Summary:
    """The claim summary read from every file (no cache)."""
    return refresh_claims(bundle, None)


# --- obligations ----------------------------------------------------------------


def _obligation_summary(data: dict[str, Any], inner: bool) -> dict[str, Any]:
    keep = ("what", "owedTo", "due", "status", "route", "deskLocator")
    return {"inner": inner, **{k: data[k] for k in keep if data.get(k) is not None}}


def _read_obligation(inner: bool) -> Callable[[bytes, str], Parsed]:
    where = "obligations/inner" if inner else "obligations"

    def read(raw: bytes, name: str) -> Parsed:
        from ouro.arc.obligations import obligation_from_json

        key = ("inner/" if inner else "") + name[:-5]  # an unreadable one stays findable
        try:
            ob = obligation_from_json(jsonio.loads(raw), source=f"{where}/{name}")
        except jsonio.JSONDecodeError as exc:
            return key, None, f"{where}/{name} is not valid JSON ({exc})"
        except InvalidInput as exc:
            return key, None, exc.message
        summary = _obligation_summary(ob.to_json(), inner) if ob.status == "open" else None
        return ob.id, summary, None

    return read


def refresh_obligations(bundle: Bundle, cached: Summary | None) -> Summary:
    """The open obligations as of now, reusing ``cached`` entries whose files are unchanged."""
    outer = obligations_dir(bundle)
    inside = Inside(bundle.root)
    for folder in (outer, inner_dir(bundle)):  # once per read, as for claims
        if inside.folder(folder) is None:
            return {"error": outside(inside.rel(folder))}
    same = _unchanged(((outer, ""), (inner_dir(bundle), "inner/")), cached)
    if same is not None:
        return same
    out = _empty()
    try:
        _scan(outer, "", cached, _read_obligation(False), out, inside)
    except FileNotFoundError:
        return {"error": f"{outer.name}/ is missing"}
    except OSError as exc:
        return {"error": f"cannot list {outer.name}/ ({exc.strerror or exc})"}
    try:
        _scan(inner_dir(bundle), "inner/", cached, _read_obligation(True), out, inside)
    except FileNotFoundError:
        pass  # no return obligation was ever recorded
    except OSError as exc:
        return {"error": f"cannot list {outer.name}/inner/ ({exc.strerror or exc})"}
    return out


def scan_obligations(bundle: Bundle) -> Summary:
    """The obligation summary read from every file (no cache)."""
    return refresh_obligations(bundle, None)
