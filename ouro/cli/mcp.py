"""``ouro mcp [--bundle PATH]``: serve the tool registry over MCP on stdio.

The bundle is located before the SDK is imported, so a missing or legacy
bundle is refused at once (message and hint on stderr, exit 3) and no other
command ever pays for importing ``mcp``. Stdout belongs to the protocol:
nothing else is written there.
"""

from __future__ import annotations

import logging

import click

from ouro.bundle import Bundle
from ouro.cli.common import bundle_option_value


@click.command("mcp")
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(file_okay=False),
    help="Bundle to serve (default: the global --bundle, $OURO_BUNDLE, a .ouro/ouro.toml "
    "pointer upwards, bundle.json upwards, else the one *.ouro folder here).",
)
@click.option(
    "--tools",
    "tool_set",
    type=click.Choice(["lean", "all"]),
    default="lean",
    show_default=True,
    help="lean: the tools an agent uses while it works (a short tools/list); all: every tool.",
)
@click.pass_context
def mcp_cmd(ctx: click.Context, bundle_path: str | None, tool_set: str) -> None:
    """Serve ouro's tools to an MCP client over stdin/stdout, bound to one bundle.

    By default the lean set an agent uses while it works; --tools all serves every tool.
    """
    bundle = Bundle.locate(bundle_path or bundle_option_value(ctx))
    # Tracebacks of failing tools go to stderr, which MCP clients keep as a log.
    logging.basicConfig(level=logging.WARNING, format="ouro mcp: %(levelname)s %(message)s")
    from ouro.mcp import serve

    serve(bundle, tool_set)
