"""``ouro init`` and ``ouro demo``."""

from __future__ import annotations

from pathlib import Path

import click

from ouro.bundle import Bundle
from ouro.cli.common import wants_json, with_json
from ouro.cli.output import emit


@click.command("init")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--agent", help="Agent name recorded in bundle.json (default: folder name).")
@with_json
@click.pass_context
def init_cmd(ctx: click.Context, path: Path, agent: str | None, json_mode: bool) -> None:
    """Create a new bundle at PATH with the canonical layout."""
    bundle = Bundle.init(path, agent=agent)
    meta = bundle.read_meta()
    result = {
        "bundle": str(bundle.root),
        "agent": meta["agent"],
        "layoutVersion": meta["layoutVersion"],
    }
    emit(
        result,
        json_mode=wants_json(ctx, json_mode),
        render=lambda r: (
            f"created bundle {r['bundle']} for agent {r['agent']!r}\n"
            f"next: export OURO_BUNDLE={r['bundle']}  (or pass --bundle)"
        ),
    )


@click.command("demo")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@with_json
@click.pass_context
def demo_cmd(ctx: click.Context, path: Path | None, json_mode: bool) -> None:
    """Walk through what ouro does, on a scratch bundle (a temp dir unless PATH)."""
    from ouro.demo import run_demo

    steps = run_demo(path, echo=None if wants_json(ctx, json_mode) else click.echo)
    if wants_json(ctx, json_mode):
        emit({"steps": steps}, json_mode=True)
