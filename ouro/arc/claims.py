"""The claim store: ``arc/claims/<id>.json``, one claim with its evidence.

Writes (add, update, evidence, verify, supersede, host observation) take the Arc
lock, redact every string, replace the claim file atomically, then record a
``claim_recorded`` or ``evidence_recorded`` event (which rewrites the
checkpoint). Evidence keeps a digest of the command's output and a redacted
tail, never the output. Status is derived on read
(``ouro.arc.claim_status``, the one reader of claim files); it is never written.

Provenance is set here, never taken from the caller: ``add_evidence`` (what
anyone can type) always writes ``asserted``; ``verify_claim`` (ouro ran the
check, ``ouro.proof.checkrun``) writes ``observed-by-ouro``;
``observe_host_run`` (a host hook reported the run) writes
``observed-by-host`` when the hook confirmed the run in the host's own
transcript, else ``asserted`` with the reason in ``note``;
``confirm_host_run`` turns such an asserted host receipt into
``observed-by-host`` once the transcript shows the run (in place: the receipt
keeps its position, time and sources).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.arc import paths
from ouro.arc.claim_status import (
    STATUSES,
    Claim,
    ClaimChange,
    EvidenceSource,
    claim_from_json,
    derive_status,
    evidence_from_json,
    load_claim,
)
from ouro.arc.recorder import append_locked, build_event
from ouro.bundle import Bundle
from ouro.edge import require_text
from ouro.errors import Conflict, CorruptFile, InvalidInput, NotFound, OuroError
from ouro.lane import habit_lane
from ouro.models.clock import utc_now_iso
from ouro.models.hashing import content_hash
from ouro.models.ids import is_id, new_id
from ouro.proof import checkrun
from ouro.proof.redact import bundle_literals, redact, redact_obj
from ouro.proof.refs import Unresolvable, check_ref, confined_ref, hash_ref, memo_hasher
from ouro.store.atomic import atomic_write_json
from ouro.store.guard import Inside, names_inside, outside

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
    out = {
        **claim.to_json(),
        "status": status,
        "statusReason": reason,
        "locator": paths.claim_locator(claim.id),
    }
    for item, evidence in zip(out.get("evidence") or [], claim.evidence, strict=False):
        item["provenance"] = evidence.how  # legacy receipts read as asserted
    return out


def _save(bundle: Bundle, claim: Claim, kind: str, summary: str, meta: dict[str, Any]) -> None:
    """Write the claim file and record its event. Needs the Arc lock."""
    literals = bundle_literals(bundle)
    clean = claim_from_json(redact_obj(claim.to_json(), literals), source="claim")
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
    repo: str | None = None,
) -> dict[str, Any]:
    require_text(text, "text")
    clean_check = checkrun.check_command(bundle, check)  # refused, never rewritten
    repo_path = checkrun.resolve_repo(bundle, repo) if repo else None
    refs = [
        confined_ref(bundle, check_ref(ref, field="about"), field="about", repo=repo_path)
        for ref in about or []
    ]
    lane = habit_lane(bundle.root)
    origin = {"origin": lane.origin, "originSession": lane.session_id} if lane else {}
    claim = claim_from_json(
        {
            **origin,
            "id": new_id("cl"),
            "text": text,
            "about": refs,
            "authority": authority,
            "check": clean_check,
            "repo": repo_path,
            "createdAt": utc_now_iso(),
        },
        source="claim",
    )
    with paths.arc_lock(bundle, "claim add"):
        _save(bundle, claim, "claim_recorded", f"claim recorded: {text[:120]}", {"action": "add"})
        saved = get_claim(bundle, claim.id)
    if saved.check:
        # Written through ouro here: this bundle may run it without asking.
        checkrun.trust(bundle, saved.check, how=f"claim add {saved.id}")
    return describe(bundle, saved)


def _hash_sources(bundle: Bundle, refs: list[str], repo: str | None) -> list[EvidenceSource]:
    out = []
    for ref in refs:
        try:
            out.append(EvidenceSource(ref=ref, hash=hash_ref(bundle, ref, repo)))
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
    by: str | None = None,
) -> dict[str, Any]:
    """Attach an asserted receipt (typed in: it never verifies). Sources
    default to the claim's ``about``."""
    if not command.strip():
        raise InvalidInput("command: evidence names the command that ran", hint="pass --command")
    fields = {
        "exitCode": exit_code,
        "outputDigest": None if output is None else content_hash(output),
        "authority": authority,
        "note": note,
        "provenance": "asserted",
        "by": by or _agent(bundle),
    }
    return _attach(bundle, claim_id, command, fields, sources, action="claim evidence")


