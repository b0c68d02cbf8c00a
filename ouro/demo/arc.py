"""Demo section: Arc — the ask, the next safe action, a claim with evidence,
an obligation with a return route, and the orientation packet."""

from __future__ import annotations

from ouro.arc import claims, obligations
from ouro.arc.tools_arc import DeskLinkInput, NextInput, record_ask, record_next, render_written
from ouro.arc.tools_claims import render_claim, render_obligation
from ouro.bundle import Bundle
from ouro.demo import Step
from ouro.orient import build_packet


def run(bundle: Bundle, step: Step) -> None:
    step(
        "ouro arc ask: record what you are asked to do",
        render_written(
            record_ask(bundle, DeskLinkInput(text="make the login form reject empty passwords"))
        ),
    )
    step(
        "ouro arc next: the next safe action, and what to stop before",
        render_written(
            record_next(bundle, NextInput(text="run the form tests", stop_before=["deploying"]))
        ),
    )
    target = bundle.root / "desk" / "_meta" / "featured.md"
    claim = claims.add_claim(
        bundle,
        "the featured page exists and is readable",
        about=[bundle.locator(target)],
        authority="agent",
        check=f"test -r {bundle.root.name}/desk/_meta/featured.md",
    )
    step("ouro claim add: a claim starts unproven", render_claim(claim))
    step(
        "ouro claim verify: ouro runs the declared check and keeps a receipt",
        render_claim(claims.verify_claim(bundle, claim["id"])),
    )
    ob = obligations.add_obligation(
        bundle, "tell Ari when the fix ships", owed_to="ari", route="slack:C0123"
    )
    step("ouro obligation add --route: a return obligation", render_obligation(ob))
    step("ouro orient: the start-of-turn packet (pure, budgeted)", build_packet(bundle).text)
