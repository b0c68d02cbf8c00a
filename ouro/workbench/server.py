"""``ouro workbench``: serve the pages on 127.0.0.1 (stdlib ``http.server``).

Contract:
- GET and HEAD only; every other method is answered 405 (there are no write
  endpoints). Routes: ``/`` (Now), ``/<page>``, ``/locator?l=<locator>``,
  ``/api/stamp`` (the change stamp that ``live.js`` polls), ``/static/live.js``.
- Every HTML answer carries the Content-Security-Policy of
  ``ouro.workbench.render.csp`` and ``nosniff`` / ``no-referrer`` /
  ``no-store`` headers. Requests whose ``Host`` is not the address served are
  refused (DNS rebinding).
- Bad input (a malformed page number, a locator that escapes the bundle) is a
  400 naming the problem; an unexpected failure is a 500 whose traceback goes
  to stderr.
- It writes nothing into the bundle.
"""

from __future__ import annotations

import sys
import traceback
from functools import partial
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, InvalidLocator, NotFound, OuroError
from ouro.proof.redact import bundle_literals, redact
from ouro.workbench.app import Workbench, parse_query
from ouro.workbench.pages import PAGES
from ouro.workbench.render import csp
from ouro.workbench.stamp import bundle_stamp

LOOPBACK = "127.0.0.1"


class Handler(BaseHTTPRequestHandler):
    server_version = "ouro-workbench"
    sys_version = ""

    def __init__(self, *args: Any, bench: Workbench, names: frozenset[str], **kw: Any) -> None:
        self.bench = bench
        self.names = names  # the host names a request may use (with our port)
        super().__init__(*args, **kw)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: a viewer polled every 1.5 s would flood the terminal

    # --- methods -------------------------------------------------------------
    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _refuse(self) -> None:
        self._send(405, "text/plain; charset=utf-8", b"read-only: GET and HEAD only\n",
                   extra={"Allow": "GET, HEAD"})  # fmt: skip

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    # --- routing ---------------------------------------------------------------
    def _answer(self, *, head: bool) -> None:
        port = self.server.server_address[1]  # type: ignore[index]  # an (host, port) pair here
        if self.headers.get("Host", "") not in {f"{name}:{port}" for name in self.names}:
            self._send(421, "text/plain; charset=utf-8", b"unexpected Host header\n", head=head)
            return
        url = urlsplit(self.path)
        try:
            try:
                params = parse_qs(url.query, keep_blank_values=False, max_num_fields=50)
            except ValueError as exc:  # too many fields, or a malformed query
                raise InvalidInput(f"query: {exc}", hint="at most 50 query parameters") from None
            status, kind, body = self._route(url.path, params)
        except (InvalidLocator, OuroError) as exc:
            status = 404 if isinstance(exc, NotFound) else 400
            kind, body = "text/html; charset=utf-8", self._error_page(status, exc)
        except Exception:  # a bug: answer 500 and print the traceback, never hide it
            traceback.print_exc(file=sys.stderr)
            status, kind = 500, "text/plain; charset=utf-8"
            body = b"internal error in the workbench; the traceback is on the server's stderr\n"
        self._send(status, kind, body, head=head)

    def _route(self, path: str, params: dict[str, list[str]]) -> tuple[int, str, bytes]:
        html = "text/html; charset=utf-8"
        if path == "/api/stamp":
            stamp = bundle_stamp(self.bench.bundle.root)
            return 200, "application/json", orjson.dumps({"stamp": stamp})
        if path == "/static/live.js":
            script = resources.files("ouro.workbench").joinpath("static/live.js").read_bytes()
            return 200, "text/javascript; charset=utf-8", script
        if path == "/locator":
            text = (params.get("l") or [""])[-1]
            return 200, html, self.bench.render_locator(text).encode()
        name = "now" if path in ("/", "/now") else path.strip("/")
        if name not in PAGES:
            raise NotFound(f"no page {path!r}", hint="pages: " + ", ".join(PAGES))
        return 200, html, self.bench.render(name, parse_query(name, params)).encode()

    def _error_page(self, status: int, exc: OuroError) -> bytes:
        text = redact(str(exc), bundle_literals(self.bench.bundle))
        return (
            f"<!doctype html><html lang=en><meta charset=utf-8><title>{status}</title>"
            f"<main><h1>{status}</h1><pre>{escape(text)}</pre><p><a href='/'>Now</a></p></main>"
        ).encode()

    def _send(
        self,
        status: int,
        kind: str,
        body: bytes,
        *,
        head: bool = False,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", csp(served=True))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Frame-Options", "DENY")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)


def make_server(bundle: Bundle, host: str = LOOPBACK, port: int = 0) -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``bundle``; port 0 picks a free one."""
    bench = Workbench(bundle, served=True)
    bench.warm()
    names = frozenset({host, "localhost", LOOPBACK} if host == LOOPBACK else {host})
    server = ThreadingHTTPServer((host, port), partial(Handler, bench=bench, names=names))
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"
