"""The five event handlers: what each host moment writes and says.

Each handler is ``fn(bundle, host, inp, options) -> Reply``. Writes go through
their owners only: Arc events and the checkpoint via ``ouro.arc.recorder``,
sentinel receipts via ``ouro.sentinel.receipts``, and this package's own
``state/hooks/`` file. A step that fails (a lock held too long, an unreadable
state file) adds a one-line warning and the other steps still run; a failure
to build the orientation packet means nothing is injected.

Heavy modules are imported inside the handler that needs them, so
``SessionEnd`` does not pay for the orientation packet or the sentinel, nor
``PostToolUse`` for the packet and the session state.
"""

from __future__ import annotations

from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, OuroError
from ouro.hooks.common import HookInput, Host, Options, Reply, describe

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from ouro.hooks.budget import Budget

#: Arc has no dedicated compaction kind; the pre-compaction write is "the
#: turn's state was persisted", tagged with the host event in ``meta``.
PRECOMPACT_KIND = "post_turn_persisted"
#: Sentinel trigger for a refresh just before the host compacts context.
PRECOMPACT_TRIGGER = "post_turn"
#: Claim statuses the Stop hook counts as debt: each has a check to run.
DEBT_STATUSES = frozenset({"evidence_required", "failed", "stale_risky"})
#: How many claim / obligation lines the Stop message lists before summing up.
LIST_LIMIT = 5


def _session_ref(host: Host, inp: HookInput) -> str | None:
    return f"{host.name}:{inp.session_id}" if inp.session_id else None


def _record(
    reply: Reply, bundle: Bundle, host: Host, inp: HookInput, kind: str, summary: str, **meta: Any
) -> None:
    from ouro.arc.recorder import record_event

    try:
        record_event(
            bundle,
            kind,
            summary,
            session_ref=_session_ref(host, inp),
            turn_id=inp.turn_id,
            meta={"host": host.name, **{k: v for k, v in meta.items() if v is not None}},
        )
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"{kind} not recorded: {text}")


def _refresh_sentinel(reply: Reply, bundle: Bundle, trigger: str) -> None:
    from ouro.api import Bundle as Library

    try:
        Library(bundle).sentinel.refresh(trigger=trigger)
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"sentinel not refreshed: {text}")


def _save(
    reply: Reply,
    bundle: Bundle,
    host: Host,
    inp: HookInput,
    hashes: dict[str, str],
    event: str,
    *,
    injected: bool,
    previous: dict[str, Any] | None,
    guide: bool = False,
    basis: dict[str, Any] | None = None,
) -> None:
    from ouro.hooks import state

    try:
        state.save(
            state.state_path(bundle, host.name, inp.session_id),
            host=host.name,
            session_id=inp.session_id,
            hashes=hashes,
            event=event,
            injected=injected,
            previous=previous,
            guide=guide,
            basis=basis,
        )
    except OSError as exc:
        reply.warnings.append(f"injection fingerprint not saved: {exc}")


