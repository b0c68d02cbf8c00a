"""``ouro mcp``: serve the tool registry over MCP on stdio, bound to one bundle.

The bundle is located before the server (``ouro.mcp``) is imported, so a
missing or legacy bundle is refused at once (message and hint on stderr, exit
3). Stdout belongs to the protocol: nothing else is written there.
"""

from __future__ import annotations

import logging
from typing import Annotated

from ouro.spec import P


def mcp(
    *,
    tools: Annotated[
        str,
        P(
            "lean: the tools an agent uses while it works (a short tools/list; the default); "
            "all: every tool.",
            choices=("lean", "all"),
        ),
    ] = "lean",
    session: Annotated[
        str | None,
        P(
            "serve a habit's private session (hs-…): only its granted tools, each call gated "
            "by its policy and recorded for its receipt (started by 'ouro habits run')"
        ),
    ] = None,
) -> int:
    """Serve ouro's tools to an MCP client over stdin/stdout, bound to one bundle (the
    global --bundle, else the usual discovery).

    By default the lean set an agent uses while it works; --tools all serves every tool.
    """
    from ouro.cli.common import bundle_from

    bundle = bundle_from()
    # Tracebacks of failing tools go to stderr, which MCP clients keep as a log.
    logging.basicConfig(level=logging.WARNING, format="ouro mcp: %(levelname)s %(message)s")
    from ouro.mcp import serve

    serve(bundle, tools, session)
    return 0
