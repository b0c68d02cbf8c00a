"""The claim status derivation, without the claim schema (no pydantic).

``derive_status`` is the one place a claim's status is computed (rules in
``ouro.arc.claim_status``'s module doc). It reads a claim through attributes
only (``ClaimLike``), so it serves both the pydantic ``Claim`` (claim commands,
which validate and write) and ``ClaimView`` (the checkpoint's claim summary on
the orient / resume / hook path, which must start without pydantic).

``claim_view(data)`` builds a ``ClaimView`` from parsed claim JSON only when
every field is exactly what the schema accepts unchanged (on-disk camelCase
keys, exact JSON types, known literals); anything else returns ``None`` and
the caller validates with the schema, which gives the same answer or the
schema's own error message. So a claim reads the same on both paths.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from ouro.arc.refs import BUNDLE_AREAS, repo_root
from ouro.bundle import Bundle
from ouro.errors import InvalidInput, InvalidLocator
from ouro.models.hashing import content_hash, hash_file
from ouro.store.jsonl import read_jsonl
from ouro.store.locator import Locator

Authority = Literal["runtime", "command", "test", "git", "ci", "human", "agent"]
Provenance = Literal["observed-by-ouro", "observed-by-host", "asserted"]
AUTHORITIES: frozenset[str] = frozenset(
    {"runtime", "command", "test", "git", "ci", "human", "agent"}
)
PROVENANCES: frozenset[str] = frozenset({"observed-by-ouro", "observed-by-host", "asserted"})
OBSERVED: frozenset[str] = frozenset({"observed-by-ouro", "observed-by-host"})
Status = Literal[
    "asserted",
    "evidence_required",
    "verified",
    "failed",
    "stale_risky",
    "unverifiable",
    "superseded",
]
STATUSES: tuple[str, ...] = (
    "asserted",
    "evidence_required",
    "verified",
    "failed",
    "stale_risky",
    "unverifiable",
    "superseded",
)


class SourceLike(Protocol):
    @property
    def ref(self) -> str: ...
    @property
    def hash(self) -> str: ...


class EvidenceLike(Protocol):
    @property
    def command(self) -> str: ...
    @property
    def exit_code(self) -> int: ...
    @property
    def recorded_at(self) -> str: ...
    @property
    def authority(self) -> str: ...
    @property
    def provenance(self) -> str | None: ...
    @property
    def by(self) -> str | None: ...
    @property
    def observed(self) -> bool: ...
    @property
    def sources(self) -> Sequence[SourceLike]: ...


class ClaimLike(Protocol):
    @property
    def about(self) -> Sequence[str]: ...
    @property
    def check(self) -> str | None: ...
    @property
    def repo(self) -> str | None: ...
    @property
    def evidence(self) -> Sequence[EvidenceLike]: ...
    @property
    def superseded_by(self) -> str | None: ...
    @property
    def check_since(self) -> str | None: ...


class SourceView(NamedTuple):
    ref: str
    hash: str


class EvidenceView(NamedTuple):
    command: str
    exit_code: int
    recorded_at: str
    authority: str
    provenance: str | None
    by: str | None
    sources: tuple[SourceView, ...]

    @property
    def observed(self) -> bool:
        return self.provenance in OBSERVED


class ClaimView(NamedTuple):
    id: str
    text: str
    about: tuple[str, ...]
    check: str | None
    repo: str | None
    evidence: tuple[EvidenceView, ...]
    superseded_by: str | None
    #: when the declared check was last changed (``claim update``): older receipts no longer count
    check_since: str | None = None


_CLAIM_KEYS = frozenset(
    {
        "schemaVersion",
        "id",
        "text",
        "about",
        "authority",
        "check",
        "repo",
        "createdAt",
        "evidence",
        "supersededBy",
        "supersedes",
        "checkSince",
        "history",
    }
)
_EVIDENCE_KEYS = frozenset(
    {
        "command",
        "exitCode",
        "outputDigest",
        "recordedAt",
        "authority",
        "sources",
        "note",
        "provenance",
        "by",
        "durationMs",
        "tail",
        "cwd",
    }
)
_INT_LIMIT = 2**63


class _Unusual(Exception):
    """The data is not in the exact on-disk form: let the schema decide."""


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key, _MISSING)
    if type(value) is not str:
        raise _Unusual(key)
    return value


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise _Unusual(key)
    return value


def _int(data: dict[str, Any], key: str, *, required: bool) -> int | None:
    value = data.get(key, _MISSING if required else None)
    if value is None and not required:
        return None
    if type(value) is not int or not -_INT_LIMIT <= value < _INT_LIMIT:
        raise _Unusual(key)
    return value


_MISSING = object()


def _evidence_view(data: Any) -> EvidenceView:
    if type(data) is not dict or not _EVIDENCE_KEYS.issuperset(data):
        raise _Unusual("evidence")
    authority = _str(data, "authority")
    provenance = _opt_str(data, "provenance")
    if authority not in AUTHORITIES or (provenance is not None and provenance not in PROVENANCES):
        raise _Unusual("evidence")
    for key in ("outputDigest", "note", "tail", "cwd"):
        _opt_str(data, key)
    _int(data, "durationMs", required=False)
    sources = data.get("sources", [])
    if type(sources) is not list:
        raise _Unusual("sources")
    views = []
    for source in sources:
        if type(source) is not dict or set(source) != {"ref", "hash"}:
            raise _Unusual("sources")
        views.append(SourceView(_str(source, "ref"), _str(source, "hash")))
    exit_code = _int(data, "exitCode", required=True)
    assert exit_code is not None
    return EvidenceView(
        command=_str(data, "command"),
        exit_code=exit_code,
        recorded_at=_str(data, "recordedAt"),
        authority=authority,
        provenance=provenance,
        by=_opt_str(data, "by"),
        sources=tuple(views),
    )


def claim_view(data: Any) -> ClaimView | None:
    """A ``ClaimView`` of parsed claim JSON, or None when the schema must judge it."""
    try:
        if type(data) is not dict or not _CLAIM_KEYS.issuperset(data):
            return None
        _int(data, "schemaVersion", required="schemaVersion" in data)
        if data.get("authority", "agent") not in AUTHORITIES:
            return None
        _str(data, "createdAt")
        _opt_str(data, "supersedes")
        about = data.get("about", [])
        evidence = data.get("evidence", [])
        if type(about) is not list or type(evidence) is not list:
            return None
        if type(data.get("history", [])) is not list:
            return None
        if any(type(a) is not str for a in about):
            return None
        return ClaimView(
            id=_str(data, "id"),
            text=_str(data, "text"),
            about=tuple(about),
            check=_opt_str(data, "check"),
            repo=_opt_str(data, "repo"),
            evidence=tuple(_evidence_view(e) for e in evidence),
            superseded_by=_opt_str(data, "supersededBy"),
            check_since=_opt_str(data, "checkSince"),
        )
    except _Unusual:
        return None


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


def derive_status(claim: ClaimLike, hasher: Hasher) -> tuple[str, str]:
    """(status, reason) for a claim as of now (rules in the module doc)."""
    if claim.superseded_by:
        return "superseded", f"superseded by {claim.superseded_by}"
    for ref in claim.about:
        try:
            hasher(ref, claim.repo)
        except Unresolvable as exc:
            return "unverifiable", f"{ref}: {exc}"
    if claim.check is None:
        failures = [e for e in claim.evidence if e.exit_code != 0]
        if claim.evidence and claim.evidence[-1].exit_code != 0:
            latest = failures[-1]
            return "failed", f"{_said(latest)} {latest.command!r} exited {latest.exit_code}"
        if claim.evidence:
            latest = claim.evidence[-1]
            return "asserted", (
                f"no check declared; {_said(latest)} {latest.command!r} exited 0 "
                f"at {latest.recorded_at}"
            )
        return "asserted", "no check declared, so nothing can observe it"
    since = claim.check_since
    # A receipt from before the check last changed ran the old check: it no longer counts.
    matching = [
        e
        for e in claim.evidence
        if e.command == claim.check and (since is None or e.recorded_at >= since)
    ]
    counting = [e for e in matching if e.observed or e.exit_code != 0]
    if not counting:
        if matching:
            latest = matching[-1]
            return "evidence_required", (
                f"only asserted evidence ({_said(latest)} it exited 0), which never verifies; "
                f"run the check: {claim.check}"
            )
        return "evidence_required", f"needs an observed run of the check: {claim.check}"
    latest = counting[-1]
    if latest.exit_code != 0:
        return "failed", (
            f"{latest.command!r} exited {latest.exit_code} at {latest.recorded_at} "
            f"({_said(latest)})"
        )
    for source in latest.sources:
        try:
            now = hasher(source.ref, claim.repo)
        except Unresolvable as exc:
            return "stale_risky", f"{source.ref} changed since the evidence: {exc}"
        if now != source.hash:
            return "stale_risky", f"{source.ref} changed since the evidence"
    return "verified", f"{latest.command!r} exited 0 at {latest.recorded_at} ({_said(latest)})"


def _said(evidence: EvidenceLike) -> str:
    """Who vouches for a receipt, in words."""
    if evidence.provenance == "observed-by-ouro":
        return "observed by ouro"
    if evidence.provenance == "observed-by-host":
        return f"observed by host {evidence.by or '?'}"
    who = evidence.by or evidence.authority
    legacy = "" if evidence.provenance else ", recorded before provenance"
    return f"asserted by {who}{legacy}"


def watched_refs(claim: ClaimLike) -> list[str]:
    """Every ref whose change can change a claim's derived status.

    For a claim with its own ``repo``, repository refs come back absolute so
    a stat of them (``ouro.arc.refs.stat_ref``) looks in the right folder.
    """
    refs = list(claim.about)
    for evidence in claim.evidence:
        refs.extend(s.ref for s in evidence.sources)
    if claim.repo:
        refs = [
            r
            if r.split("/", 1)[0].partition("#")[0] in BUNDLE_AREAS
            else os.path.join(claim.repo, r)
            for r in refs
        ]
    return sorted(set(refs))