def _attach(
    bundle: Bundle,
    claim_id: str,
    command: str,
    fields: dict[str, Any],
    sources: list[str] | None,
    *,
    action: str,
    sources_first: list[EvidenceSource] | None = None,
    expect_check: str | None = None,
) -> dict[str, Any]:
    """Validate and append one receipt under the Arc lock."""
    refs = [check_ref(ref, field="source") for ref in sources or []]
    with paths.arc_lock(bundle, action):
        claim = get_claim(bundle, claim_id)
        if claim.superseded_by:
            raise Conflict(
                f"claim {claim_id} is superseded by {claim.superseded_by}",
                hint=f"attach evidence to {claim.superseded_by}",
            )
        if expect_check is not None and claim.check != expect_check:
            raise Conflict(
                f"claim {claim_id}'s check changed while it ran "
                f"(ran {expect_check!r}, now {claim.check!r}); the receipt was not recorded",
                hint=f"run 'ouro claim verify {claim_id}' again",
            )
        if sources_first is not None:
            resolved = sources_first
        elif refs:
            resolved = _hash_sources(bundle, refs, claim.repo)
        else:
            resolved = _about_sources(bundle, claim)
        receipt = {
            "command": redact(command, bundle_literals(bundle)),
            "recordedAt": utc_now_iso(),
            "sources": [s.to_json() for s in resolved],
            **{k: v for k, v in fields.items() if v is not None},
        }
        try:
            evidence = evidence_from_json(receipt)
        except InvalidInput as exc:
            raise InvalidInput(
                exc.message, hint="see 'ouro claim evidence --help' for the fields"
            ) from None
        claim = claim._replace(evidence=(*claim.evidence, evidence))
        _save(
            bundle,
            claim,
            "evidence_recorded",
            f"evidence for {claim_id} ({evidence.how}): {command[:80]} exited {evidence.exit_code}",
            {"exitCode": evidence.exit_code, "provenance": evidence.how, "by": evidence.by},
        )
        return describe(bundle, get_claim(bundle, claim_id))


def _agent(bundle: Bundle) -> str | None:
    try:
        agent = bundle.read_meta().get("agent")
    except OuroError:
        return None
    return agent if isinstance(agent, str) and agent else None


def _about_sources(bundle: Bundle, claim: Claim) -> list[EvidenceSource]:
    out = []
    for ref in claim.about:
        try:
            out.append(EvidenceSource(ref=ref, hash=hash_ref(bundle, ref, claim.repo)))
        except Unresolvable:
            continue  # the claim reads as unverifiable until its about resolves
    return out


def claim_repo(bundle: Bundle, claim: Claim) -> Path:
    """The folder the claim's check runs in."""
    return Path(claim.repo) if claim.repo else checkrun.repo_root(bundle)


def verify_claim(
    bundle: Bundle, claim_id: str, *, timeout: float = checkrun.DEFAULT_TIMEOUT, yes: bool = False
) -> dict[str, Any]:
    """Run the claim's declared check like a CI step and record what ouro saw."""
    claim = get_claim(bundle, claim_id)
    if not claim.check:
        raise InvalidInput(
            f"claim {claim_id} declares no check command, so ouro has nothing to run",
            hint="it stays asserted; to make it verifiable, add a claim with --check",
        )
    checkrun.require_trust(bundle, claim.check, owner=f"claim {claim_id}", yes=yes)
    # Hash before running: the receipt vouches for the content the check saw.
    sources = _about_sources(bundle, claim)
    run = checkrun.run_check(bundle, claim.check, cwd=claim_repo(bundle, claim), timeout=timeout)
    result = _attach(
        bundle,
        claim_id,
        claim.check,
        _run_fields(run, timeout, provenance="observed-by-ouro", by="ouro"),
        None,
        action="claim verify",
        sources_first=sources,
        expect_check=claim.check,
    )
    result["run"] = run.to_json()
    return result


