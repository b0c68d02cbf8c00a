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
- Calls are served one at a time per server process, on one worker thread, so
  a tool waiting on a file lock never stalls the protocol (``ping`` is answered
  meanwhile, a queued call cancelled by ``notifications/cancelled`` is not run);
  several server processes on one bundle are kept safe by the domains' file
  locks. At end of input the calls already read are finished, then it exits.

The protocol is served here, directly: MCP over stdio is JSON-RPC 2.0, one
message per line, and ``ouro mcp`` serves only the handshake (``initialize``
with protocol-version negotiation: a version it knows is echoed, any other
gets the newest, ``PROTOCOL_VERSIONS``), ``notifications/initialized``,
``ping``, ``tools/list`` and ``tools/call``; any other method is
``METHOD_NOT_FOUND`` (-32601), a request before ``initialize`` or with bad
params ``INVALID_PARAMS`` (-32602), a line that is not JSON ``PARSE_ERROR``
(-32700), a message that is not a request ``INVALID_REQUEST`` (-32600). The
input schemas and the validation come from ``ouro.spec``, the one spec the
library runs; no MCP SDK is imported (the tests drive the server with the
official SDK's client). Standard library plus orjson: fast to start, and
~0.1 ms of protocol per call.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

from ouro import registry
from ouro.api import call
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.spec import json_schema
from ouro.store.bounded import BoundedLines

SERVER_NAME = "ouro"
TOOL_SETS = ("lean", "all")
#: protocol revisions of the ``initialize`` handshake, oldest to newest
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# JSON-RPC 2.0 error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

Message = dict[str, Any]


class ProtocolError(Exception):
    """A JSON-RPC error reply: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


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


def tool_definition(tool: registry.Tool) -> dict[str, Any]:
    """The MCP description of one registry tool (``tools/list``): its name, its
    method's docstring and the schema of its method's signature (``ouro.spec.json_schema``)."""
    # Hints equal to the MCP defaults (readOnly false, idempotent false) are left out,
    # and destructiveHint is given only where it means something (a tool that writes).
    hints: dict[str, Any] = {}
    if tool.read_only:
        hints["readOnlyHint"] = True
    else:
        hints["destructiveHint"] = tool.destructive
    if tool.idempotent:
        hints["idempotentHint"] = True
    hints["openWorldHint"] = tool.open_world
    return {
        "name": tool.name,
        "description": tool.description(),
        "inputSchema": json_schema(tool.method()),
        "annotations": hints,
    }


def tool_definitions(tools: Iterable[registry.Tool] | None = None) -> list[dict[str, Any]]:
    return [tool_definition(tool) for tool in (served("all") if tools is None else tools)]


def _json_text(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()


def _error_result(payload: dict[str, Any]) -> dict[str, Any]:
    text = (
        payload["message"]
        if not payload.get("hint")
        else f"{payload['message']}\nhint: {payload['hint']}"
    )
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"error": payload},
        "isError": True,
    }


def call_tool(
    bundle: Bundle,
    name: str,
    arguments: dict[str, Any] | None,
    names: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Run one registry tool and turn its outcome into an MCP tool result.

    Raises ``ProtocolError`` only for an unknown tool name (a protocol error):
    one not in the registry, or not in ``names`` (the served set) when given.
    """
    try:
        registry.find(name)
    except OuroError as exc:
        raise ProtocolError(INVALID_PARAMS, str(exc)) from None
    if names is not None and name not in names:
        raise ProtocolError(
            INVALID_PARAMS,
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
    return {"content": [{"type": "text", "text": _json_text(result)}], "structuredContent": result}


def session_definitions(
    bundle: Bundle, session: str
) -> tuple[list[dict[str, Any]], frozenset[str]]:
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
            definition["description"] = (
                f"DENIED in this habit session ({reason}): a call is refused and recorded "
                f"in the run's receipt. {definition['description']}"
            )
        definitions.append(definition)
    return definitions, frozenset(t.name for t in tools)


def _ouro_version() -> str:
    """The package's own version (the distribution is ``ouro-bundle``; a project
    named ``ouro`` on the package index is somebody else's)."""
    from ouro import __version__

    return __version__


def _object(params: Any, what: str) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, f"{what}: params must be an object")
    return params


class Server:
    """The MCP server of one bundle: ``handle`` answers one parsed message;
    ``serve`` reads them from a line stream (``serve_stdio``: the process's stdio)."""

    def __init__(self, bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> None:
        self.bundle = bundle
        if session is not None:
            self.tools, self.names = session_definitions(bundle, session)
        else:
            tools = served(tool_set)
            self.names = frozenset(t.name for t in tools)
            self.tools = tool_definitions(tools)
        self.instructions = instructions()
        self.version = _ouro_version()
        self.protocol_version: str | None = None  # set by ``initialize``

    def initialize(self, params: Any) -> dict[str, Any]:
        params = _object(params, "initialize")
        requested = params.get("protocolVersion")
        info = params.get("clientInfo")
        if (
            not isinstance(requested, str)
            or not isinstance(params.get("capabilities"), dict)
            or not isinstance(info, dict)
            or not isinstance(info.get("name"), str)
        ):
            raise ProtocolError(
                INVALID_PARAMS,
                "initialize: params need protocolVersion (a string), capabilities (an "
                "object) and clientInfo (an object with a name)",
            )
        agreed = requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        self.protocol_version = agreed
        return {
            "protocolVersion": agreed,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": self.version},
            "instructions": self.instructions,
        }

    def call(self, params: Any) -> dict[str, Any]:
        """``tools/call``."""
        params = _object(params, "tools/call")
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "tools/call: params.name must be a string")
        if arguments is not None and not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "tools/call: params.arguments must be an object")
        return call_tool(self.bundle, name, arguments, self.names)

    def answer(self, method: str, params: Any) -> dict[str, Any]:
        """The result of one request, or ``ProtocolError``."""
        if method == "ping":
            return {}
        if method == "initialize":
            return self.initialize(params)
        if method not in ("tools/list", "tools/call"):
            raise ProtocolError(METHOD_NOT_FOUND, "Method not found", method)
        if self.protocol_version is None:
            raise ProtocolError(INVALID_PARAMS, f"{method}: the client has not sent initialize")
        if method == "tools/list":
            _object(params, method)
            return {"tools": self.tools}
        return self.call(params)

    def handle(self, message: Any) -> Message | None:
        """The reply to one parsed message; None for a notification or a response."""
        if not isinstance(message, dict):
            return _reply(None, error=ProtocolError(INVALID_REQUEST, "not a JSON-RPC message"))
        if _OVERSIZED in message:
            return _refuse_oversized(message)
        method, mid = message.get("method"), message.get("id")
        if "id" not in message:
            return None  # a notification (``notifications/initialized``, …): nothing to answer
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                return None  # a response: this server sends no requests
            return _reply(None, error=ProtocolError(INVALID_REQUEST, "a request needs a method"))
        if isinstance(mid, bool) or not isinstance(mid, int | str):
            return _reply(
                None, error=ProtocolError(INVALID_REQUEST, "id must be a string or integer")
            )
        try:
            return _reply(mid, result=self.answer(method, message.get("params")))
        except ProtocolError as exc:
            return _reply(mid, error=exc)
        except Exception as exc:  # a bug in the protocol layer: answer, keep serving
            log.exception("%s failed", method)
            return _reply(mid, error=ProtocolError(INTERNAL_ERROR, f"{method} failed: {exc}"))

    def serve(self, lines: BoundedLines, out: IO[bytes]) -> None:
        """Answer every message on ``lines`` (tool calls on one worker thread) until end of input."""
        lock = threading.Lock()
        calls: queue.SimpleQueue[Message | None] = queue.SimpleQueue()
        pending: set[Any] = set()  # ids of the calls queued and not started
        cancelled: set[Any] = set()  # ... of which the client cancelled these

        def send(reply: Message | None) -> None:
            if reply is None:
                return
            try:
                data = orjson.dumps(reply, option=orjson.OPT_NON_STR_KEYS)
            except TypeError as exc:  # a result JSON cannot carry: say so, keep serving
                log.exception("the reply to %r cannot be sent", reply.get("id"))
                failed = ProtocolError(INTERNAL_ERROR, f"the result is not JSON: {exc}")
                data = orjson.dumps(_reply(reply.get("id"), error=failed))
            with lock, contextlib.suppress(BrokenPipeError, ValueError):
                out.write(data + b"\n")
                out.flush()

        def work() -> None:
            while (message := calls.get()) is not None:
                with lock:
                    pending.discard(message["id"])
                    if message["id"] in cancelled:
                        cancelled.discard(message["id"])
                        continue  # cancelled before it started: no reply (the MCP spec)
                send(self.handle(message))

        worker = threading.Thread(target=work, name="ouro-mcp-calls", daemon=True)
        worker.start()
        try:
            while line := lines.readline():
                if not line.strip():
                    continue
                message = parse(line)
                if isinstance(message, _Refusal):
                    send(message.reply)
                    continue
                method = message.get("method") if isinstance(message, dict) else None
                if (
                    method == "tools/call"
                    and self.protocol_version is not None
                    and isinstance(message.get("id"), int | str)
                    and not isinstance(message.get("id"), bool)
                ):
                    with lock:
                        pending.add(message["id"])
                    calls.put(message)
                    continue
                if method == "notifications/cancelled":
                    params = message.get("params")
                    target = params.get("requestId") if isinstance(params, dict) else None
                    with lock:
                        if isinstance(target, int | str) and target in pending:
                            cancelled.add(target)
                send(self.handle(message))
        finally:
            calls.put(None)
            worker.join()


