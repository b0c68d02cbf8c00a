"""A claim as its file holds it, the one reader of claim files, and the derived status.

``arc/claims/<claimId>.json`` is read by ``claim_from_json`` (through
``load_claim``) and nothing else: the claim commands, ``claim list``, and the
checkpoint's claim summary on the orient / resume / hook path, which must start
without a schema library. The reader takes the on-disk form exactly: camelCase
keys, exact JSON types, known literals; anything else is refused with an
``InvalidInput`` naming the field (``load_claim``: ``CorruptFile`` naming the
file). ``Claim.to_json`` writes that form back (``None`` fields left out).

Every evidence receipt says how it was obtained (``provenance``):

- ``observed-by-ouro``: ouro ran the declared check itself (``claim verify``);
- ``observed-by-host``: a host hook (Claude Code / Codex ``PostToolUse``) saw
  the declared check run and reported its exit status;
- ``asserted``: typed in by someone (``claim evidence``), with ``by`` naming
  who. Receipts written before provenance existed carry no ``provenance``
  field; they keep every recorded field and read as asserted (nothing on disk
  shows ouro or a host observed them).

Only observed evidence can make a claim ``verified``. Status is never stored;
``derive_status`` computes it on every read from the claim and the current
content of what the claim is about (sources resolve as ``ouro.proof.refs`` says):

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
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ouro.errors import CorruptFile, InvalidInput
from ouro.models.fields import Fields
from ouro.proof.refs import BUNDLE_AREAS, Hasher, Unresolvable
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

Authority = Literal["runtime", "command", "test", "git", "ci", "human", "agent"]
Provenance = Literal["observed-by-ouro", "observed-by-host", "asserted"]
AUTHORITIES: tuple[str, ...] = ("runtime", "command", "test", "git", "ci", "human", "agent")
PROVENANCES: tuple[str, ...] = ("observed-by-ouro", "observed-by-host", "asserted")
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


class EvidenceSource(NamedTuple):
    ref: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "hash": self.hash}


class Evidence(NamedTuple):
    command: str
    exit_code: int
    recorded_at: str
    authority: str
    sources: tuple[EvidenceSource, ...] = ()
    output_digest: str | None = None
    note: str | None = None
    #: how the receipt was obtained; None = written before provenance existed
    provenance: str | None = None
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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": self.command, "exitCode": self.exit_code}
        if self.output_digest is not None:
            out["outputDigest"] = self.output_digest
        out["recordedAt"] = self.recorded_at
        out["authority"] = self.authority
        out["sources"] = [s.to_json() for s in self.sources]
        for key, value in (
            ("note", self.note),
            ("provenance", self.provenance),
            ("by", self.by),
            ("durationMs", self.duration_ms),
            ("tail", self.tail),
            ("cwd", self.cwd),
        ):
            if value is not None:
                out[key] = value
        return out


class ClaimChange(NamedTuple):
    """One ``claim update``: when, which fields changed, and what they held before."""

    at: str
    changed: tuple[str, ...]
    #: the earlier value of each changed field (``check`` may have been null)
    before: dict[str, str | list[str] | None]

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "changed": list(self.changed), "before": dict(self.before)}


class Claim(NamedTuple):
    id: str
    text: str
    created_at: str
    about: tuple[str, ...] = ()
    authority: str = "agent"
    check: str | None = None
    #: the repository root for this claim's paths and check (absolute)
    repo: str | None = None
    evidence: tuple[Evidence, ...] = ()
    superseded_by: str | None = None
    supersedes: str | None = None
    #: when the check or ``about`` last changed: receipts recorded before it no longer count
    check_since: str | None = None
    #: every ``claim update``, oldest first (the claim's earlier wording is kept here)
    history: tuple[ClaimChange, ...] = ()
    schema_version: int = 1
    #: where it was recorded from: ``habit:<name>`` inside a habit session (``ouro.lane``)
    origin: str | None = None
    origin_session: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schemaVersion": self.schema_version,
            "id": self.id,
            "text": self.text,
            "about": list(self.about),
            "authority": self.authority,
        }
        if self.check is not None:
            out["check"] = self.check
        if self.repo is not None:
            out["repo"] = self.repo
        out["createdAt"] = self.created_at
        out["evidence"] = [e.to_json() for e in self.evidence]
        if self.superseded_by is not None:
            out["supersededBy"] = self.superseded_by
        if self.supersedes is not None:
            out["supersedes"] = self.supersedes
        if self.check_since is not None:
            out["checkSince"] = self.check_since
        if self.history:
            out["history"] = [h.to_json() for h in self.history]
        if self.origin is not None:
            out["origin"] = self.origin
            out["originSession"] = self.origin_session
        return out


# --- the reader ---------------------------------------------------------------

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
        "origin",
        "originSession",
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
_FIELD_HINT = "fix the named field (claim files hold what 'ouro claim' writes)"


def evidence_from_json(data: Any, *, where: str = "evidence") -> Evidence:
    """One evidence receipt in its on-disk form; ``InvalidInput`` names the field."""
    f = Fields(data, where, _EVIDENCE_KEYS, hint=_FIELD_HINT)
    sources = []
    for n, item in enumerate(f.items("sources")):
        s = Fields(item, f"{where}.sources.{n}", frozenset({"ref", "hash"}), hint=_FIELD_HINT)
        sources.append(EvidenceSource(s.text("ref"), s.text("hash")))
    return Evidence(
        command=f.text("command"),
        exit_code=f.integer("exitCode"),
        recorded_at=f.text("recordedAt"),
        authority=f.choice("authority", AUTHORITIES),
        sources=tuple(sources),
        output_digest=f.text("outputDigest", None),
        note=f.text("note", None),
        provenance=f.choice("provenance", PROVENANCES, None),
        by=f.text("by", None),
        duration_ms=f.integer("durationMs", None),
        tail=f.text("tail", None),
        cwd=f.text("cwd", None),
    )


def claim_from_json(data: Any, *, source: str = "claim") -> Claim:
    """A claim in its on-disk form; ``InvalidInput`` names the file and the field."""
    f = Fields(data, source, _CLAIM_KEYS, hint=_FIELD_HINT)
    about = f.items("about")
    for n, ref in enumerate(about):
        if type(ref) is not str:
            raise InvalidInput(f"{source}.about.{n}: must be a string", hint=_FIELD_HINT)
    return Claim(
        id=f.text("id"),
        text=f.text("text"),
        created_at=f.text("createdAt"),
        about=tuple(about),
        authority=f.choice("authority", AUTHORITIES, "agent"),
        check=f.text("check", None),
        repo=f.text("repo", None),
        evidence=tuple(
            evidence_from_json(e, where=f"{source}.evidence.{n}")
            for n, e in enumerate(f.items("evidence"))
        ),
        superseded_by=f.text("supersededBy", None),
        supersedes=f.text("supersedes", None),
        check_since=f.text("checkSince", None),
        history=tuple(
            change_from_json(h, where=f"{source}.history.{n}")
            for n, h in enumerate(f.items("history"))
        ),
        schema_version=f.integer("schemaVersion", 1),
        origin=f.text("origin", None),
        origin_session=f.text("originSession", None),
    )


_CHANGEABLE = ("text", "about", "check")


def change_from_json(data: Any, *, where: str = "history") -> ClaimChange:
    """One ``claim update`` record in its on-disk form; ``InvalidInput`` names the field."""
    f = Fields(data, where, frozenset({"at", "changed", "before"}), hint=_FIELD_HINT)
    changed = f.items("changed")
    for n, name in enumerate(changed):
        if name not in _CHANGEABLE:
            raise InvalidInput(
                f"{where}.changed.{n}: {name!r} is not one of {', '.join(_CHANGEABLE)}",
                hint=_FIELD_HINT,
            )
    before = f.data.get("before", {})
    if type(before) is not dict or any(k not in _CHANGEABLE for k in before):
        raise InvalidInput(f"{where}.before: must map changed fields to values", hint=_FIELD_HINT)
    for key, value in before.items():
        ok = (
            value is None
            or type(value) is str
            or (type(value) is list and all(type(v) is str for v in value))
        )
        if not ok:
            raise InvalidInput(
                f"{where}.before.{key}: must be text, a list or null", hint=_FIELD_HINT
            )
    return ClaimChange(at=f.text("at"), changed=tuple(changed), before=before)


def load_claim(path: Path) -> Claim:
    """Parse one claim file. Raises OSError, or CorruptFile naming the file."""
    try:
        return claim_from_json(jsonio.loads(file_bytes(path)), source=str(path))
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(f"{path}: not valid JSON ({exc})", hint=_FIX_HINT) from None
    except InvalidInput as exc:
        raise CorruptFile(exc.message, hint=_FIX_HINT) from None


_FIX_HINT = "fix or restore the file by hand (git has its history); ouro left it untouched"


# --- the derived status --------------------------------------------------------


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
    a stat of them (``ouro.proof.refs.stat_ref``) looks in the right folder.
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
