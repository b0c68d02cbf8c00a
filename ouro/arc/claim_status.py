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
what the claim is about (``ouro.arc.claim_derive.derive_status``, free of
pydantic and re-exported here, is the one implementation of these rules):

1. ``superseded`` when ``supersededBy`` is set;
2. ``unverifiable`` when an ``about`` source cannot be resolved now;
3. a claim without a declared check can never be observed: it reads
   ``asserted`` (or ``failed`` when someone reported it failing);
4. evidence that counts has the declared check as its command, was recorded
   no earlier than the last change of the check or ``about`` (``checkSince``,
   set by ``claim update``), and is either observed, or an asserted failure (anyone may
   report a failure);
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

from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ouro.arc.claim_derive import (
    OBSERVED,
    STATUSES,
    Authority,
    Hasher,
    Provenance,
    Status,
    Unresolvable,
    check_ref,
    derive_status,
    hash_ref,
    memo_hasher,
    ref_path,
    watched_refs,
)
from ouro.errors import CorruptFile, InvalidInput
from ouro.models.base import Record

__all__ = [
    "OBSERVED",
    "STATUSES",
    "Authority",
    "Claim",
    "ClaimChange",
    "Evidence",
    "EvidenceSource",
    "Hasher",
    "Part",
    "Provenance",
    "Status",
    "Unresolvable",
    "check_ref",
    "derive_status",
    "hash_ref",
    "load_claim",
    "memo_hasher",
    "ref_path",
    "watched_refs",
]


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


class ClaimChange(Part):
    """One ``claim update``: when, which fields changed, and what they held before."""

    at: str
    changed: list[Literal["text", "about", "check"]]
    #: the earlier value of each changed field (``check`` may have been null)
    before: dict[str, str | list[str] | None]


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
    #: when the check or ``about`` last changed: receipts recorded before it no longer count
    check_since: str | None = None
    #: every ``claim update``, oldest first (the claim's earlier wording is kept here)
    history: list[ClaimChange] = Field(default_factory=list)


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
