"""Claim schema, source resolution and the derived claim status.

Status is never stored; it is derived on every read from the claim file and
the current content of what the claim is about:

1. ``superseded`` when ``supersededBy`` is set;
2. ``unverifiable`` when an ``about`` source cannot be resolved now;
3. evidence that counts: its command equals the declared ``check`` (when one
   is declared), and it is a failure, or a success of non-``agent`` authority
   (an agent saying "it passed" is never verification);
4. no counting evidence → ``evidence_required`` if a check is declared, else
   ``asserted``;
5. the latest counting evidence failed (exit ≠ 0) → ``failed``;
6. it succeeded and every source it hashed still hashes the same → ``verified``;
   a source changed or vanished → ``stale_risky``.

Sources (``about`` entries and evidence sources) are resolved like this: a ref
whose first segment is a bundle area (``arc``, ``desk``, ``habits``, ``state``,
``bundle.json``) is a bundle locator; any other ref is a path relative to the
folder that contains the bundle (the repository the agent works in). Both
refuse absolute paths, ``..``, NUL, backslashes and symlink escapes. A
``#id`` fragment on a ``.jsonl`` file names one record, and only that record is
hashed; other fragments hash the whole file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ouro.arc.refs import BUNDLE_AREAS
from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, InvalidLocator
from ouro.models.base import Record
from ouro.models.hashing import content_hash, hash_file
from ouro.store.jsonl import read_jsonl
from ouro.store.locator import Locator

Authority = Literal["runtime", "command", "test", "git", "ci", "human", "agent"]
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


class Claim(Record):
    id: str
    text: str
    about: list[str] = Field(default_factory=list)
    authority: Authority = "agent"
    check: str | None = None
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


def ref_path(bundle: Bundle, ref: str) -> tuple[Path, str | None]:
    """The file a ref names (may not exist) and its fragment. Raises Unresolvable."""
    try:
        loc = Locator.parse(ref)
        root = bundle.root if loc.path.split("/", 1)[0] in BUNDLE_AREAS else bundle.root.parent
        return loc.resolve(root), loc.fragment
    except InvalidLocator as exc:
        raise Unresolvable(exc.message) from None


def hash_ref(bundle: Bundle, ref: str) -> str:
    path, fragment = ref_path(bundle, ref)
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


Hasher = Callable[[str], str]


def memo_hasher(bundle: Bundle) -> Hasher:
    cache: dict[str, str | Unresolvable] = {}

    def hasher(ref: str) -> str:
        if ref not in cache:
            try:
                cache[ref] = hash_ref(bundle, ref)
            except Unresolvable as exc:
                cache[ref] = exc
        value = cache[ref]
        if isinstance(value, Unresolvable):
            raise value
        return value

    return hasher


def derive_status(claim: Claim, hasher: Hasher) -> tuple[str, str]:
    """(status, reason) for a claim as of now."""
    if claim.superseded_by:
        return "superseded", f"superseded by {claim.superseded_by}"
    for ref in claim.about:
        try:
            hasher(ref)
        except Unresolvable as exc:
            return "unverifiable", f"{ref}: {exc}"
    counting = [
        e
        for e in claim.evidence
        if (claim.check is None or e.command == claim.check)
        and (e.exit_code != 0 or e.authority != "agent")
    ]
    if not counting:
        if claim.check is not None:
            return "evidence_required", f"needs a receipt of the check: {claim.check}"
        if claim.evidence:
            return "asserted", "only agent-reported evidence, which never verifies"
        return "asserted", "no evidence yet"
    latest = counting[-1]
    if latest.exit_code != 0:
        return "failed", f"{latest.command!r} exited {latest.exit_code} at {latest.recorded_at}"
    for source in latest.sources:
        try:
            now = hasher(source.ref)
        except Unresolvable as exc:
            return "stale_risky", f"{source.ref} changed since the evidence: {exc}"
        if now != source.hash:
            return "stale_risky", f"{source.ref} changed since the evidence"
    return "verified", f"{latest.command!r} exited 0 at {latest.recorded_at} ({latest.authority})"


def watched_refs(claim: Claim) -> list[str]:
    """Every ref whose change can change a claim's derived status."""
    refs = list(claim.about)
    for evidence in claim.evidence:
        refs.extend(s.ref for s in evidence.sources)
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
