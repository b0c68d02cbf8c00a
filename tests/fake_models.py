"""A fake model server on 127.0.0.1 for the real-host tests (``test_real_hosts``).

It speaks just enough of two wire protocols for a host CLI to run one turn:

- Anthropic ``POST /v1/messages`` (``stream: true``): an SSE stream of
  ``message_start`` / ``content_block_*`` / ``message_delta`` /
  ``message_stop`` with one text block (Claude Code; Pi through a custom
  provider with ``api: "anthropic-messages"``);
- OpenAI ``POST /v1/responses``: an SSE stream of ``response.created`` /
  ``response.output_item.added`` / ``response.output_text.delta`` /
  ``response.output_item.done`` / ``response.completed`` (Codex, through a
  custom model provider);
- Gemini ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (one
  SSE ``data:`` chunk of a ``GenerateContentResponse``), ``:generateContent``
  (the same object as JSON) and ``:countTokens`` (Gemini CLI, through
  ``GOOGLE_GEMINI_BASE_URL``).

Every request (path and JSON body) is kept in ``requests`` so a test can
assert on what the host sent to the model: that is where hook
``additionalContext`` ends up. This is a stand-in for the model only; the
host CLIs themselves are the real ones.

``shell(command)`` queues a shell command: the next model request that
offers the host's shell tool and does not already carry a tool result is
answered with one call of that tool (Claude Code's ``Bash`` tool_use, Pi's
``bash``;
Codex's ``shell`` / ``exec_command`` function_call), and the request after
the result gets the plain text reply. That makes the real host run the
command through its own tool, fire its tool hooks and write its transcript.

``tool(name, arguments)`` queues a call of any other tool the host offers (an
MCP tool: the offered name that ends with ``name``, ``mcp__ouro__diary_write``
for ``diary_write``, or OpenCode's ``ouro_diary_write``), answered the same way. ``delay`` holds every model reply
back that many seconds (a host that outlives a habit's timeout). ``usage`` lists
the input-token counts the next Responses replies report (near the model's
context limit, the host compacts).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "OK from the fake model."
#: tool names under which a host offers its shell (Claude Code, Codex)
SHELL_TOOLS = frozenset(
    {"Bash", "bash", "shell", "shell_command", "exec_command", "run_shell_command"}
)


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    name = tool.get("name")
    if name is None and isinstance(tool.get("function"), dict):
        name = tool["function"].get("name")
    return name if isinstance(name, str) else None


def _ends_with_tool_result(body: dict[str, Any]) -> bool:
    """Whether the latest message / input item carries a tool's result."""
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        content = messages[-1].get("content") if isinstance(messages[-1], dict) else None
        return isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
    contents = body.get("contents")
    if isinstance(contents, list) and contents:
        parts = contents[-1].get("parts") if isinstance(contents[-1], dict) else None
        return isinstance(parts, list) and any(
            isinstance(p, dict) and "functionResponse" in p for p in parts
        )
    items = body.get("input")
    if isinstance(items, list) and items:
        last = items[-1]
        return isinstance(last, dict) and last.get("type") in (
            "function_call_output",
            "custom_tool_call_output",
        )
    return False


def _tools(body: dict[str, Any]) -> list[Any]:
    """The tools a request offers: top level, or in Gemini's ``config``."""
    tools = body.get("tools")
    if tools is None and isinstance(body.get("config"), dict):
        tools = body["config"].get("tools")
    return tools if isinstance(tools, list) else []


