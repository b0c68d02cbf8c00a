"""Claim schema, source resolution and the derived claim status.

Every evidence receipt says how it was obtained (``provenance``):

- ``observed-by-ouro``: ouro ran the declared check itself (``claim verify``);
- ``observed-by-host``: a host hook (Claude Code / Codex ``PostToolUse``) saw
  the declared check run and reported its exit status;
- ``asserted``: typed in by someone (``claim evidence``), with ``by`` naming
  who. Receipts written before provenance existed carry no ``provenance``
  field; they keep every recorded field and read as asserted (nothing on disk
  shows ouro or a host observed them).

Only observed evidence can make a claim ``verified``. Status is never stored;
it is derived on every read from the claim file and the current content of
what the claim is about:

1. ``superseded`` when ``supersededBy`` is set;
2. ``unverifiable`` when an ``about`` source cannot be resolved now;
3. a claim without a declared check can never be observed: it reads
   ``asserted`` (or ``failed`` when someone reported it failing);
4. evidence that counts has the declared check as its command and is either
   observed, or an asserted failure (anyone may report a failure);
5. no counting evidence → ``evidence_required``;
6. the latest counting evidence failed (exit ≠ 0) → ``failed``;
7. it passed and every source it hashed still hashes the same → ``verified``;
   a source changed or vanished → ``stale_risky``.

Sources (``about`` entries and evidence sources) are resolved like this: a ref
whose first segment is a bundle area (``arc``, ``desk``, ``habits``, ``state``,
``bundle.json``) is a bundle locator; any other ref is a path relative to the
repository root: the claim's own ``repo`` when set, else ``bundle.json`` →
``repoRoot``, else the folder that contains the bundle
(``ouro.arc.checkrun.repo_root``). Both refuse absolute paths, ``..``, NUL,
backslashes and symlink escapes. A ``#id`` fragment on a ``.jsonl`` file names
one record, and only that record is hashed; other fragments hash the whole
file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ouro.arc.checkrun import repo_root
from ouro.arc.refs import BUNDLE_AREAS
from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, InvalidLocator
from ouro.models.base import Record
from ouro.models.hashing import content_hash, hash_file
from ouro.store.jsonl import read_jsonl
from ouro.store.locator import Locator

Authority = Literal["runtime", "command", "test", "git", "ci", "human", "agent"]
Provenance = Literal["observed-by-ouro", "observed-by-host", "asserted"]
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


class Part(BaseModel):
    """A nested value inside a record: camelCase on disk, no schemaVersion of its own."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data


class EvidenceSource(Part):
    ref: str
    hash: str


class Evidence(Part):
    command: str
    exit_code: int
    output_digest: str | None = None
    recorded_at: str
    authority: Authority
    sources: list[EvidenceSource] = Field(default_factory=list)
    note: str | None = None
    #: how the receipt was obtained; None = written before provenance existed
    provenance: Provenance | None = None
    #: who asserted it, or which host observed it
    by: str | None = None
    duration_ms: int | None = None
    #: the last lines of the output, redacted (never the whole output)
    tail: str | None = None
    cwd: str | None = None

    @property
    def observed(self) -> bool:
        return self.provenance in OBSERVED

    @property
    def how(self) -> str:
        return self.provenance or "asserted"


class Claim(Record):
    id: str
    text: str
    about: list[str] = Field(default_factory=list)
    authority: Authority = "agent"
    check: str | None = None
    #: the repository root for this claim's paths and check (absolute)
    repo: str | None = None
    created_at: str
    evidence: list[Evidence] = Field(default_factory=list)
    superseded_by: str | None = None
    supersedes: str | None = None


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
            root = Path(repo) if repo else repo_root(bundle)
        return loc.resolve(root), loc.fragment
    except InvalidLocator as exc:
        raise Unresolvable(exc.message) from None


def hash_ref(bundle: Bundle, ref: str, repo: str | None = None) -> str:
    path, fragment = ref_path(bundle, ref, repo)
    if fragment is not None and path.suffix == ".jsonl":
        found = [r for r in read_jsonl(path).records if r.get("id") == fragment]
        if not found:
            raise Unresolvable(f"no record {fragment!r} in {path.name}")
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


def derive_status(claim: Claim, hasher: Hasher) -> tuple[str, str]:
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
    matching = [e for e in claim.evidence if e.command == claim.check]
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


def _said(evidence: Evidence) -> str:
    """Who vouches for a receipt, in words."""
    if evidence.provenance == "observed-by-ouro":
        return "observed by ouro"
    if evidence.provenance == "observed-by-host":
        return f"observed by host {evidence.by or '?'}"
    who = evidence.by or evidence.authority
    legacy = "" if evidence.provenance else ", recorded before provenance"
    return f"asserted by {who}{legacy}"


def watched_refs(claim: Claim) -> list[str]:
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


def load_claim(path: Path) -> Claim:
    """Parse one claim file. Raises OSError, or CorruptFile naming the file."""
    try:
        data: Any = orjson.loads(path.read_bytes())
        return Claim.from_json(data, source=str(path))
    except orjson.JSONDecodeError as exc:
        raise CorruptFile(f"{path}: not valid JSON ({exc})", hint=_FIX_HINT) from None
    except InvalidInput as exc:
        raise CorruptFile(exc.message, hint=_FIX_HINT) from None


_FIX_HINT = "fix or restore the file by hand (git has its history); ouro left it untouched"
