"""``ouro mcp``: a stdio MCP server generated from the tool registry.

Contract:
- Every tool in ``ouro.tools.TOOLS`` is listed, and nothing else: its name,
  description, the JSON schema of its pydantic input model, and its
  read-only / destructive / idempotent / open-world hints (open-world only
  where a tool runs a shell command: ``claim_verify``,
  ``desk_task_verify``, ``habits_run``). No tool is wired here by hand.
- A call goes through ``ouro.tools.invoke`` -- the function the CLI calls -- so
  a result is the object ``ouro ... --json`` prints: JSON text content plus the
  same dict as structured content.
- An ``OuroError`` (bad arguments included: they fail pydantic validation and
  name the field) becomes a tool error (``isError``) whose text is the message
  and the hint; ``structuredContent`` carries ``{"error": {type, message,
  hint}}``, the object the CLI prints for an error with ``--json``. Any other
  exception becomes a tool error too, and the server keeps serving. An unknown
  tool name is a protocol error (``INVALID_PARAMS``), as the MCP spec asks.
- The server is bound to one bundle, opened once at start; locator rules inside
  the domain functions keep every argument inside it.
- Calls are served one at a time per server process, off the event loop, so a
  tool waiting on a file lock never stalls the protocol; several server
  processes on one bundle are kept safe by the domains' file locks.

We use the SDK's low-level ``Server`` rather than ``MCPServer``: the high-level
server derives each schema from a Python signature, while ours must come from
the registry's pydantic models, and it would replace the text of unexpected
errors. This module imports the ``mcp`` SDK (heavy); only ``ouro mcp`` loads it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ouro import tools as registry
from ouro.bundle import Bundle
from ouro.errors import OuroError

SERVER_NAME = "ouro"
INSTRUCTIONS = (
    "ouro keeps this agent's bundle: Arc (what is live, owed and claimed) and Desk "
    "(tracks, tasks and the record: diary facts, daily reflections, notes). Call "
    "info to see where the bundle is; tool errors carry a hint naming the next step."
)

log = logging.getLogger(__name__)


def tool_definition(tool: registry.Tool) -> types.Tool:
    """The MCP description of one registry tool."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.model().model_json_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive,
            idempotent_hint=tool.idempotent,
            open_world_hint=tool.open_world,
        ),
    )


def tool_definitions(tools: Iterable[registry.Tool] = registry.TOOLS) -> list[types.Tool]:
    return [tool_definition(tool) for tool in tools]


def _json_text(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()


def _error_result(payload: dict[str, Any]) -> types.CallToolResult:
    text = (
        payload["message"]
        if not payload.get("hint")
        else f"{payload['message']}\nhint: {payload['hint']}"
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"error": payload},
        is_error=True,
    )


def call_tool(bundle: Bundle, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run one registry tool and turn its outcome into an MCP tool result.

    Raises ``MCPError`` only for an unknown tool name (a protocol error).
    """
    try:
        registry.get(name)
    except OuroError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None
    try:
        result = registry.invoke(name, bundle, arguments or {})
    except OuroError as exc:
        return _error_result(exc.to_json())
    # A bug in one tool must not take the server down with it: report it as a
    # tool error with the exception named, and log the traceback to stderr.
    except Exception as exc:
        log.exception("tool %s failed", name)
        return _error_result(
            {
                "type": "internal",
                "message": f"{name} failed: {type(exc).__name__}: {exc}",
                "hint": "this is a bug in ouro; the server is still running, and the "
                "traceback is on its stderr",
            }
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_json_text(result))],
        structured_content=result,
    )


def build_server(bundle: Bundle) -> Server[Any]:
    """A low-level MCP server exposing every registry tool on ``bundle``."""
    definitions = types.ListToolsResult(tools=tool_definitions())
    # One call at a time per process: tool functions are synchronous and may
    # share per-process state; other processes are fenced by file locks.
    serial = anyio.Lock()

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return definitions

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async with serial:
            return await anyio.to_thread.run_sync(call_tool, bundle, params.name, params.arguments)

    return Server(
        SERVER_NAME,
        version=_ouro_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _ouro_version() -> str:
    try:
        return version("ouro")
    except PackageNotFoundError:
        return "0"


def refusal_for(problem: Exception) -> SessionMessage | None:
    """The error reply to a request line the SDK could not parse, if it has an id.

    A lone surrogate escape (``"\\ud800"``) is valid JSON but not UTF-8 text:
    the SDK's parser rejects the line and, having no id, answers nothing -- the
    client would wait forever. Python's own parser reads such a line, so the
    request's id is known and it gets an ``INVALID_PARAMS`` reply instead.
    """
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    raw = errors[0].get("input") if errors else None
    if not isinstance(raw, str | bytes):
        return None
    try:
        request = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(request, dict) or not isinstance(request.get("id"), int | str):
        return None
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=request["id"],
        error=types.ErrorData(
            code=types.INVALID_PARAMS,
            message="the request is not valid UTF-8 text (a lone surrogate escape such as "
            "\\ud800 in a name or argument); nothing was run -- send UTF-8 text",
        ),
    )
    return SessionMessage(error)


async def serve_stdio(bundle: Bundle) -> None:
    server = build_server(bundle)
    async with stdio_server() as (sdk_read, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with send:
                async for item in sdk_read:
                    reply = refusal_for(item) if isinstance(item, Exception) else None
                    if reply is not None:
                        await write_stream.send(reply)
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await server.run(receive, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


def serve(bundle: Bundle) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    anyio.run(serve_stdio, bundle)
