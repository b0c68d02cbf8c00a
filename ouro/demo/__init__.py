"""``ouro demo``: a guided walk through ouro on a scratch bundle.

Each section is a module in this package with ``run(bundle, step, show)``;
``step`` prints one titled step (and records it for ``--json``); ``show(path,
result)`` is a result as text for people, as the command at that CLI path prints
it (the CLI passes its renderers, ``ouro.cli.render.text``: the demo never imports
the CLI). Sections run in order.
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
Show = Callable[[tuple[str, ...], dict[str, Any]], str]


def _plain(path: tuple[str, ...], result: dict[str, Any]) -> str:
    import json

    return json.dumps(result, indent=2, ensure_ascii=False, default=str)


def run_demo(
    path: Path | None, echo: Callable[[str], None] | None, show: Show = _plain
) -> list[dict[str, Any]]:
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
        module.run(bundle, step, show)
    if echo:
        echo(f"\nThe demo bundle stays at {bundle.root}; look around, or delete it.")
    return steps
