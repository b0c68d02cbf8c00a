"""``ouro workbench`` (serve the bundle read-only) and ``ouro workbench build OUT/``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

from ouro.spec import P

DEFAULT_PORT = 8377


def _desktop_tty() -> bool:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(
    *,
    port: Annotated[
        int | None,
        P(
            f"Port to serve on (default {DEFAULT_PORT}, or a free one if taken; 0 = any).",
            min=0,
            max=65535,
        ),
    ] = None,
    host: Annotated[
        str | None,
        P("Interface to serve on (default 127.0.0.1). Anything else exposes the bundle."),
    ] = None,
    open: Annotated[bool, P("Open a browser (default: only on a desktop terminal).")] = False,
    no_open: Annotated[bool, P("Never open a browser.")] = False,
) -> int:
    """Serve a read-only web view of the bundle on 127.0.0.1 until Ctrl-C."""
    from ouro.cli.common import bundle_from
    from ouro.errors import InvalidInput
    from ouro.workbench.server import LOOPBACK, make_server, url_of

    bundle = bundle_from()
    bind = host or LOOPBACK
    if host is not None and host not in (LOOPBACK, "localhost", "::1"):
        sys.stderr.write(
            f"warning: serving on {host}: anyone who can reach it can read this bundle "
            "(redacted, read-only)\n"
        )
    try:
        try:
            server = make_server(bundle, bind, DEFAULT_PORT if port is None else port)
        except OSError:
            if port is not None:
                raise
            server = make_server(bundle, bind, 0)  # the default port is taken: any free one
    except OSError as exc:
        raise InvalidInput(
            f"cannot listen on {bind}:{port if port is not None else DEFAULT_PORT} "
            f"({exc.strerror or exc})",
            hint="try another --port or --host",
        ) from None
    url = url_of(server)
    sys.stderr.write(f"ouro workbench: {url}  (read-only view of {bundle.root}; Ctrl-C stops)\n")
    sys.stderr.flush()
    if open or (not no_open and _desktop_tty()):
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def build(out: Annotated[str, P("Folder to write the pages into.")]) -> dict[str, Any]:
    """Write the workbench pages as a static site into OUT (opens from file://)."""
    from ouro.cli.common import bundle_from
    from ouro.workbench.site import build_site

    written = build_site(bundle_from(), Path(out))
    return {"out": out, "files": written}


def render_build(r: dict[str, Any]) -> str:
    return f"wrote {len(r['files'])} page(s) to {r['out']}; open {Path(r['out']) / 'index.html'}"
