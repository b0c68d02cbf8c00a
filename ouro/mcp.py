"""``ouro mcp``: a stdio MCP server generated from the tool registry.

Contract:
- The server serves a set of registry tools (``ouro.registry.TOOLS``), and
  nothing else: ``lean`` (the default: the rows marked ``default``: the verbs an agent
  uses while it works, the seed's ``diary_write``, ``consult_diary``,
  ``search_facts``, ``consult_notes`` and ``desk_search`` among them) or
  ``all`` (``ouro mcp --tools all``: every agent tool). Each is listed with its
  name (``ouro.registry.name_of``), its method's docstring as description, the
  JSON schema of its method's signature (``ouro.spec.json_schema``: fields,
  types, enums, bounds, limits, required list, ``additionalProperties:
  false``), and its hints: ``readOnlyHint`` / ``idempotentHint`` when true,
  ``destructiveHint`` for tools that write, ``openWorldHint`` always (true
  only where a tool runs a shell command: ``claim_verify``,
  ``desk_task_verify``, ``habits_run``; the rest touch only the bundle). No
  tool is wired here by hand. A tool outside the served set is an unknown tool.
- ``instructions`` is the operating guide (``ouro.guide``) naming MCP tools.
- A call goes through ``ouro.api.call`` -- the library dispatcher every front
  end uses -- so a result is the object ``ouro ... --json`` prints: JSON text
  content plus the same dict as structured content.
- An ``OuroError`` (bad arguments included: ``ouro.spec`` refuses them naming
  the field) becomes a tool error (``isError``) whose text is the message
  and the hint; ``structuredContent`` carries ``{"error": {type, message,
  hint}}``, the object the CLI prints for an error with ``--json``. Any other
  exception becomes a tool error too, and the server keeps serving. An unknown
  tool name is a protocol error (``INVALID_PARAMS``), as the MCP spec asks.
- ``ouro mcp --session hs-…`` serves a habit's private session (the runner
  starts it for an agent, ``ouro.habits.agents``): only the session's granted
  tools, plus the denied tools the habit asked for, listed as denied; every
  call is gated by the session's policy file, which the runner wrote, not by
  variables the agent could change -- a denied call is a tool error, and it is
  recorded in the run's receipt. Each write carries the session (``ouro.lane``).
- The server is bound to one bundle, opened once at start; locator rules inside
  the domain functions keep every argument inside it.
- Each request line is read up to ``REQUEST_LINE_LIMIT`` bytes
  (``ouro.store.bounded.BoundedLines``): a longer one is refused unread, with
  an error reply when its id shows in its first bytes, and the server keeps
  serving.
- Calls are served one at a time per server process, off the event loop, so a
  tool waiting on a file lock never stalls the protocol; several server
  processes on one bundle are kept safe by the domains' file locks.

We use the SDK's low-level ``Server`` rather than ``MCPServer``: the high-level
server derives each schema from a Python signature its own way, while ours
come from ``ouro.spec`` (the same validator the library runs), and it would
replace the text of unexpected errors. This module imports the ``mcp`` SDK (heavy); only ``ouro mcp`` loads it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, cast

import anyio
import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ouro import registry
from ouro.api import call
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.spec import json_schema
from ouro.store.bounded import BoundedLines

SERVER_NAME = "ouro"
TOOL_SETS = ("lean", "all")


def instructions() -> str:
    from ouro.guide import render

    return render(mcp=True) + (
        "Arc holds what is live, owed and claimed; Desk holds tasks and the record "
        "(diary facts, notes). More tools: 'ouro mcp --tools all'."
    )


def served(tool_set: str = "lean") -> tuple[registry.Tool, ...]:
    """The tools a server serves: ``lean`` (the registry's default set) or ``all``."""
    if tool_set == "all":
        return tuple(t for t in registry.TOOLS if t.agent)
    return tuple(t for t in registry.TOOLS if t.agent and t.default)


log = logging.getLogger(__name__)


def tool_definition(tool: registry.Tool) -> types.Tool:
    """The MCP description of one registry tool: its name, its method's docstring
    and the schema of its method's signature (``ouro.spec.json_schema``)."""
    # Hints equal to the MCP defaults (readOnly false, idempotent false) are left out,
    # and destructiveHint is given only where it means something (a tool that writes).
    return types.Tool(
        name=tool.name,
        description=tool.description(),
        input_schema=json_schema(tool.method()),
        annotations=types.ToolAnnotations(
            read_only_hint=True if tool.read_only else None,
            destructive_hint=None if tool.read_only else tool.destructive,
            idempotent_hint=True if tool.idempotent else None,
            open_world_hint=tool.open_world,
        ),
    )


def tool_definitions(tools: Iterable[registry.Tool] | None = None) -> list[types.Tool]:
    return [tool_definition(tool) for tool in (served("all") if tools is None else tools)]


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


def call_tool(
    bundle: Bundle,
    name: str,
    arguments: dict[str, Any] | None,
    names: frozenset[str] | None = None,
) -> types.CallToolResult:
    """Run one registry tool and turn its outcome into an MCP tool result.

    Raises ``MCPError`` only for an unknown tool name (a protocol error): one
    not in the registry, or not in ``names`` (the served set) when given.
    """
    try:
        registry.find(name)
    except OuroError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None
    if names is not None and name not in names:
        raise MCPError(
            types.INVALID_PARAMS,
            f"tool {name!r} is not served by this server; start it with 'ouro mcp --tools all'",
        )
    try:
        result = call(name, bundle, arguments or {})
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
    # MCP results are a render surface: the record keeps what the user wrote,
    # the agent never sees a secret from it (ouro.proof.redact, the one redactor).
    result = redact_obj(result, bundle_literals(bundle))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_json_text(result))],
        structured_content=result,
    )


