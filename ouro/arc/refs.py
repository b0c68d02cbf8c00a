"""Source refs (a claim's or a task's ``about``, evidence sources): where each
lives, its content hash, and a cheap stat fingerprint of it.

A ref whose first segment is a bundle area (``BUNDLE_AREAS``) is a bundle
locator; any other is a path relative to the repository root: the claim's own
``repo`` when set, else ``bundle.json`` → ``repoRoot``, else the folder that
contains the bundle (``repo_root``). Absolute paths, ``..``, NUL, backslashes
and symlink escapes are refused (``check_ref`` at write time, ``ref_path`` on
read). A ``#id`` fragment on a ``.jsonl`` file names one record, and only that
record is hashed; other fragments hash the whole file.

No schema library here: the checkpoint's claim summary (``ouro.arc.stores``)
re-checks verified claims with ``stat_ref`` on every fold, including the one
each host hook triggers, and must not pay for pydantic at start-up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, InvalidLocator, OuroError
from ouro.models.meta import META_LIMIT
from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.bounded import read_bytes
from ouro.store.locator import Locator

#: A ref whose first segment is one of these is a bundle locator; any other is
#: a path relative to the repository root (``repo_root``).
BUNDLE_AREAS = frozenset({"arc", "desk", "habits", "state", "bundle.json"})

_ROOTS: dict[str, tuple[int, str]] = {}


def repo_root(bundle: Bundle) -> str:
    """The repository root: ``bundle.json`` → ``repoRoot`` (relative to the
    bundle folder, or absolute), else the folder that contains the bundle.
    Cached per process until bundle.json changes (one stat per call)."""
    meta = str(bundle.meta_path)
    try:
        mtime = os.stat(meta).st_mtime_ns
    except OSError:
        return str(bundle.root.parent)
    cached = _ROOTS.get(meta)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    root = str(bundle.root.parent)
    try:
        data = jsonio.loads(read_bytes(meta, limit=META_LIMIT, what="bundle.json"))
        raw = data.get("repoRoot") if isinstance(data, dict) else None
        if isinstance(raw, str) and raw.strip():
            root = os.path.normpath(os.path.join(bundle.root, raw))
    except (OuroError, jsonio.JSONDecodeError):
        pass  # an unreadable bundle.json is reported by whoever opens the bundle
    _ROOTS[meta] = (mtime, root)
    return root


def confined_ref(bundle: Bundle, ref: str, *, field: str, repo: str | None = None) -> str:
    """``ref`` when it stays inside its root once every symlink is followed; else
    ``InvalidInput`` naming the field. The root is the bundle for a bundle locator,
    else ``repo`` (a claim's own) or the repository root (``repo_root``). Refs are
    checked at write time (claims' and tasks' ``about``); a ref that is fine then
    and escapes later reads as unverifiable (``ref_path``)."""
    loc = Locator.parse(ref)  # absolute, '..', NUL, backslash: refused by the caller first
    in_bundle = loc.path.split("/", 1)[0] in BUNDLE_AREAS
    root = str(bundle.root) if in_bundle else (repo or repo_root(bundle))
    try:
        loc.resolve(Path(root))
    except InvalidLocator:
        where = "the bundle" if in_bundle else f"the repository root {root}"
        raise InvalidInput(
            f"{field}: {ref!r} resolves outside {where} (through a symlink)",
            hint="name a file inside it; ouro never follows a symlink out of the repository",
        ) from None
    return ref


def stat_ref(bundle: Bundle, ref: str) -> list[int] | None:
    """A cheap change fingerprint (size, mtime, ctime, inode), or None if gone.

    No symlink-escape check here (that costs a realpath per ref): refs were
    validated when written, and any change sends the claim through the full
    derivation, which resolves strictly.
    """
    path = ref.partition("#")[0]
    root = bundle.root if path.split("/", 1)[0] in BUNDLE_AREAS else repo_root(bundle)
    try:
        st = os.stat(os.path.join(root, path))
    except (OSError, ValueError):
        return None
    return list(stamps.of(st))


class Unresolvable(Exception):
    """A source ref that cannot be resolved to content right now."""


def check_ref(ref: str, *, field: str) -> str:
    """Refuse a malformed ref at write time (NUL, absolute, '..', backslash)."""
    if "\x00" in ref:
        raise InvalidInput(f"{field}: {ref!r} contains a NUL byte", hint="pass a plain path")
    try:
        Locator.parse(ref)
    except InvalidLocator as exc:
        raise InvalidInput(f"{field}: {exc.message}", hint=exc.hint) from None
    return ref


def ref_path(bundle: Bundle, ref: str, repo: str | None = None) -> tuple[Path, str | None]:
    """The file a ref names (may not exist) and its fragment. Raises Unresolvable."""
    try:
        loc = Locator.parse(ref)
        if loc.path.split("/", 1)[0] in BUNDLE_AREAS:
            root = bundle.root
        else:
            root = Path(repo) if repo else Path(repo_root(bundle))
        return loc.resolve(root), loc.fragment
    except InvalidLocator as exc:
        raise Unresolvable(exc.message) from None


def hash_ref(bundle: Bundle, ref: str, repo: str | None = None) -> str:
    # imported here: orient reads refs' stat fingerprints and hashes only on a change
    from ouro.models.hashing import content_hash, hash_file
    from ouro.store.jsonl import read_jsonl

    path, fragment = ref_path(bundle, ref, repo)
    if fragment is not None and path.suffix == ".jsonl":
        found = [r for r in read_jsonl(path).records if r.get("id") == fragment]
        if not found:
            raise Unresolvable(f"no record {fragment!r} in {path.name}")
        import orjson  # the canonical form evidence hashes were taken of

        return content_hash(orjson.dumps(found[-1], option=orjson.OPT_SORT_KEYS))
    try:
        return hash_file(path)
    except FileNotFoundError:
        raise Unresolvable("no such file") from None
    except IsADirectoryError:
        raise Unresolvable("is a folder; a claim is about files") from None
    except OSError as exc:
        raise Unresolvable(f"cannot read ({exc.strerror})") from None


Hasher = Callable[..., str]


def memo_hasher(bundle: Bundle) -> Hasher:
    """``hasher(ref, repo=None)``: ``hash_ref`` memoised for one read."""
    cache: dict[tuple[str, str | None], str | Unresolvable] = {}

    def hasher(ref: str, repo: str | None = None) -> str:
        key = (ref, repo)
        if key not in cache:
            try:
                cache[key] = hash_ref(bundle, ref, repo)
            except Unresolvable as exc:
                cache[key] = exc
        value = cache[key]
        if isinstance(value, Unresolvable):
            raise value
        return value

    return hasher