class _Refusal:
    """A line that could not be parsed, and the reply it gets (None: no id to reply to)."""

    def __init__(self, reply: Message | None) -> None:
        self.reply = reply


def _reply(mid: Any, *, result: Any = None, error: ProtocolError | None = None) -> Message:
    if error is not None:
        return {"jsonrpc": "2.0", "id": mid, "error": error.error()}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def parse(line: str) -> Any:
    """One request line as JSON, or a ``_Refusal`` carrying the error reply.

    A lone surrogate escape (``"\\ud800"``) is valid JSON but not UTF-8 text:
    orjson refuses it; Python's own parser reads such a line, so the request's id
    is known and it gets an ``INVALID_PARAMS`` reply instead of a parse error.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past any parser's depth
        return _Refusal(_reply(None, error=ProtocolError(PARSE_ERROR, "Parse error: not JSON")))
    mid = request.get("id") if isinstance(request, dict) else None
    if isinstance(mid, bool) or not isinstance(mid, int | str):
        return _Refusal(None)
    return _Refusal(
        _reply(
            mid,
            error=ProtocolError(
                INVALID_PARAMS,
                "the request is not valid UTF-8 text (a lone surrogate escape such as "
                "\\ud800 in a name or argument); nothing was run -- send UTF-8 text",
            ),
        )
    )


def build_server(bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> Server:
    """The MCP server exposing the ``tool_set`` registry tools on ``bundle``,
    or (``session``) the tools of that habit session."""
    return Server(bundle, tool_set, session)


#: one request line (JSON-RPC over stdio) is read up to this many bytes: a note's
#: 1,000,000-character body fits even with every character escaped as ``\uXXXX``
REQUEST_LINE_LIMIT = 16_000_000
_OVERSIZED = "ouroOversized"
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _oversized(head: bytes) -> str:
    """What is read in place of a request line past the limit: a marker carrying
    the request's id, when its first bytes show one before its params
    (``_refuse_oversized`` answers it), so the client is told instead of left waiting."""
    log.warning(
        "ouro mcp: a request line longer than %s bytes was refused unread", REQUEST_LINE_LIMIT
    )
    found = _ID.search(head.split(b'"params"', 1)[0])
    marker: dict[str, Any] = {_OVERSIZED: REQUEST_LINE_LIMIT}
    if found is not None:
        with contextlib.suppress(ValueError):
            marker["id"] = json.loads(found.group(1))
    return json.dumps(marker) + "\n"


def _refuse_oversized(marker: Message) -> Message | None:
    if not isinstance(marker.get("id"), int | str):
        return None
    message = (
        f"the request line is longer than {REQUEST_LINE_LIMIT:,} bytes; it was refused "
        "unread and nothing was run -- send smaller arguments (a long text belongs in "
        "a note: notes_write)"
    )
    return _reply(marker["id"], error=ProtocolError(INVALID_REQUEST, message))


def _claim(fd: int, diversion: int) -> int | None:
    """Point ``fd`` at ``diversion`` and return a private duplicate of the wire
    (None when there is no ``fd`` to claim: an embedding)."""
    try:
        import fcntl

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        os.close(diversion)
        return None
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


@contextlib.contextmanager
def _wire() -> Iterator[tuple[BoundedLines, IO[bytes]]]:
    """The wire: stdin as bounded lines (``ouro.store.bounded.BoundedLines``), and stdout.

    While serving, fd 0 points at the null device (tools and their children read
    EOF) and fd 1 at stderr (a stray print cannot corrupt the protocol); the
    wire is read and written through private duplicates, restored on exit.
    """
    stdin = _claim(0, os.open(os.devnull, os.O_RDONLY))
    stdout = _claim(1, os.dup(2))
    # closefd=False: the duplicates are put back on fds 0 and 1 on exit
    raw_in = sys.stdin.buffer if stdin is None else os.fdopen(stdin, "rb", closefd=False)
    raw_out = sys.stdout.buffer if stdout is None else os.fdopen(stdout, "wb", closefd=False)
    try:
        yield BoundedLines(raw_in, REQUEST_LINE_LIMIT, _oversized), raw_out
    finally:
        with contextlib.suppress(OSError, ValueError):
            raw_out.flush()
        for fd, private in ((0, stdin), (1, stdout)):
            if private is not None:
                os.dup2(private, fd)
                os.close(private)


def serve(bundle: Bundle, tool_set: str = "lean", session: str | None = None) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    server = build_server(bundle, tool_set, session)
    with _wire() as (lines, out):
        server.serve(lines, out)
