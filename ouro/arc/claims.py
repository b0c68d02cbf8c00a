"""The claim store: ``arc/claims/<id>.json``, one claim with its evidence.

Writes (add, evidence, verify, supersede) take the Arc lock, redact every
string, replace the claim file atomically, then record a ``claim_recorded`` or
``evidence_recorded`` event (which rewrites the checkpoint). Evidence keeps a
digest of the command's output, never the output. Status is derived on read
(``ouro.arc.claim_status``); it is never written.
"""

from __future__ import annotations

import subprocess
from typing import Any

from ouro.arc import paths
from ouro.arc.claim_status import (
    STATUSES,
    Claim,
    Evidence,
    EvidenceSource,
    Unresolvable,
    check_ref,
    derive_status,
    hash_ref,
    load_claim,
    memo_hasher,
)
from ouro.arc.recorder import append_locked, build_event
from ouro.arc.redact import bundle_literals, redact, redact_obj
from ouro.bundle import Bundle
from ouro.errors import Conflict, CorruptFile, InvalidInput, NotFound
from ouro.models.base import validate_input
from ouro.models.clock import utc_now_iso
from ouro.models.hashing import content_hash
from ouro.models.ids import is_id, new_id
from ouro.store.atomic import atomic_write_json

_LIST_HINT = "list claims with 'ouro claim list'"


def claim_path(bundle: Bundle, claim_id: str) -> Any:
    if not is_id(claim_id, "cl"):
        raise InvalidInput(f"claim id {claim_id!r} is not a claim id (cl-…)", hint=_LIST_HINT)
    return paths.claims_dir(bundle) / f"{claim_id}.json"


def get_claim(bundle: Bundle, claim_id: str) -> Claim:
    path = claim_path(bundle, claim_id)
    try:
        return load_claim(path)
    except FileNotFoundError:
        raise NotFound(f"no claim {claim_id} in {paths.CLAIMS_DIR}/", hint=_LIST_HINT) from None


def describe(bundle: Bundle, claim: Claim) -> dict[str, Any]:
    status, reason = derive_status(claim, memo_hasher(bundle))
    return {
        **claim.to_json(),
        "status": status,
        "statusReason": reason,
        "locator": paths.claim_locator(claim.id),
    }


def _save(bundle: Bundle, claim: Claim, kind: str, summary: str, meta: dict[str, Any]) -> None:
    """Write the claim file and record its event. Needs the Arc lock."""
    literals = bundle_literals(bundle)
    clean = Claim.from_json(redact_obj(claim.to_json(), literals), source="claim")
    atomic_write_json(claim_path(bundle, claim.id), clean.to_json())
    line = build_event(
        bundle,
        kind,
        summary,
        produced_refs=[{"kind": "claim", "locator": paths.claim_locator(claim.id)}],
        meta={"claimId": claim.id, **meta},
    )
    append_locked(bundle, line)


def add_claim(
    bundle: Bundle,
    text: str,
    *,
    about: list[str] | None = None,
    authority: str = "agent",
    check: str | None = None,
) -> dict[str, Any]:
    if not text.strip():
        raise InvalidInput("text: a claim needs text", hint="say what you claim is true")
    refs = [check_ref(ref, field="about") for ref in about or []]
    claim = Claim.from_json(
        {
            "id": new_id("cl"),
            "text": text,
            "about": refs,
            "authority": authority,
            "check": check or None,
            "createdAt": utc_now_iso(),
        },
        source="claim",
    )
    with paths.arc_lock(bundle, "claim add"):
        _save(bundle, claim, "claim_recorded", f"claim recorded: {text[:120]}", {"action": "add"})
        return describe(bundle, get_claim(bundle, claim.id))


def _hash_sources(bundle: Bundle, refs: list[str]) -> list[EvidenceSource]:
    out = []
    for ref in refs:
        try:
            out.append(EvidenceSource(ref=ref, hash=hash_ref(bundle, ref)))
        except Unresolvable as exc:
            raise InvalidInput(
                f"source {ref!r} cannot be resolved ({exc})",
                hint="name an existing file: a bundle locator or a path relative to the repo",
            ) from None
    return out