def session_definitions(bundle: Bundle, session: str) -> tuple[list[types.Tool], frozenset[str]]:
    """The tools served to habit session ``session``, and their names; this process
    then writes for the session and gates calls by its policy (``os.environ``)."""
    from ouro.habits.policy import session_policy

    policy = session_policy(bundle, session)
    os.environ.update(policy.env())
    shown = set(policy.granted) | set(policy.shown_denied)
    tools = [t for t in registry.TOOLS if t.agent and t.name in shown]
    definitions = []
    for tool in tools:
        definition = tool_definition(tool)
        if tool.name not in policy.granted:
            reason = policy.reasons.get(tool.name, "not granted")
            text = (
                f"DENIED in this habit session ({reason}): a call is refused and recorded "
                f"in the run's receipt. {definition.description}"
            )
            definition = definition.model_copy(update={"description": text})
        definitions.append(definition)
    return definitions, frozenset(t.name for t in tools)


def build_server(bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> Server[Any]:
    """A low-level MCP server exposing the ``tool_set`` registry tools on ``bundle``,
    or (``session``) the tools of that habit session."""
    if session is not None:
        listed, names = session_definitions(bundle, session)
    else:
        tools = served(tool_set)
        names = frozenset(t.name for t in tools)
        listed = tool_definitions(tools)
    definitions = types.ListToolsResult(tools=listed)
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
            return await anyio.to_thread.run_sync(
                call_tool, bundle, params.name, params.arguments, names
            )

    return Server(
        SERVER_NAME,
        version=_ouro_version(),
        instructions=instructions(),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _ouro_version() -> str:
    """The package's own version (the distribution is ``ouro-bundle``; a project
    named ``ouro`` on the package index is somebody else's)."""
    from ouro import __version__

    return __version__


def refusal_for(problem: Exception) -> SessionMessage | None:
    """The error reply to a request line the SDK could not parse, if it has an id.

    A lone surrogate escape (``"\\ud800"``) is valid JSON but not UTF-8 text:
    the SDK's parser rejects the line and, having no id, answers nothing -- the
    client would wait forever. Python's own parser reads such a line, so the
    request's id is known and it gets an ``INVALID_PARAMS`` reply instead.
    """
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    raw = errors[0].get("input") if errors else None
    if isinstance(raw, dict) and _OVERSIZED in raw:  # a line past the limit (``_oversized``)
        request = raw
        code, message = (
            types.INVALID_REQUEST,
            f"the request line is longer than {REQUEST_LINE_LIMIT:,} bytes; it was refused "
            "unread and nothing was run -- send smaller arguments (a long text belongs in "
            "a note: notes_write)",
        )
    else:
        if not isinstance(raw, str | bytes):
            return None
        try:
            request = json.loads(raw)
        except ValueError:
            return None
        code, message = (
            types.INVALID_PARAMS,
            "the request is not valid UTF-8 text (a lone surrogate escape such as "
            "\\ud800 in a name or argument); nothing was run -- send UTF-8 text",
        )
    if not isinstance(request, dict) or not isinstance(request.get("id"), int | str):
        return None
    error = types.JSONRPCError(
        jsonrpc="2.0", id=request["id"], error=types.ErrorData(code=code, message=message)
    )
    return SessionMessage(error)


#: one request line (JSON-RPC over stdio) is read up to this many bytes: a note's
#: 1,000,000-character body fits even with every character escaped as ``\uXXXX``
REQUEST_LINE_LIMIT = 16_000_000
_OVERSIZED = "ouroOversized"
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _oversized(head: bytes) -> str:
    """What the SDK reads in place of a request line past the limit: a marker
    carrying the request's id, when its first bytes show one before its params
    (``refusal_for`` answers it), so the client is told instead of left waiting."""
    logging.getLogger(__name__).warning(
        "ouro mcp: a request line longer than %s bytes was refused unread", REQUEST_LINE_LIMIT
    )
    found = _ID.search(head.split(b'"params"', 1)[0])
    marker: dict[str, Any] = {_OVERSIZED: REQUEST_LINE_LIMIT}
    if found is not None:
        with contextlib.suppress(ValueError):
            marker["id"] = json.loads(found.group(1))
    return json.dumps(marker) + "\n"


@contextlib.contextmanager
def _bounded_stdin() -> Iterator[anyio.AsyncFile[str]]:
    """The wire's stdin as bounded lines (``ouro.store.bounded.BoundedLines``).

    As the SDK does when it owns stdin, fd 0 points at the null device while
    serving (tools and their children read EOF) and the wire is read from a
    private duplicate; fd 0 is restored on exit.
    """
    try:
        private: int | None = os.dup(0)
    except OSError:  # no descriptor 0 to claim (an embedding): read sys.stdin in place
        private = None
    if private is None:
        raw: IO[bytes] = sys.stdin.buffer
    else:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        # closefd=False: a worker thread may still block on it after the server exits
        raw = os.fdopen(private, "rb", closefd=False)
    try:
        lines = BoundedLines(raw, REQUEST_LINE_LIMIT, _oversized)
        yield anyio.wrap_file(cast("IO[str]", lines))  # it reads lines: all the SDK asks
    finally:
        if private is not None:
            os.dup2(private, 0)


async def serve_stdio(bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> None:
    server = build_server(bundle, tool_set, session)
    with _bounded_stdin() as stdin:
        await _serve(server, stdin)


async def _serve(server: Server[Any], stdin: anyio.AsyncFile[str]) -> None:
    async with stdio_server(stdin=stdin) as (sdk_read, write_stream):
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


def serve(bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    anyio.run(serve_stdio, bundle, tool_set, session)
