"""``b.arc``, ``b.claim``, ``b.obligation``: the flight recorder, claims and obligations.

Each Arc write records one event through ``ouro.arc.recorder`` (which keeps
``arc/checkpoints/latest.json`` current) and returns the event with the resume
state it leaves: ``canContinue``, ``continuation``, ``missing``, ``blockedBecause``.
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.arc.claim_status import AUTHORITIES, STATUSES
from ouro.edge import ARC_TEXT, EVIDENCE_OUTPUT
from ouro.errors import NotFound, OutsideBundle
from ouro.spec import P, verb

QUERIES = ("doing", "owe", "blocked", "unverified", "since-checkpoint")

Text = Annotated[str, P("what to record", limit=ARC_TEXT, nonblank=True)]
Session = Annotated[str | None, P("the session recording this")]
Turn = Annotated[str | None, P("the turn recording this")]
Tasks = Annotated[list[str], P("a Desk task (id or track/slug) that carries the details")]
Refs = Annotated[
    list[str], P("a Desk locator that carries the details (e.g. desk/_record/notes/x.md)")
]


class Arc(Namespace):
    """Live continuity: the ask, the next safe action, blockers, handoffs, notes."""

    def _written(self, event: dict[str, Any], warnings: list[str] | None = None) -> dict[str, Any]:
        from ouro.arc.resume import read_resume

        resume = read_resume(self.folder)
        return {
            "event": event,
            "canContinue": resume["canContinue"],
            "continuation": resume["continuation"],
            "missing": resume["missing"],
            "blockedBecause": resume["blockedBecause"],
            "warnings": warnings or [],
        }

    def _links_meta(self, tasks: list[str], refs: list[str]) -> dict[str, Any]:
        from ouro.arc.desklinks import resolve_links

        links = resolve_links(self.folder, tasks, refs)
        return {"deskRefs": links} if links else {}

    @verb
    def resume(self) -> dict[str, Any]:
        """Read the resume checkpoint: whether you can continue safely, the current ask
        and its confidence, the next safe action, blockers, owed obligations, unverified
        claims and recorder health. When latest.json lags the log it folds the log
        itself; writes nothing."""
        from ouro.arc.resume import read_resume

        return read_resume(self.folder)

    @verb
    def query(
        self,
        what: Annotated[
            str, P("doing | owe | blocked | unverified | since-checkpoint", choices=QUERIES)
        ],
    ) -> dict[str, Any]:
        """Answer one Arc question from files: doing (ask + next action), owe (open
        obligations and return routes), blocked, unverified (claims not verified),
        since-checkpoint (events after the last safe checkpoint)."""
        from ouro.arc.queries import query

        return query(self.folder, what)

    @verb
    def ask(
        self,
        text: Text,
        *,
        session: Session = None,
        turn: Turn = None,
        tasks: Tasks = [],
        refs: Refs = [],
    ) -> dict[str, Any]:
        """Record what you are being asked to do now (the current ask), optionally with
        the Desk tasks/locators that carry the details. A next safe action recorded for
        an earlier ask is then no longer current."""
        from ouro.arc.recorder import record_event

        meta = self._links_meta(tasks, refs)
        warnings: list[str] = []
        event = record_event(
            self.folder,
            "turn_accepted",
            f"ask: {text}",
            current_ask=text,
            meta=meta or None,
            session_ref=session,
            turn_id=turn,
            warnings=warnings,
        )
        return self._written(event, warnings)

    @verb
    def next(
        self,
        text: Text,
        *,
        session: Session = None,
        turn: Turn = None,
        tasks: Tasks = [],
        refs: Refs = [],
        stop_before: Annotated[
            list[str],
            P("an action not to take without confirming first", limit=ARC_TEXT, nonblank=True),
        ] = [],
    ) -> dict[str, Any]:
        """Record the next safe action for the current ask, actions to stop before
        (confirm first), and the Desk tasks/locators that carry the details."""
        from ouro.arc import paths
        from ouro.arc.checkpoint import compute
        from ouro.arc.recorder import append_locked, build_event

        bundle = self.folder
        meta = self._links_meta(tasks, refs)
        with paths.arc_lock(bundle, "record next"):
            # bound to the ask current now (meta.askEventId)
            ask_ids = compute(bundle).checkpoint["currentAsk"]["sourceEventIds"]
            if ask_ids:
                meta["askEventId"] = ask_ids[0]
            line = build_event(
                bundle,
                "agent_note",
                f"next safe action: {text}",
                next_safe_action=text,
                stop_before=stop_before,
                meta=meta or None,
                session_ref=session,
                turn_id=turn,
            )
            warnings = append_locked(bundle, line)
        return self._written(line, warnings)

    @verb
    def confirm(self, *, session: Session = None, turn: Turn = None) -> dict[str, Any]:
        """Confirm, after a new session or a handoff, that the recorded ask (and its next
        safe action) is still what you are doing, without retyping it."""
        from ouro.arc import paths
        from ouro.arc.checkpoint import compute
        from ouro.arc.recorder import append_locked, build_event
        from ouro.arc.resume import read_resume

        bundle = self.folder
        _require_ask(read_resume(bundle))  # refuse before taking the lock: a refusal writes nothing
        with paths.arc_lock(bundle, "confirm"):
            now = compute(bundle).checkpoint
            ask, nxt = now["currentAsk"], now["nextSafeAction"]
            _require_ask(now)
            meta: dict[str, Any] = {"confirms": ask["sourceEventIds"][0]}
            if ask["refs"]:
                meta["deskRefs"] = ask["refs"]
            if nxt["value"]:
                meta["confirmsNext"] = nxt["sourceEventIds"][0]
            line = build_event(
                bundle,
                "ask_confirmed",
                f"confirmed: {ask['value']}" + (f" — next: {nxt['value']}" if nxt["value"] else ""),
                current_ask=ask["value"],
                next_safe_action=nxt["value"],
                stop_before=nxt["stopBefore"] if nxt["value"] else None,
                meta=meta,
                session_ref=session,
                turn_id=turn,
            )
            warnings = append_locked(bundle, line)
        return {**self._written(line, warnings), "confirmedNext": bool(nxt["value"])}

    @verb
    def blocker(self, text: Text, *, session: Session = None, turn: Turn = None) -> dict[str, Any]:
        """Record a blocker: why work cannot continue. Resume reports can-continue false
        until it is cleared."""
        from ouro.arc.recorder import record_event

        warnings: list[str] = []
        event = record_event(
            self.folder,
            "blocker_detected",
            f"blocked: {text}",
            blocked_because=text,
            session_ref=session,
            turn_id=turn,
            warnings=warnings,
        )
        return self._written(event, warnings)

    @verb
    def unblock(
        self,
        blocker_id: Annotated[str | None, P("the blocker's event id (default: all)")] = None,
        *,
        session: Session = None,
        turn: Turn = None,
    ) -> dict[str, Any]:
        """Clear one blocker by its event id, or all active blockers."""
        from ouro.arc import paths
        from ouro.arc.recorder import append_locked, build_event
        from ouro.arc.resume import read_resume

        bundle = self.folder
        with paths.arc_lock(bundle, "clear blocker"):
            active = read_resume(bundle)["blockers"]
            if blocker_id is not None and blocker_id not in {b["id"] for b in active}:
                raise NotFound(
                    f"no active blocker {blocker_id}",
                    hint="list blockers with 'ouro arc query blocked'",
                )
            if not active:
                return {"event": None, "cleared": [], "blockedBecause": None}
            cleared = [b["id"] for b in active if blocker_id in (None, b["id"])]
            line = build_event(
                bundle,
                "blocker_cleared",
                f"unblocked: {', '.join(cleared)}",
                meta={"blockerId": blocker_id} if blocker_id else None,
                session_ref=session,
                turn_id=turn,
            )
            warnings = append_locked(bundle, line)
        return {**self._written(line, warnings), "cleared": cleared}

    @verb
    def handoff(self, text: Text, *, session: Session = None, turn: Turn = None) -> dict[str, Any]:
        """Record a handoff note for the next session; it is shown until a newer handoff
        or 'arc next', and the ask then needs confirmation ('arc confirm')."""
        from ouro.arc.recorder import record_event

        warnings: list[str] = []
        event = record_event(
            self.folder, "handoff", text, session_ref=session, turn_id=turn, warnings=warnings
        )
        return self._written(event, warnings)

    @verb
    def note(self, text: Text, *, session: Session = None, turn: Turn = None) -> dict[str, Any]:
        """Record a short flight-recorder note (an agent_note event)."""
        from ouro.arc.recorder import record_event

        warnings: list[str] = []
        event = record_event(
            self.folder, "agent_note", text, session_ref=session, turn_id=turn, warnings=warnings
        )
        return self._written(event, warnings)

    @verb
    def checkpoint(self) -> dict[str, Any]:
        """Rebuild the resume checkpoint from the whole event log and every claim and
        obligation file, then mark a safe checkpoint."""
        from ouro.arc import paths
        from ouro.arc.checkpoint import EventsOutside, day_files, save_stores, view
        from ouro.arc.checkpoint import write as write_checkpoint_file
        from ouro.arc.fold import catch_up, empty_state
        from ouro.arc.recorder import append_locked, build_event
        from ouro.arc.stores import scan_claims, scan_obligations

        bundle = self.folder
        with paths.arc_lock(bundle, "checkpoint"):
            events = paths.events_dir(bundle)
            try:  # the same guarded listing as every fold: nothing outside is read
                names = day_files(bundle, [])
            except EventsOutside as exc:
                raise OutsideBundle(
                    f"{exc}; nothing was written",
                    hint=f"replace the symlink {paths.EVENTS_DIR} with a real folder inside "
                    "the bundle (ouro reads and writes only inside its bundle)",
                ) from None
            state, _n = catch_up(empty_state(), events, names)
            stores = {"claims": scan_claims(bundle), "obligations": scan_obligations(bundle)}
            digest = save_stores(bundle, stores)
            write_checkpoint_file(bundle, view(bundle, state, stores, digest, []))
            line = build_event(bundle, "post_turn_persisted", "checkpoint rebuilt from the log")
            warnings = append_locked(bundle, line)
        return self._written(line, warnings)


def _require_ask(resume: dict[str, Any]) -> None:
    if not resume["currentAsk"]["value"]:
        raise NotFound(
            "no ask to confirm: none was ever recorded",
            hint="record one with 'ouro arc ask TEXT'",
        )


class Claim(Namespace):
    """Claims about files: their status is derived from evidence, never set."""

    @verb
    def add(
        self,
        text: Annotated[str, P("what you claim is true", limit=ARC_TEXT, nonblank=True)],
        *,
        about: Annotated[
            list[str], P("a file the claim is about: a bundle locator or a repo-relative path")
        ] = [],
        authority: Annotated[str, P("who asserts it", choices=AUTHORITIES)] = "agent",
        check: Annotated[
            str | None,
            P(
                "the command that proves it; only an observed run of exactly this command "
                "(ouro claim verify, or the host seeing it run) can verify the claim",
                limit=ARC_TEXT,
            ),
        ] = None,
        repo: Annotated[
            str | None,
            P(
                "repository folder for this claim's paths and check (default: bundle.json "
                "repoRoot, else the bundle's parent folder); relative to the bundle folder"
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Record a claim about files, with who asserts it and optionally the exact check
        command that proves it. Its status is derived from evidence, never set."""
        from ouro.arc import claims

        return claims.add_claim(
            self.folder,
            text,
            about=about,
            authority=authority,
            check=check,
            repo=repo,
        )

    @verb
    def evidence(
        self,
        claim_id: Annotated[str, P("the claim (cl-…)")],
        *,
        command: Annotated[str, P("the command that ran", limit=ARC_TEXT, nonblank=True)],
        exit_code: Annotated[int, P("its exit status")],
        output: Annotated[
            str | None, P("its output; only a digest is kept", limit=EVIDENCE_OUTPUT, file=True)
        ] = None,
        source: Annotated[list[str], P("a file the evidence is about (default: the claim's)")] = [],
        authority: Annotated[
            str, P("what kind of source reported it", choices=AUTHORITIES)
        ] = "command",
        by: Annotated[str | None, P("who asserts it (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Assert an evidence receipt for a claim: the command that ran, its exit status,
        a digest of its output, and the content hash of each source now. Typed-in
        evidence is recorded as asserted (with who asserted it) and never verifies a
        claim."""
        from ouro.arc import claims

        return claims.add_evidence(
            self.folder,
            claim_id,
            command=command,
            exit_code=exit_code,
            output=output,
            sources=source,
            authority=authority,
            by=by,
        )

    @verb
    def verify(
        self,
        claim_id: Annotated[str, P("the claim (cl-…)")],
        *,
        timeout: Annotated[float, P("seconds before the check is stopped", min=0.001)] = 300.0,
        yes: Annotated[
            bool, P("run a check that was not written through ouro here (read it first)")
        ] = False,
    ) -> dict[str, Any]:
        """Run a claim's declared check (a shell command) like a CI step: in the
        repository root, with a timeout and secrets scrubbed from the environment;
        records an observed-by-ouro receipt (exit status, duration, output digest,
        redacted tail). Exits 1 when the check fails. A check not written through ouro
        here needs yes."""
        from ouro.arc import claims

        return claims.verify_claim(self.folder, claim_id, timeout=timeout, yes=yes)

    @verb
    def supersede(
        self,
        claim_id: Annotated[str, P("the claim being replaced")],
        *,
        by: Annotated[str, P("the replacement claim")],
    ) -> dict[str, Any]:
        """Mark a claim as superseded by a replacement claim."""
        from ouro.arc import claims

        return claims.supersede_claim(self.folder, claim_id, by)

    @verb
    def update(
        self,
        claim_id: Annotated[str, P("the claim (cl-…)")],
        *,
        text: Annotated[
            str | None, P("the corrected claim text", limit=ARC_TEXT, nonblank=True)
        ] = None,
        about: Annotated[
            list[str] | None, P("the files the claim is about (replaces the list)")
        ] = None,
        check: Annotated[
            str | None,
            P(
                "the corrected check command; earlier receipts then no longer count",
                limit=ARC_TEXT,
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Correct a claim before it is verified: its text, the files it is about, or its
        check (the earlier values are kept in its history and the change is recorded as an
        event). A verified claim keeps its text and files; if its check changes it needs an
        observed run of the new check again (evidence_required)."""
        from ouro.arc import claims

        return claims.update_claim(self.folder, claim_id, text=text, about=about, check=check)

    @verb
    def list(
        self,
        *,
        status: Annotated[
            str | None, P("only claims with this derived status", choices=STATUSES)
        ] = None,
    ) -> dict[str, Any]:
        """List claims with their status derived now (re-hashing their sources)."""
        from ouro.arc import claims

        return claims.list_claims(self.folder, status)


class Obligation(Namespace):
    """What is owed, to whom, by when; a return obligation answers on a route."""

    @verb
    def add(
        self,
        what: Annotated[str, P("what is owed", limit=ARC_TEXT, nonblank=True)],
        *,
        to: Annotated[str, P("who it is owed to", nonblank=True)],
        due: Annotated[str | None, P("due date, YYYY-MM-DD")] = None,
        route: Annotated[
            str | None, P("CHANNEL:KEY to answer back on (a return)", limit=ARC_TEXT)
        ] = None,
        desk: Annotated[str | None, P("the Desk locator with the details")] = None,
    ) -> dict[str, Any]:
        """Record an obligation: what is owed, to whom, by when; with --route it is a
        return obligation answered on CHANNEL:KEY."""
        from ouro.arc import obligations

        return obligations.add_obligation(
            self.folder, what, owed_to=to, due=due, route=route, desk_locator=desk
        )

    @verb
    def close(
        self,
        obligation_id: Annotated[str, P("the obligation (ob-…)")],
        *,
        dropped: Annotated[bool, P("dropped rather than done")] = False,
    ) -> dict[str, Any]:
        """Close an obligation as done (or dropped)."""
        from ouro.arc import obligations

        return obligations.close_obligation(self.folder, obligation_id, dropped=dropped)

    @verb
    def list(
        self,
        *,
        status: Annotated[str | None, P("filter", choices=("open", "done", "dropped"))] = None,
    ) -> dict[str, Any]:
        """List obligations and return obligations with their status and routes."""
        from ouro.arc import obligations

        return obligations.list_obligations(self.folder, status)