def add_evidence(
    bundle: Bundle,
    claim_id: str,
    *,
    command: str,
    exit_code: int,
    output: str | bytes | None = None,
    sources: list[str] | None = None,
    authority: str = "command",
    note: str | None = None,
) -> dict[str, Any]:
    """Attach an evidence receipt. Sources default to the claim's ``about``."""
    if not command.strip():
        raise InvalidInput("command: evidence names the command that ran", hint="pass --command")
    refs = [check_ref(ref, field="source") for ref in sources or []]
    with paths.arc_lock(bundle, "claim evidence"):
        claim = get_claim(bundle, claim_id)
        if claim.superseded_by:
            raise Conflict(
                f"claim {claim_id} is superseded by {claim.superseded_by}",
                hint=f"attach evidence to {claim.superseded_by}",
            )
        resolved = _hash_sources(bundle, refs) if refs else _about_sources(bundle, claim)
        evidence = validate_input(
            Evidence,
            {
                "command": redact(command, bundle_literals(bundle)),
                "exitCode": exit_code,
                "outputDigest": None if output is None else content_hash(output),
                "recordedAt": utc_now_iso(),
                "authority": authority,
                "sources": [s.to_json() for s in resolved],
                "note": note,
            },
            source="evidence",
            hint="see 'ouro claim evidence --help' for the fields",
        )
        claim.evidence = [*claim.evidence, evidence]
        _save(
            bundle,
            claim,
            "evidence_recorded",
            f"evidence for {claim_id}: {command[:80]} exited {exit_code}",
            {"exitCode": exit_code, "authority": authority},
        )
        return describe(bundle, get_claim(bundle, claim_id))


def _about_sources(bundle: Bundle, claim: Claim) -> list[EvidenceSource]:
    out = []
    for ref in claim.about:
        try:
            out.append(EvidenceSource(ref=ref, hash=hash_ref(bundle, ref)))
        except Unresolvable:
            continue  # the claim reads as unverifiable until its about resolves
    return out


def verify_claim(bundle: Bundle, claim_id: str, *, timeout: float = 300.0) -> dict[str, Any]:
    """Run the claim's declared check in the repo folder and record the receipt."""
    claim = get_claim(bundle, claim_id)
    if not claim.check:
        raise InvalidInput(
            f"claim {claim_id} declares no check command",
            hint="record evidence with 'ouro claim evidence ID --command CMD --exit N'",
        )
    # Hash before running: the receipt vouches for the content the check saw.
    sources = [s.ref for s in _about_sources(bundle, claim)]
    note = None
    try:
        proc = subprocess.run(
            claim.check,
            shell=True,
            cwd=bundle.root.parent,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, note = 124, f"timed out after {timeout:g}s"
        output = (exc.stdout or b"") + (exc.stderr or b"")
    return add_evidence(
        bundle,
        claim_id,
        command=claim.check,
        exit_code=code,
        output=output,
        sources=sources,
        authority="command",
        note=note,
    )


def supersede_claim(bundle: Bundle, claim_id: str, by: str) -> dict[str, Any]:
    if claim_id == by:
        raise InvalidInput("by: a claim cannot supersede itself", hint="name the replacement claim")
    with paths.arc_lock(bundle, "claim supersede"):
        claim = get_claim(bundle, claim_id)
        replacement = get_claim(bundle, by)
        if claim.superseded_by and claim.superseded_by != by:
            raise Conflict(
                f"claim {claim_id} is already superseded by {claim.superseded_by}",
                hint=f"supersede {claim.superseded_by} instead",
            )
        claim.superseded_by = by
        _save(
            bundle,
            claim,
            "claim_recorded",
            f"claim {claim_id} superseded by {by}",
            {"action": "supersede", "by": by},
        )
        if replacement.supersedes != claim_id:
            replacement.supersedes = claim_id
            atomic_write_json(claim_path(bundle, by), replacement.to_json())
        return describe(bundle, get_claim(bundle, claim_id))


def list_claims(bundle: Bundle, status: str | None = None) -> dict[str, Any]:
    """Every claim with its status derived now (pure). Unreadable files are named."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    folder = paths.claims_dir(bundle)
    try:
        names = sorted(n for n in folder.iterdir() if n.suffix == ".json")
    except OSError as exc:
        return {
            "claims": None,
            "unknown": f"cannot list {paths.CLAIMS_DIR}/ ({exc.strerror or exc})",
        }
    hasher = memo_hasher(bundle)
    out: list[dict[str, Any]] = []
    unreadable: list[dict[str, str]] = []
    for path in names:
        try:
            claim = load_claim(path)
        except (CorruptFile, OSError) as exc:
            unreadable.append({"file": f"{paths.CLAIMS_DIR}/{path.name}", "reason": str(exc)})
            continue
        derived, reason = derive_status(claim, hasher)
        if status is None or derived == status:
            out.append(
                {
                    "id": claim.id,
                    "text": claim.text,
                    "status": derived,
                    "statusReason": reason,
                    "authority": claim.authority,
                    "check": claim.check,
                    "about": claim.about,
                    "evidenceCount": len(claim.evidence),
                    "locator": paths.claim_locator(claim.id),
                }
            )
    return {"claims": out, "unreadable": unreadable}
