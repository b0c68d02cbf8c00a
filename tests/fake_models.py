"""A fake model server on 127.0.0.1 for the real-host tests (``test_real_hosts``).

It speaks just enough of two wire protocols for a host CLI to run one turn:

- Anthropic ``POST /v1/messages`` (``stream: true``): an SSE stream of
  ``message_start`` / ``content_block_*`` / ``message_delta`` /
  ``message_stop`` with one text block (Claude Code);
- OpenAI ``POST /v1/responses``: an SSE stream of ``response.created`` /
  ``response.output_item.added`` / ``response.output_text.delta`` /
  ``response.output_item.done`` / ``response.completed`` (Codex, through a
  custom model provider).

Every request (path and JSON body) is kept in ``requests`` so a test can
assert on what the host sent to the model: that is where hook
``additionalContext`` ends up. This is a stand-in for the model only; the
host CLIs themselves are the real ones.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "OK from the fake model."


class FakeModels:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
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
                if path.endswith("/messages/count_tokens"):
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

            def _openai(self, body: dict[str, Any]) -> None:
                item = {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
                }
                response = {
                    "id": "resp_fake",
                    "object": "response",
                    "status": "completed",
                    "model": body.get("model", "gpt-fake"),
                    "output": [item],
                    "usage": {
                        "input_tokens": 10,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 5,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 15,
                    },
                }
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
                                "item": item | {"status": "in_progress", "content": []},
                            },
                        ),
                        (
                            "response.output_text.delta",
                            {
                                "type": "response.output_text.delta",
                                "item_id": "msg_fake",
                                "output_index": 0,
                                "content_index": 0,
                                "delta": REPLY,
                            },
                        ),
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

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