def session_start(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    from ouro.hooks import state
    from ouro.hooks.packet import packet_context

    reply = Reply()
    source = inp.source or "unknown"
    path = state.state_path(bundle, host.name, inp.session_id)
    if not options.dry_run:
        _record(
            reply,
            bundle,
            host,
            inp,
            "session_started",
            f"{host.title} session started ({source})",
            source=inp.source,
            model=inp.model,
        )
        _refresh_sentinel(reply, bundle, "session_start")
    guide = guide_for(path, inp.source)
    basis = None if options.dry_run else _basis(reply, bundle)
    reply.context, hashes = packet_context(
        bundle, budget=options.budget, guide=guide, cap=_cap(host, "SessionStart"), title=host.title
    )
    if not options.dry_run:
        _save(reply, bundle, host, inp, hashes, "SessionStart", injected=True, previous=None,
              basis=basis)  # fmt: skip
    return reply


def _cap(host: Host, event: str) -> Budget:
    """What ``host`` takes from one ``event`` hook (``ouro.hooks.budget``)."""
    from ouro.hooks.budget import for_host

    return for_host(host.name, event, host.context_limit)


def _basis(reply: Reply, bundle: Bundle) -> dict[str, Any] | None:
    """What the packet about to be computed is computed from (``ouro.hooks.basis``);
    None (the next prompt computes the packet) when it cannot be taken."""
    from ouro.hooks import basis

    try:
        return basis.take(bundle)
    except (OuroError, OSError) as exc:
        text = describe(exc) if isinstance(exc, OuroError) else str(exc)
        reply.warnings.append(f"packet basis not taken: {text}")
        return None


def guide_for(path: Path, source: str | None) -> str:
    """The operating guide, unless this session already has this version of it.

    A session is given the guide once; again only when its context was
    replaced (``compact``, ``clear``) or the guide's version changed.
    """
    from ouro import guide
    from ouro.hooks import state

    try:
        previous = state.load(path)
    except CorruptFile:
        previous = None
    given = previous is not None and previous.get("guideVersion") == guide.GUIDE_VERSION
    if given and source not in ("compact", "clear"):
        return ""
    return guide.render()


def user_prompt_submit(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    from ouro.arc.checkpoint import one_run

    # The event is recorded, then the packet read: one run, so the packet takes
    # the checkpoint the record computed instead of reading the stores again.
    with one_run():
        return _user_prompt_submit(bundle, host, inp, options)


def _user_prompt_submit(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    from ouro.hooks import state

    reply = Reply()
    # The prompt text is never read (parse_input drops it): only the fact of a turn.
    _record(reply, bundle, host, inp, "turn_accepted", f"{host.title} turn accepted")
    path = state.state_path(bundle, host.name, inp.session_id)
    budget = options.budget
    try:
        # the item hashes only when the basis moved (a packet is computed then)
        previous = state.load(path, items=False)
    except CorruptFile as exc:
        return _fresh_fingerprint(reply, bundle, host, inp, path, exc, budget)
    from ouro.hooks import basis as bases

    now = _basis(reply, bundle)
    if previous is not None and now is not None and bases.same(previous.get("basis"), now):
        return reply  # computed from the same files as the packet last shown: silent, no write
    if previous is not None and "items" not in previous:
        try:
            previous = state.load(path)
        except CorruptFile as exc:
            return _fresh_fingerprint(reply, bundle, host, inp, path, exc, budget)
    # The packet's modules (redaction among them) and its budget only when it is computed.
    from ouro.hooks.packet import changed_context, packet_context

    cap = _cap(host, "UserPromptSubmit")

    if previous is None:
        # No injection recorded for this session (SessionStart missed, or a host
        # session without one: Gemini CLI's ACP): orient now, with the guide.
        from ouro import guide

        reply.context, hashes = packet_context(
            bundle, budget=budget, guide=guide.render(), cap=cap, title=host.title
        )
        _save(reply, bundle, host, inp, hashes, "UserPromptSubmit", injected=True, previous=None,
              guide=True, basis=now)  # fmt: skip
        return reply
    context, hashes = changed_context(
        bundle, previous["items"], budget=budget, cap=cap, title=host.title
    )
    if context is None:
        if now is not None and now != previous.get("basis") and bases.trusted(now):
            # the same packet from files that moved: keep their basis, so the
            # next prompt is decided by it again (an untrusted one never decides)
            _save(reply, bundle, host, inp, hashes, "UserPromptSubmit", injected=False,
                  previous=previous, basis=now)  # fmt: skip
        return reply  # nothing changed: silent
    reply.context = context
    _save(reply, bundle, host, inp, hashes, "UserPromptSubmit", injected=True, previous=previous,
          basis=now)  # fmt: skip
    return reply


def _fresh_fingerprint(
    reply: Reply, bundle: Bundle, host: Host, inp: HookInput, path: Path, exc: CorruptFile,
    budget: int,
) -> Reply:  # fmt: skip
    """An unreadable state file: set it aside, save a fresh fingerprint, inject nothing."""
    from ouro.hooks import state
    from ouro.hooks.packet import packet_context

    kept = state.set_aside(path)
    reply.warnings.append(f"{exc.message}; kept as {kept.name}, starting a fresh fingerprint")
    cap = _cap(host, "UserPromptSubmit")
    _, hashes = packet_context(bundle, budget=budget, cap=cap, title=host.title)
    _save(reply, bundle, host, inp, hashes, "UserPromptSubmit", injected=False, previous=None)
    return reply


def pre_compact(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    reply = Reply()
    trigger = inp.trigger or "unknown"
    # Recording rewrites the checkpoint (latest.json) under the Arc lock.
    _record(
        reply,
        bundle,
        host,
        inp,
        PRECOMPACT_KIND,
        f"{host.title} is compacting context ({trigger}); checkpoint written",
        hostEvent="PreCompact",
        trigger=inp.trigger,
    )
    _refresh_sentinel(reply, bundle, PRECOMPACT_TRIGGER)
    return reply  # no context: it returns with SessionStart (source compact)


def stop(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    from ouro.arc.resume import read_resume_full
    from ouro.proof.redact import bundle_literals, redact

    reply = Reply()
    full = read_resume_full(bundle)
    from ouro.models.clock import utc_now_iso

    message = debt_message(full, now=utc_now_iso())
    if message is None:
        return reply
    message = redact(message, bundle_literals(bundle))
    reply.system_message = message
    # stop_hook_active: the host is already continuing because of a Stop block;
    # blocking again could loop forever, so surface only.
    if options.block_on_debt and not inp.stop_hook_active:
        reply.block_reason = message + "\n" + debt_actions(message)
    return reply


def debt_actions(message: str) -> str:
    """What the agent can do about the listed debt, and nothing it cannot."""
    steps = []
    if "claim(s) not verified" in message:
        steps.append("run each claim's check ('ouro claim verify ID', or run it yourself)")
    if "obligation(s) due" in message:
        steps.append("close what is done ('ouro obligation close ID')")
    steps.append("or say why they stay open")
    return "Before stopping: " + ", ".join(steps) + "."


def session_end(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    reply = Reply()
    reason = inp.reason or "unknown"
    _record(
        reply,
        bundle,
        host,
        inp,
        "session_ended",
        f"{host.title} session ended ({reason})",
        reason=inp.reason,
    )
    return reply


def _due(entry: dict[str, Any], now: str) -> bool:
    due = entry.get("due")
    if not isinstance(due, str) or not due:
        return False
    # A date-only due ("2026-05-01") is due from the start of that day.
    return due <= now if "T" in due else due <= now[:10]


def debt_message(full: dict[str, Any], *, now: str) -> str | None:
    """One short text naming unverified claims and due obligations, or None."""
    stores = full.get("stores") or {}
    claim_store = stores.get("claims") or {}
    ob_store = stores.get("obligations") or {}
    claims = claim_store.get("items") or {}
    obligations = ob_store.get("items") or {}
    # Debt is only what can be verified and is not: a claim without a check
    # reads "asserted" and nothing the agent runs can change that.
    unverified = [
        cid
        for cid in full.get("unverifiedClaimIds") or []
        if cid in claims and claims[cid].get("status") in DEBT_STATUSES
    ]
    due = sorted(oid for oid, entry in obligations.items() if _due(entry, now))
    lines: list[str] = []
    # Unknown stays unknown: an unreadable store is named, never read as "no debt".
    for label, store in (("claims", claim_store), ("obligations", ob_store)):
        if store.get("error"):
            lines.append(f"ouro: {label} unknown ({store['error']})")
        for item_id, reason in sorted((store.get("errors") or {}).items())[:LIST_LIMIT]:
            lines.append(f"ouro: {label[:-1]} {item_id} unknown ({reason})")
    if unverified:
        lines.append(f"ouro: {len(unverified)} claim(s) not verified:")
        for cid in unverified[:LIST_LIMIT]:
            entry = claims[cid]
            lines.append(f"- {cid} [{entry.get('status')}] {entry.get('text', '')}".rstrip())
        if len(unverified) > LIST_LIMIT:
            lines.append(f"- … {len(unverified) - LIST_LIMIT} more ('ouro claim list')")
    if due:
        lines.append(f"ouro: {len(due)} obligation(s) due:")
        for oid in due[:LIST_LIMIT]:
            entry = obligations[oid]
            lines.append(f"- {oid} due {entry.get('due')}: {entry.get('what', '')}".rstrip())
        if len(due) > LIST_LIMIT:
            lines.append(f"- … {len(due) - LIST_LIMIT} more ('ouro obligation list')")
    return "\n".join(lines) if lines else None


def post_tool_use(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    """A command the host ran: a receipt when it is a declared check. A command no
    claim or task declares (``ouro.derived.checks``) is done here, a few ``stat``
    calls in, before the receipt machinery is imported."""
    from ouro.derived.checks import declared
    from ouro.hooks.common import shell_command

    command = shell_command(inp.tool)
    if command is None or command.strip() not in declared(bundle):
        return Reply()
    from ouro.hooks.posttool import observe

    return observe(bundle, host, inp, options)


def pre_tool_use(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    """An edit the host is about to make: warn when another agent locked the path."""
    from ouro.hooks.pretool import pre_tool_use as warn

    return warn(bundle, host, inp, options)


HANDLERS = {
    "PreToolUse": pre_tool_use,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use,
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreCompact": pre_compact,
    "Stop": stop,
    "SessionEnd": session_end,
}
