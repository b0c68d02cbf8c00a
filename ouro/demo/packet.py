"""Demo section (last): the packet a fresh session would receive."""

from __future__ import annotations

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step


def run(bundle: Bundle, step: Step, show: Show) -> None:
    packet = Library(bundle).orient()
    step(
        "what a fresh session receives (ouro orient; hooks inject this at session start)",
        packet["text"],
    )
