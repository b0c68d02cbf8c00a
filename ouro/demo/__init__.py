"""``ouro demo``: a guided walk through ouro on a scratch bundle.

Each section is a module in this package with ``run(bundle, step)``; ``step``
prints one titled step (and records it for ``--json``). Sections run in order.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle

SECTIONS = ("foundation", "arc", "desk", "habits", "sentinel", "packet")

Step = Callable[[str, str], None]


def run_demo(path: Path | None, echo: Callable[[str], None] | None) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []

    def step(title: str, detail: str) -> None:
        steps.append({"title": title, "detail": detail})
        if echo:
            echo(f"\n== {len(steps)}. {title}")
            if detail:
                echo(detail.rstrip("\n"))

    target = path or Path(tempfile.mkdtemp(prefix="ouro-demo-")) / "demo.ouro"
    bundle = Bundle.init(target, agent="demo")
    step("ouro init", f"created a bundle at {bundle.root}")
    for name in SECTIONS:
        module = importlib.import_module(f"ouro.demo.{name}")
        module.run(bundle, step)
    if echo:
        echo(f"\nThe demo bundle stays at {bundle.root}; look around, or delete it.")
    return steps
