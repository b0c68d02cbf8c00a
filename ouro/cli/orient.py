"""``ouro orient``: print the orientation packet (text, or JSON)."""

from __future__ import annotations

import click

from ouro.cli.common import bundle_from, wants_json, with_json
from ouro.cli.output import emit


@click.command("orient")
@click.option(
    "--budget",
    type=click.IntRange(min=200),
    default=2500,
    show_default=True,
    help="Most characters the packet may take.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for prompts, json for machines.",
)
@with_json
@click.pass_context
def orient_cmd(ctx: click.Context, budget: int, fmt: str, json_mode: bool) -> None:
    """Print the start-of-turn packet: ask, next safe action, blockers, gaps,
    obligations, unverified claims, each with its locator. Writes nothing."""
    from ouro.orient import build_packet

    packet = build_packet(bundle_from(ctx), budget=budget)
    if fmt == "json" or wants_json(ctx, json_mode):
        emit(packet.to_json(), json_mode=True)
    else:
        click.echo(packet.text, nl=False)
