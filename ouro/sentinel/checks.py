"""The eight gauntlet checks, each a pure function of what the bundle shows.

Each returns a ``Check``: status ``pass | warn | fail | not_applicable``, a
detail line, the locators used as evidence, and for warn/fail a repair (actor
+ command). ``ouro.sentinel.gauntlet`` runs them and derives the verdict.
Locators are checked with ``Resolver``: the same answer as
``Locator.resolve`` + exists, with each folder realpath'd once.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ouro.arc.paths import CHECKPOINT, obligation_locator
from ouro.bundle import Bundle
from ouro.edge import is_blank
from ouro.errors import InvalidLocator
from ouro.store.locator import Locator

Status = Literal["pass", "warn", "fail", "not_applicable"]
Actor = Literal["agent-runnable", "human-required", "human-choice"]
POINTS = 10
EARNED = {"pass": POINTS, "warn": POINTS // 2, "fail": 0, "not_applicable": 0}
RECORD_SCAFFOLD = (
    ("desk/_record/diary/facts.jsonl", "file"),
    ("desk/_record/diary/entities.json", "file"),
    ("desk/_record/notes", "dir"),
)
CHECK_TITLES = {
    "current_ask": "current ask",
    "next_safe_action": "next safe action",
    "stale_guard": "stale guard",
    "obligations_visible": "obligations visible",
    "return_routes_visible": "return routes visible",
    "blockers_surfaced": "blockers surfaced",
    "desk_record_ready": "Desk record ready",
    "source_provenance": "source provenance",
}


#: Receipts list at most this many locators or ids per list (with the full count),
#: so a receipt stays small however many obligations or claims there are.
LIST_CAP = 25


def capped(values: Iterable[str]) -> list[str]:
    return sorted(set(values))[:LIST_CAP]


@dataclass
class Check:
    id: str
    status: Status
    detail: str
    evidence: list[str] = field(default_factory=list)
    actor: Actor | None = None
    command: str | None = None

    def to_json(self) -> dict[str, Any]:
        possible = 0 if self.status == "not_applicable" else POINTS
        out: dict[str, Any] = {
            "id": self.id,
            "title": CHECK_TITLES[self.id],
            "status": self.status,
            "score": {"earned": EARNED[self.status], "possible": possible},
            "detail": self.detail,
            "evidence": capped(self.evidence),
            "evidenceCount": len(set(self.evidence)),
        }
        if self.status in ("warn", "fail"):
            out["repair"] = {"actor": self.actor, "command": self.command}
        return out


@dataclass
class PacketView:
    """What the gauntlet needs from the orientation packet."""

    text: str
    locators: list[str] = field(default_factory=list)
    #: item texts by section
    sections: dict[str, list[str]] = field(default_factory=dict)
    #: items dropped by the budget, by section
    dropped: dict[str, int] = field(default_factory=dict)


def _short(text: str | None, limit: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Resolver:
    """Checks that locators name existing paths inside the bundle.

    Same answer as ``Locator.resolve`` + ``exists``, but each folder is
    realpath'd once: hundreds of obligation locators share two folders.
    """

    def __init__(self, bundle: Bundle) -> None:
        self.base = os.path.realpath(bundle.root)
        self._folders: dict[str, str | None] = {}

    def _inside(self, real: str) -> bool:
        return real == self.base or real.startswith(self.base + os.sep)

    def _folder(self, rel: str) -> str | None:
        if rel not in self._folders:
            real = os.path.realpath(os.path.join(self.base, rel)) if rel else self.base
            self._folders[rel] = real if self._inside(real) else None
        return self._folders[rel]

    def why_not(self, locator: str) -> str | None:
        """None when ``locator`` names an existing path inside the bundle; else why not."""
        try:
            loc = Locator.parse(locator)
        except InvalidLocator as exc:
            return exc.message
        parent, _, name = loc.path.rpartition("/")
        folder = self._folder(parent)
        if folder is None:
            return f"{loc.path} resolves outside the bundle (through a symlink)"
        full = os.path.join(folder, name)
        try:
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(full)
                if not self._inside(real):
                    return f"{loc.path} resolves outside the bundle (through a symlink)"
                os.stat(real)
        except FileNotFoundError:
            return f"{loc.path} does not exist"
        except OSError as exc:
            return f"{loc.path}: cannot stat ({exc.strerror})"
        return None


def resolves(bundle: Bundle, locator: str) -> str | None:
    """None when ``locator`` names an existing path inside the bundle; else why not."""
    return Resolver(bundle).why_not(locator)


def check_current_ask(resume: dict[str, Any]) -> Check:
    ask = resume.get("currentAsk") or {}
    evidence = [ask["locator"]] if ask.get("locator") else []
    confidence = ask.get("confidence")
    if is_blank(ask.get("value")):  # none, or blank text in the files: missing
        return _ask_unknown(ask, evidence)
    if confidence == "current":
        return Check("current_ask", "pass", f"current: {_short(ask['value'])}", evidence)
    if confidence == "needs_confirmation":
        return Check(
            "current_ask",
            "warn",
            f"needs confirmation: {_short(ask.get('reason'), 200)}",
            evidence,
            "agent-runnable",
            "ouro arc confirm  # or 'ouro arc ask TEXT' when the work changed",
        )
    if confidence == "stale_risky":
        return Check(
            "current_ask",
            "warn",
            f"stale_risky: {_short(ask.get('reason'), 160)}",
            evidence,
            "agent-runnable",
            "ouro arc ask TEXT  # re-confirm what you are working on",
        )
    return _ask_unknown(ask, evidence)


def _ask_unknown(ask: dict[str, Any], evidence: list[str]) -> Check:
    blank = isinstance(ask.get("value"), str)  # a blank value read from an older receipt
    reason = "the recorded ask is blank" if blank else ask.get("reason") or "no ask recorded"
    return Check(
        "current_ask",
        "fail",
        f"unknown: {_short(reason, 160)}",
        evidence,
        "agent-runnable",
        "ouro arc ask TEXT",
    )


def check_next_action(resume: dict[str, Any]) -> Check:
    nxt = resume.get("nextSafeAction") or {}
    evidence = [nxt["locator"]] if nxt.get("locator") else []
    if not is_blank(nxt.get("value")):
        stops = len(nxt.get("stopBefore") or [])
        extra = f" (stop before {stops} thing(s))" if stops else ""
        return Check("next_safe_action", "pass", f"{_short(nxt['value'])}{extra}", evidence)
    prev = nxt.get("fromPreviousAsk")
    if prev:
        return Check(
            "next_safe_action",
            "fail",
            f"not current: the last next safe action ({_short(prev.get('value'), 60)}) was "
            "recorded for the previous ask",
            [prev["locator"]] if prev.get("locator") else [],
            "agent-runnable",
            "ouro arc next TEXT  # the next safe action for the current ask",
        )
    blank = isinstance(nxt.get("value"), str) or any(
        isinstance(m, str) and m.startswith("nextSafeAction: blank")
        for m in resume.get("missing") or []
    )
    return Check(
        "next_safe_action",
        "fail",
        "unknown: the recorded next safe action is blank"
        if blank
        else "unknown: no next safe action recorded",
        evidence,
        "agent-runnable",
        "ouro arc next TEXT [--stop-before X]",
    )


def check_stale_guard(resume: dict[str, Any]) -> Check:
    recorder = resume.get("recorder") or {}
    blockers = resume.get("blockers") or []
    evidence = [b["locator"] for b in blockers if b.get("locator")]
    if recorder.get("health") != "ok":
        codes = sorted({i.get("code", "?") for i in recorder.get("issues", [])})
        return Check(
            "stale_guard",
            "fail",
            f"recorder {recorder.get('health', 'unknown')}: {', '.join(codes) or 'no detail'}",
            evidence,
            "human-required",
            "ouro arc resume --json  # read recorder.issues; bad lines are kept for repair",
        )
    if not resume.get("completeState"):
        missing = "; ".join(resume.get("missing") or []) or "state incomplete"
        return Check(
            "stale_guard",
            "fail",
            f"incomplete state: {_short(missing, 200)}",
            evidence,
            "agent-runnable",
            "ouro arc ask TEXT; ouro arc next TEXT  # record what is missing",
        )
    if blockers:
        return Check(
            "stale_guard",
            "fail",
            f"blocked: {_short(resume.get('blockedBecause'), 160)}",
            evidence,
            "human-choice",
            "ouro arc query blocked  # resolve, then 'ouro arc unblock ID'",
        )
    return Check("stale_guard", "pass", "complete state, recorder ok, no blockers", evidence)


def _store(resume_full: dict[str, Any], name: str) -> dict[str, Any]:
    stores = resume_full.get("stores")
    store = stores.get(name) if isinstance(stores, dict) else None
    return store if isinstance(store, dict) else {"error": "store summary unavailable"}


def check_obligations(bundle: Bundle, resume_full: dict[str, Any]) -> Check:
    store = _store(resume_full, "obligations")
    if store.get("error"):
        return Check(
            "obligations_visible",
            "fail",
            f"obligations: unknown ({store['error']})",
            ["arc/obligations"],
            "human-required",
            "ls -la arc/obligations  # restore the folder; ouro never guesses what was owed",
        )
    problems = [f"{oid}: {why}" for oid, why in sorted(store.get("errors", {}).items())]
    evidence: list[str] = []
    items = store.get("items", {})
    resolver = Resolver(bundle)
    for oid, item in sorted(items.items()):
        own = obligation_locator(oid, inner=bool(item.get("inner")))
        evidence.append(own)
        why = resolver.why_not(own)
        if why:
            problems.append(f"{oid}: {why}")
        desk = item.get("deskLocator")
        if desk:
            evidence.append(desk)
            why = resolver.why_not(desk)
            if why:
                problems.append(f"{oid}: Desk locator {desk}: {why}")
    if problems:
        return Check(
            "obligations_visible",
            "fail",
            f"{len(problems)} obligation problem(s): {_short('; '.join(problems), 200)}",
            evidence,
            "agent-runnable",
            "ouro obligation list  # fix or close the named obligations",
        )
    if not items:
        return Check("obligations_visible", "not_applicable", "no open obligations", evidence)
    return Check(
        "obligations_visible", "pass", f"{len(items)} open obligation(s), all resolvable", evidence
    )


def check_return_routes(resume_full: dict[str, Any]) -> Check:
    store = _store(resume_full, "obligations")
    if store.get("error"):
        return Check(
            "return_routes_visible",
            "fail",
            f"return obligations: unknown ({store['error']})",
            ["arc/obligations/inner"],
            "human-required",
            "ls -la arc/obligations/inner",
        )
    inner = {k: v for k, v in store.get("items", {}).items() if v.get("inner")}
    unreadable = sorted(k for k in store.get("errors", {}) if k.startswith("inner/"))
    if not inner and not unreadable:
        return Check("return_routes_visible", "not_applicable", "no open return obligations")
    evidence = [obligation_locator(k, inner=True) for k in sorted(inner)]
    missing = [f"{k[len('inner/') :]} (unreadable)" for k in unreadable]
    for oid, item in sorted(inner.items()):
        route = item.get("route")
        if not isinstance(route, dict) or not all(
            route.get(k) for k in ("recipient", "channel", "key")
        ):
            missing.append(oid)
    if missing:
        return Check(
            "return_routes_visible",
            "fail",
            f"return obligation(s) without a complete route: {', '.join(missing)}",
            evidence,
            "human-required",
            "ouro obligation list  # re-add with --route CHANNEL:KEY",
        )
    return Check(
        "return_routes_visible", "pass", f"{len(inner)} return route(s) recorded", evidence
    )


def check_blockers(resume: dict[str, Any], packet: PacketView) -> Check:
    blockers = resume.get("blockers") or []
    if not blockers:
        return Check("blockers_surfaced", "not_applicable", "nothing is blocked")
    evidence = [b["locator"] for b in blockers if b.get("locator")]
    shown = " ".join(packet.sections.get("blockers", []))
    hidden = [b["id"] for b in blockers if b["id"] not in shown]
    problems = []
    # Blockers the budget dropped are still surfaced: the section says "+N more".
    if len(hidden) > packet.dropped.get("blockers", 0):
        problems.append(f"not in the orientation packet: {', '.join(hidden)}")
    if resume.get("canContinue"):
        problems.append("the checkpoint still says canContinue")
    if problems:
        return Check(
            "blockers_surfaced",
            "fail",
            "; ".join(problems),
            evidence,
            "human-required",
            "ouro orient  # the blocker must show; report this as an ouro bug",
        )
    return Check(
        "blockers_surfaced",
        "pass",
        f"{len(blockers)} blocker(s) shown and continuation stopped",
        evidence,
    )


def _desk_refs(resume: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("currentAsk", "nextSafeAction"):
        value = resume.get(key)
        refs = value.get("refs") if isinstance(value, dict) else None
        out += [r for r in refs or [] if isinstance(r, str)]
    return sorted(set(out))


def check_desk_record(bundle: Bundle, resume: dict[str, Any] | None = None) -> Check:
    """The record scaffold, no legacy root, and every Desk locator Arc points at resolves."""
    from ouro.arc.desklinks import locator_problem

    refs = _desk_refs(resume or {})
    broken = [f"{ref}: {why}" for ref in refs if (why := locator_problem(bundle, ref))]
    if broken:
        return Check(
            "desk_record_ready",
            "fail",
            f"{len(broken)} Desk locator(s) named by the ask/next do not resolve: "
            f"{_short('; '.join(broken), 200)}",
            refs,
            "agent-runnable",
            "ouro arc resume  # then 'ouro arc ask/next … --ref LOCATOR' with records that exist",
        )
    legacy = bundle.legacy_roots()
    if legacy:
        names = ", ".join(f"{n}/" for n in legacy)
        return Check(
            "desk_record_ready",
            "fail",
            f"legacy root(s) active: {names}",
            [],
            "agent-runnable",
            "ouro migrate --dry-run  # then 'ouro migrate'",
        )
    missing = []
    for loc, kind in RECORD_SCAFFOLD:
        path = bundle.root / loc
        if not (path.is_file() if kind == "file" else path.is_dir()):
            missing.append(loc)
    evidence = [loc for loc, _ in RECORD_SCAFFOLD if loc not in missing] + refs
    if missing:
        return Check(
            "desk_record_ready",
            "fail",
            f"desk/_record scaffold missing: {', '.join(missing)}",
            evidence,
            "agent-runnable",
            "mkdir -p desk/_record/diary desk/_record/notes  # then restore the named files",
        )
    linked = f"; {len(refs)} Desk locator(s) from the ask/next resolve" if refs else ""
    return Check("desk_record_ready", "pass", f"desk/_record scaffold present{linked}", evidence)


def _resume_locators(resume: dict[str, Any]) -> list[str]:
    out = []
    for key in ("currentAsk", "nextSafeAction", "lastEvent", "lastSafeCheckpoint"):
        value = resume.get(key)
        if isinstance(value, dict) and isinstance(value.get("locator"), str):
            out.append(value["locator"])
    out += [b["locator"] for b in resume.get("blockers") or [] if b.get("locator")]
    return out


def check_provenance(
    bundle: Bundle, resume: dict[str, Any], packet_locators: Iterable[str]
) -> Check:
    locators = sorted(set(_resume_locators(resume)) | set(packet_locators))
    # The checkpoint is derived: when it is missing the resume is rebuilt from the
    # log and the recorder reports the gap itself, so it is not a broken source.
    resolver = Resolver(bundle)
    broken = [
        f"{loc}: {why}" for loc in locators if loc != CHECKPOINT and (why := resolver.why_not(loc))
    ]
    if broken:
        return Check(
            "source_provenance",
            "fail",
            f"{len(broken)} locator(s) do not resolve: {_short('; '.join(broken), 200)}",
            locators,
            "human-required",
            "ouro orient --json  # find what points at the missing files",
        )
    recorder = resume.get("recorder") or {}
    degraded = [
        _short(i.get("message"), 120)
        for i in recorder.get("issues", [])
        if i.get("severity") == "degraded"
    ]
    if recorder.get("health") != "ok" or degraded:
        return Check(
            "source_provenance",
            "warn",
            f"degraded source(s): {_short('; '.join(degraded) or str(recorder.get('health')), 200)}",
            locators,
            "human-required",
            "ouro arc resume --json  # recorder.issues names each gap",
        )
    return Check(
        "source_provenance",
        "pass",
        f"{len(locators)} locator(s) resolve, no source degraded",
        locators,
    )
