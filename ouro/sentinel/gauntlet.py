"""The recovery gauntlet: could a fresh agent resume from this bundle alone?

A pure function of the bundle (it reads the resume checkpoint as of now, the
orientation packet and a few Desk paths; it writes nothing). Eight checks, each
``pass | warn | fail | not_applicable`` with a score (pass 10/10, warn 5/10,
fail 0/10, not_applicable 0/0), a detail line, the locators it used as
evidence, and a repair (actor + command) when it did not pass:

1. ``current_ask``        present and current (needs_confirmation or stale_risky → warn,
                          unknown → fail)
2. ``next_safe_action``   present for the current ask (unknown, or recorded for the
                          previous ask → fail)
3. ``stale_guard``        complete state, recorder ok, no blockers
4. ``obligations_visible``    every open obligation has a resolvable locator
5. ``return_routes_visible``  every return obligation has a route
6. ``blockers_surfaced``  blocked work is in the packet and stops continuation
7. ``desk_record_ready``  ``desk/_record`` scaffold present, no legacy root, every Desk
                          locator the ask / next safe action names resolves
8. ``source_provenance``  every locator used resolves; no source is degraded

Verdict: any fail → blocked, else any warn → watch, else ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ouro.arc.resume import INTERNAL, read_resume_full
from ouro.bundle import Bundle
from ouro.orient_types import Orient
from ouro.sentinel.checks import (
    EARNED,
    LIST_CAP,
    POINTS,
    Check,
    PacketView,
    capped,
    check_blockers,
    check_current_ask,
    check_desk_record,
    check_next_action,
    check_obligations,
    check_provenance,
    check_return_routes,
    check_stale_guard,
)
from ouro.sentinel.signals import Signal

__all__ = [
    "LIST_CAP",
    "Check",
    "Evaluation",
    "Gauntlet",
    "PacketView",
    "capped",
    "check_provenance",
    "evaluate",
    "run_gauntlet",
]


@dataclass
class Gauntlet:
    checks: list[Check]

    @property
    def verdict(self) -> str:
        statuses = {c.status for c in self.checks}
        return "blocked" if "fail" in statuses else "watch" if "warn" in statuses else "ready"

    def score(self) -> dict[str, Any]:
        earned = sum(EARNED[c.status] for c in self.checks)
        possible = sum(POINTS for c in self.checks if c.status != "not_applicable")
        pct = round(100.0 * earned / possible, 1) if possible else 100.0
        return {"earned": earned, "possible": possible, "percentage": pct}

    def sources(self) -> list[str]:
        return sorted({loc for c in self.checks for loc in c.evidence})

    def signals(self) -> list[Signal]:
        return [
            Signal(
                kind="gauntlet",
                source=f"gauntlet:{c.id}",
                status=c.status,
                verdict_impact="blocked" if c.status == "fail" else "watch",
                repair_actor=c.actor,
                repair_command=c.command,
                detail=c.detail,
            )
            for c in self.checks
            if c.status in ("warn", "fail")
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "score": self.score(),
            "checks": [c.to_json() for c in self.checks],
        }


@dataclass
class Evaluation:
    """What one look at the bundle saw: the resume, the packet, the gauntlet."""

    resume: dict[str, Any]
    packet: PacketView
    gauntlet: Gauntlet


def run_gauntlet(bundle: Bundle, resume_full: dict[str, Any], packet: PacketView) -> Gauntlet:
    resume = {k: v for k, v in resume_full.items() if k not in INTERNAL}
    return Gauntlet(
        [
            check_current_ask(resume),
            check_next_action(resume),
            check_stale_guard(resume),
            check_obligations(bundle, resume_full),
            check_return_routes(resume_full),
            check_blockers(resume, packet),
            check_desk_record(bundle, resume),
            check_provenance(bundle, resume, packet.locators),
        ]
    )


def evaluate(bundle: Bundle, orient: Orient) -> Evaluation:
    """Read the bundle once and run the gauntlet (pure). ``orient`` builds the
    packet (``ouro.orient.build_packet``, passed in: it sits above the domains),
    so the gauntlet grades exactly what a fresh agent would be shown."""
    resume_full = read_resume_full(bundle)
    packet = orient(bundle)
    sections: dict[str, list[str]] = {}
    for item in packet.items:
        sections.setdefault(item.section, []).append(item.text)
    view = PacketView(
        text=packet.text,
        locators=sorted({item.locator for item in packet.items if item.locator}),
        sections=sections,
        dropped=dict(packet.dropped),
    )
    resume = {k: v for k, v in resume_full.items() if k not in INTERNAL}
    return Evaluation(resume, view, run_gauntlet(bundle, resume_full, view))
