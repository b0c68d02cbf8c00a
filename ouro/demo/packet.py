"""Demo section (last): the packet a fresh session would receive."""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.demo import Step
from ouro.orient import build_packet


def run(bundle: Bundle, step: Step) -> None:
    packet = build_packet(bundle)
    step(
        "what a fresh session receives (ouro orient; hooks inject this at session start)",
        packet.text,
    )