class FakeModels:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.commands: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.tools: list[tuple[str, dict[str, Any]]] = []
        self.delay = 0.0
        #: input-token counts the next Responses replies to a request offering tools
        #: report, one each (then 10): near the model's context limit, a host compacts
        self.usage: list[int] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # model lists and the like: nothing to offer
                body = b'{"data": [], "models": []}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                path = self.path.split("?")[0]
                with owner._lock:
                    owner.requests.append({"path": path, "body": body})
                if owner.delay and not path.endswith("/count_tokens"):
                    time.sleep(owner.delay)
                if path.endswith(":countTokens"):
                    self._json({"totalTokens": 100})
                elif path.endswith(":streamGenerateContent"):
                    self._gemini(body, stream=True)
                elif path.endswith(":generateContent"):
                    self._gemini(body, stream=False)
                elif path.endswith("/messages/count_tokens"):
                    self._json({"input_tokens": 100})
                elif path.endswith("/messages"):
                    self._anthropic(body)
                elif path.endswith("/responses"):
                    self._openai(body)
                else:
                    self._json({})

            def _json(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for name, data in events:
                    chunk = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                    self.wfile.write(chunk.encode())
                self.wfile.flush()
                self.close_connection = True

            def _anthropic(self, body: dict[str, Any]) -> None:
                queued = owner._tool_for(body)
                if queued is not None and body.get("stream"):
                    self._anthropic_call(body, *queued)
                    return
                command = owner._command_for(body)
                if command is not None and body.get("stream"):
                    self._anthropic_tool(body, command)
                    return
                model = body.get("model", "claude-fake")
                usage = {"input_tokens": 10, "output_tokens": 5}
                message = {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                if not body.get("stream"):
                    self._json(
                        message
                        | {"content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn"}
                    )
                    return
                self._sse(
                    [
                        ("message_start", {"type": "message_start", "message": message}),
                        (
                            "content_block_start",
                            {
                                "type": "content_block_start",
                                "index": 0,
                                "content_block": {"type": "text", "text": ""},
                            },
                        ),
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": 0,
                                "delta": {"type": "text_delta", "text": REPLY},
                            },
                        ),
                        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                        (
                            "message_delta",
                            {
                                "type": "message_delta",
                                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                "usage": {"output_tokens": 5},
                            },
                        ),
                        ("message_stop", {"type": "message_stop"}),
                    ]
                )

            def _anthropic_tool(self, body: dict[str, Any], command: str) -> None:
                names = [_tool_name(t) for t in body.get("tools") or []]
                if "Bash" in names:  # Claude Code
                    arguments = {"command": command, "description": "Run the check"}
                    self._anthropic_call(body, "Bash", arguments, command)
                else:  # Pi's "bash" tool takes the command alone
                    self._anthropic_call(body, "bash", {"command": command}, command)

            def _anthropic_call(
                self,
                body: dict[str, Any],
                tool: str,
                arguments_obj: dict[str, Any],
                command: str | None = None,
            ) -> None:
                n = len(owner.calls)
                call_id = f"toolu_01FakeCall{n:04d}abcdefghij"
                owner.calls.append(
                    {"id": call_id, "command": command, "tool": tool, "arguments": arguments_obj}
                )
                message = {
                    "id": f"msg_fake_tool{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude-fake"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
                arguments = json.dumps(arguments_obj)
                block = {"type": "tool_use", "id": call_id, "name": tool, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": arguments}
                self._sse(
                    [
                        ("message_start", {"type": "message_start", "message": message}),
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": 0, "content_block": block},
                        ),
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": 0, "delta": delta},
                        ),
                        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                        (
                            "message_delta",
                            {
                                "type": "message_delta",
                                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                "usage": {"output_tokens": 5},
                            },
                        ),
                        ("message_stop", {"type": "message_stop"}),
                    ]
                )

            def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
                queued = owner._tool_for(body)
                command = None if queued is not None else owner._command_for(body)
                part: dict[str, Any] = {"text": REPLY}
                if command is not None:
                    queued = ("run_shell_command", {"command": command})
                if queued is not None:
                    tool, arguments = queued
                    n = len(owner.calls)
                    call_id = f"call_FakeCall{n:04d}"
                    owner.calls.append(
                        {"id": call_id, "command": command, "tool": tool, "arguments": arguments}
                    )
                    part = {"functionCall": {"id": call_id, "name": tool, "args": arguments}}
                response = {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {
                        "promptTokenCount": 10,
                        "candidatesTokenCount": 5,
                        "totalTokenCount": 15,
                    },
                    "modelVersion": "gemini-fake",
                }
                if stream:
                    self._sse([(None, response)])
                else:
                    self._json(response)

            def _openai(self, body: dict[str, Any]) -> None:
                queued = owner._tool_for(body)
                command = None if queued is not None else owner._command_for(body)
                item: dict[str, Any]
                if queued is not None or command is not None:
                    namespace = None
                    if queued is not None:
                        tool, arguments = queued
                        if "." in tool:  # a namespaced tool: its namespace and its name
                            namespace, tool = tool.split(".", 1)
                    else:
                        assert command is not None
                        tool, arguments = owner._codex_call(body, command)
                    n = len(owner.calls)
                    call_id = f"call_FakeCall{n:04d}abcdefghij"
                    owner.calls.append(
                        {"id": call_id, "command": command, "tool": tool, "arguments": arguments}
                    )
                    item = {
                        "id": f"fc_fake{n}",
                        "type": "function_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": tool,
                        "arguments": json.dumps(arguments),
                    }
                    if namespace is not None:
                        item["namespace"] = namespace
                    added = item | {"status": "in_progress", "arguments": ""}
                else:
                    item = {
                        "id": "msg_fake",
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
                    }
                    added = item | {"status": "in_progress", "content": []}
                tokens = owner._input_tokens(body)
                response = {
                    "id": f"resp_fake{len(owner.requests)}",
                    "object": "response",
                    "status": "completed",
                    "model": body.get("model", "gpt-fake"),
                    "output": [item],
                    "usage": {
                        "input_tokens": tokens,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 5,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": tokens + 5,
                    },
                }
                middle: list[tuple[str | None, dict[str, Any]]]
                if item["type"] == "message":
                    middle = [
                        (
                            "response.output_text.delta",
                            {
                                "type": "response.output_text.delta",
                                "item_id": "msg_fake",
                                "output_index": 0,
                                "content_index": 0,
                                "delta": REPLY,
                            },
                        )
                    ]
                else:
                    middle = [
                        (
                            "response.function_call_arguments.delta",
                            {
                                "type": "response.function_call_arguments.delta",
                                "item_id": item["id"],
                                "output_index": 0,
                                "delta": item["arguments"],
                            },
                        )
                    ]
                self._sse(
                    [
                        (
                            "response.created",
                            {
                                "type": "response.created",
                                "response": response | {"status": "in_progress", "output": []},
                            },
                        ),
                        (
                            "response.output_item.added",
                            {
                                "type": "response.output_item.added",
                                "output_index": 0,
                                "item": added,
                            },
                        ),
                        *middle,
                        (
                            "response.output_item.done",
                            {"type": "response.output_item.done", "output_index": 0, "item": item},
                        ),
                        (
                            "response.completed",
                            {"type": "response.completed", "response": response},
                        ),
                    ]
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModels:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def model_requests(self, suffix: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].endswith(suffix)]

    def shell(self, command: str) -> None:
        """Queue ``command`` for the host to run through its shell tool."""
        with self._lock:
            self.commands.append(command)

    def tool(self, name: str, arguments: dict[str, Any]) -> None:
        """Queue a call of the offered tool whose name ends with ``name``."""
        with self._lock:
            self.tools.append((name, arguments))

    def offered(self, body: dict[str, Any]) -> list[str]:
        """The tool names a request offers (a Responses ``namespace`` tool's own
        tools as ``namespace.name``: Codex offers an MCP server's tools so)."""
        names: list[str] = []
        for tool in _tools(body):
            declared = tool.get("functionDeclarations") if isinstance(tool, dict) else None
            if isinstance(declared, list):  # Gemini: one tool holds the declarations
                names += [n for n in map(_tool_name, declared) if n]
                continue
            name = _tool_name(tool)
            inner = tool.get("tools") if isinstance(tool, dict) else None
            if isinstance(inner, list):
                names += [f"{name}.{n}" for n in map(_tool_name, inner) if n]
            elif name:
                names.append(name)
        return names

    def _tool_for(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The next queued tool call, as (offered name, arguments), if this request
        offers it: queued calls are made one after another, each after the last
        one's result, then the plain reply ends the turn."""
        with self._lock:
            if not self.tools:
                return None
            wanted, arguments = self.tools[0]
            for name in self.offered(body):
                if name in (wanted, f"ouro_{wanted}") or name.endswith(
                    ("__" + wanted, "." + wanted)
                ):
                    self.tools.pop(0)
                    return name, arguments
        return None

    def _command_for(self, body: dict[str, Any]) -> str | None:
        """The queued command to answer ``body`` with a shell call, or None.

        Only a request that offers a shell tool and whose latest input is not
        a tool result (the host is waiting for the model's next step) takes one.
        """
        if not any(name in SHELL_TOOLS for name in self.offered(body)):
            return None
        if _ends_with_tool_result(body):
            return None
        with self._lock:
            return self.commands.pop(0) if self.commands else None

    @staticmethod
    def _codex_call(body: dict[str, Any], command: str) -> tuple[str, dict[str, Any]]:
        """Codex's shell tool as this request offers it, and its arguments."""
        names = {_tool_name(t) for t in body.get("tools") or []}
        if "exec_command" in names:
            return "exec_command", {"cmd": command}
        if "shell_command" in names:
            return "shell_command", {"command": command}
        return "shell", {"command": ["bash", "-lc", command]}

    def _input_tokens(self, body: dict[str, Any]) -> int:
        with self._lock:
            return self.usage.pop(0) if self.usage and body.get("tools") else 10

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
