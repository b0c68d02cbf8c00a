"""Demo section: Arc — the ask, the next safe action, a claim with evidence,
an obligation with a return route, and the orientation packet."""

from __future__ import annotations

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step


def run(bundle: Bundle, step: Step, show: Show) -> None:
    b = Library(bundle)
    step(
        "ouro arc ask: record what you are asked to do",
        show(("arc", "ask"), b.arc.ask("make the login form reject empty passwords")),
    )
    step(
        "ouro arc next: the next safe action, and what to stop before",
        show(("arc", "next"), b.arc.next("run the form tests", stop_before=["deploying"])),
    )
    target = bundle.root / "desk" / "_meta" / "featured.md"
    claim = b.claim.add(
        "the featured page exists and is readable",
        about=[bundle.locator(target)],
        authority="agent",
        check=f"test -r {bundle.root.name}/desk/_meta/featured.md",
    )
    step("ouro claim add: a claim starts unproven", show(("claim", "add"), claim))
    step(
        "ouro claim verify: ouro runs the declared check and keeps a receipt",
        show(("claim", "verify"), b.claim.verify(claim["id"])),
    )
    ob = b.obligation.add("tell Ari when the fix ships", to="ari", route="slack:C0123")
    step("ouro obligation add --route: a return obligation", show(("obligation", "add"), ob))
    step("ouro orient: the start-of-turn packet (pure, budgeted)", b.orient()["text"])
