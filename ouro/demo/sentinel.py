"""Demo section (always last): the context-loss sentinel and a recovery drill."""

from __future__ import annotations

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step


def run(bundle: Bundle, step: Step, show: Show) -> None:
    b = Library(bundle)
    resume = b.arc.resume()
    if not resume["currentAsk"]["value"] or resume["currentAsk"]["confidence"] != "current":
        b.arc.ask("show the sentinel")
    if not resume["nextSafeAction"]["value"]:
        b.arc.next("run a drill")
    ready = b.sentinel.refresh(trigger="session_start")
    step(
        "ouro sentinel refresh: could a fresh agent resume from the bundle alone?",
        show(("sentinel", "refresh"), ready),
    )
    down = b.sentinel.refresh(
        trigger="provider_failover",
        signals=['{"kind": "provider_lane", "source": "model-provider", "status": "down"}'],
    )
    step(
        "an outside blocker: the receipt is blocked, recovery points at the last ready one",
        show(("sentinel", "refresh"), down),
    )
    back = b.sentinel.refresh(
        trigger="provider_failover",
        signals=['{"kind": "provider_lane", "source": "model-provider", "status": "ok"}'],
    )
    step(
        "the provider is back: the lane remembers each source's last word, so it takes "
        "fresh evidence (a signal or a declared readiness check) to be ready again",
        show(("sentinel", "refresh"), back),
    )
    result = b.drill()
    step(
        "ouro drill: each guarantee proven on a throwaway copy of the bundle",
        show(("drill",), result),
    )