def _run_fields(
    run: checkrun.CheckRun, timeout: float, *, provenance: str, by: str
) -> dict[str, Any]:
    return {
        "exitCode": run.exit_code,
        "outputDigest": run.digest,
        "authority": "command",
        "note": run.note(timeout),
        "provenance": provenance,
        "by": by,
        "durationMs": run.duration_ms,
        "tail": run.tail,
        "cwd": run.cwd,
    }


def observe_host_run(
    bundle: Bundle,
    claim_id: str,
    *,
    command: str,
    exit_code: int,
    host: str,
    digest: str | None,
    tail: str | None,
    confirmed: bool = True,
    note: str | None = None,
    sources: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """Record that a host reported the claim's declared check run.

    ``confirmed``: the host's own transcript shows the run (``observed-by-host``);
    otherwise the receipt is ``asserted`` and ``note`` says why. ``sources``:
    (ref, hash) pairs taken when the run was reported (default: hashed now).
    """
    fields = {
        "exitCode": exit_code,
        "outputDigest": digest,
        "authority": "runtime",
        "provenance": "observed-by-host" if confirmed else "asserted",
        "by": host,
        "tail": tail,
        "note": note,
    }
    first = None if sources is None else [EvidenceSource(ref=r, hash=h) for r, h in sources]
    return _attach(
        bundle,
        claim_id,
        command,
        fields,
        None,
        action="host observation",
        sources_first=first,
        expect_check=command,
    )


def confirm_host_run(
    bundle: Bundle, claim_id: str, *, recorded_at: str, command: str, host: str, note: str
) -> dict[str, Any]:
    """Make the asserted receipt ``host`` reported at ``recorded_at`` ``observed-by-host``.

    For a run the host's transcript showed only after the hook had recorded it
    (``observe_host_run(confirmed=False)``). A receipt already confirmed is left
    as it is.
    """
    with paths.arc_lock(bundle, "host observation"):
        claim = get_claim(bundle, claim_id)
        written = redact(command, bundle_literals(bundle))
        for index, evidence in enumerate(claim.evidence):
            if (evidence.recorded_at, evidence.by, evidence.command) != (
                recorded_at,
                host,
                written,
            ):
                continue
            if evidence.provenance == "observed-by-host":
                return describe(bundle, claim)
            if evidence.provenance != "asserted":
                break
            confirmed = evidence._replace(provenance="observed-by-host", note=note)
            claim = claim._replace(
                evidence=(*claim.evidence[:index], confirmed, *claim.evidence[index + 1 :])
            )
            _save(
                bundle,
                claim,
                "evidence_recorded",
                f"evidence for {claim_id} confirmed by the {host} transcript (observed-by-host): "
                f"{command[:80]} exited {evidence.exit_code}",
                {"exitCode": evidence.exit_code, "provenance": "observed-by-host", "by": host},
            )
            return describe(bundle, get_claim(bundle, claim_id))
        raise NotFound(
            f"claim {claim_id} has no asserted receipt from {host} recorded at {recorded_at}",
            hint=f"its evidence is in arc/claims/{claim_id}.json",
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
        claim = claim._replace(superseded_by=by)
        _save(
            bundle,
            claim,
            "claim_recorded",
            f"claim {claim_id} superseded by {by}",
            {"action": "supersede", "by": by},
        )
        if replacement.supersedes != claim_id:
            replacement = replacement._replace(supersedes=claim_id)
            atomic_write_json(claim_path(bundle, by), replacement.to_json())
        return describe(bundle, get_claim(bundle, claim_id))


_UPDATE_FIELDS = ("text", "about", "check")


def update_claim(
    bundle: Bundle,
    claim_id: str,
    *,
    text: str | None = None,
    about: list[str] | None = None,
    check: str | None = None,
) -> dict[str, Any]:
    """Correct a claim's text, ``about`` refs or check in place (None = unchanged).

    Before a claim is verified any of the three may change. A verified claim
    keeps its text and ``about`` (the evidence vouches for them: record a new
    claim and supersede this one), but its check may change. When the check or
    ``about`` changes, no earlier receipt counts (``checkSince``): the claim
    reads ``evidence_required`` until the new check is observed. The earlier values are kept in
    ``history``; a ``claim_recorded`` event (action ``update``) names the
    changed fields. A superseded claim is not changed.
    """
    if text is None and about is None and check is None:
        raise InvalidInput(
            "nothing to change: give text, about or check", hint="see 'ouro claim update --help'"
        )
    if text is not None:
        require_text(text, "text")
    clean_check = None
    if check is not None:
        clean_check = checkrun.check_command(bundle, check)  # refused, never rewritten
        if clean_check is None:
            raise InvalidInput("check: cannot be blank", hint="give the command that proves it")
    with paths.arc_lock(bundle, "claim update"):
        claim = get_claim(bundle, claim_id)
        if claim.superseded_by:
            raise Conflict(
                f"claim {claim_id} is superseded by {claim.superseded_by}",
                hint=f"update {claim.superseded_by} instead",
            )
        refs = None
        if about is not None:
            repo = claim.repo
            refs = [
                confined_ref(bundle, check_ref(ref, field="about"), field="about", repo=repo)
                for ref in about
            ]
        wanted: dict[str, Any] = {
            "text": text,
            "about": None if refs is None else tuple(refs),
            "check": clean_check,
        }
        changed = [
            f for f in _UPDATE_FIELDS if wanted[f] is not None and wanted[f] != getattr(claim, f)
        ]
        if not changed:
            return {**describe(bundle, claim), "changed": []}
        status, _reason = derive_status(claim, memo_hasher(bundle))
        meaning = [f for f in changed if f != "check"]
        if status == "verified" and meaning:
            raise Conflict(
                f"claim {claim_id} is verified; its {' and '.join(meaning)} cannot change "
                "(the evidence vouches for them)",
                hint=f"record a new claim, then 'ouro claim supersede {claim_id} --by NEW'",
            )
        now = utc_now_iso()
        before: dict[str, str | list[str] | None] = {
            f: list(claim.about) if f == "about" else getattr(claim, f) for f in changed
        }
        fields: dict[str, Any] = {name: wanted[name] for name in changed}
        if "check" in changed or "about" in changed:
            # a receipt vouched for another check, or for other files: it no longer counts
            fields["check_since"] = now
        claim = claim._replace(
            history=(*claim.history, ClaimChange(at=now, changed=tuple(changed), before=before)),
            **fields,
        )
        _save(
            bundle,
            claim,
            "claim_recorded",
            f"claim {claim_id} updated: {', '.join(changed)}",
            {"action": "update", "changed": changed, "statusBefore": status},
        )
        saved = get_claim(bundle, claim_id)
    if "check" in changed and saved.check:
        checkrun.trust(bundle, saved.check, how=f"claim update {saved.id}")
    return {**describe(bundle, saved), "changed": changed}


def _json_name(name: str) -> bool:
    return name.endswith(".json") and name != ".json"


def list_claims(bundle: Bundle, status: str | None = None) -> dict[str, Any]:
    """Every claim with its status derived now (pure). Unreadable files are named."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    folder = paths.claims_dir(bundle)
    inside = Inside(bundle.root)
    if inside.folder(folder) is None:
        return {"claims": None, "unknown": outside(paths.CLAIMS_DIR)}
    skipped: list[str] = []  # behind a symlink leading outside the bundle: never opened
    try:
        listed = names_inside(folder, _json_name, skipped, missing_ok=False)
    except OSError as exc:
        return {
            "claims": None,
            "unknown": f"cannot list {paths.CLAIMS_DIR}/ ({exc.strerror or exc})",
        }
    names = [folder / name for name in listed]
    hasher = memo_hasher(bundle)
    out: list[dict[str, Any]] = []
    unreadable = [{"file": rel, "reason": outside(rel)} for rel in skipped]
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
                    "repo": claim.repo,
                    "about": list(claim.about),
                    "evidenceCount": len(claim.evidence),
                    "locator": paths.claim_locator(claim.id),
                }
            )
    return {"claims": out, "unreadable": unreadable}
