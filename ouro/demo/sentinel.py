"""Demo section (always last): the context-loss sentinel and a recovery drill."""

from __future__ import annotations

from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.demo import Step
from ouro.sentinel.api import (
    DrillInput,
    RefreshInput,
    drill,
    render_drill,
    render_refresh,
    sentinel_refresh,
)


def run(bundle: Bundle, step: Step) -> None:
    resume = read_resume(bundle)
    if not resume["currentAsk"]["value"] or resume["currentAsk"]["confidence"] != "current":
        record_event(bundle, "turn_accepted", "demo ask", current_ask="show the sentinel")
    if not resume["nextSafeAction"]["value"]:
        record_event(bundle, "agent_note", "demo next", next_safe_action="run a drill")
    ready = sentinel_refresh(bundle, RefreshInput(trigger="session_start"))
    step(
        "ouro sentinel refresh: could a fresh agent resume from the bundle alone?",
        render_refresh(ready),
    )
    down = sentinel_refresh(
        bundle,
        RefreshInput(
            trigger="provider_failover",
            signals=['{"kind": "provider_lane", "source": "model-provider", "status": "down"}'],
        ),
    )
    step(
        "an outside blocker: the receipt is blocked, recovery points at the last ready one",
        render_refresh(down),
    )
    result = drill(bundle, DrillInput())
    step(
        "ouro drill: each guarantee proven on a throwaway copy of the bundle",
        render_drill(result),
    )
