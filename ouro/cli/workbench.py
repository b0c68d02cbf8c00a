"""``ouro workbench`` (serve the bundle read-only) and ``ouro workbench build OUT/``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ouro.cli.common import bundle_from, wants_json, with_json

DEFAULT_PORT = 8377


def _desktop_tty() -> bool:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@click.group("workbench", invoke_without_command=True)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help=f"Port to serve on (default {DEFAULT_PORT}, or a free one if taken; 0 = any).")  # fmt: skip
@click.option("--host", default=None,
              help="Interface to serve on (default 127.0.0.1). Anything else exposes the bundle.")  # fmt: skip
@click.option("--open/--no-open", "open_browser", default=None,
              help="Open a browser (default: only on a desktop terminal).")  # fmt: skip
@click.pass_context
def workbench_cmd(
    ctx: click.Context, port: int | None, host: str | None, open_browser: bool | None
) -> None:
    """Serve a read-only web view of the bundle on 127.0.0.1 until Ctrl-C."""
    if ctx.invoked_subcommand is not None:
        return
    from ouro.workbench.server import LOOPBACK, make_server, url_of

    bundle = bundle_from(ctx)
    bind = host or LOOPBACK
    if host is not None and host not in (LOOPBACK, "localhost", "::1"):
        click.echo(
            f"warning: serving on {host}: anyone who can reach it can read this bundle "
            "(redacted, read-only)",
            err=True,
        )
    try:
        try:
            server = make_server(bundle, bind, DEFAULT_PORT if port is None else port)
        except OSError:
            if port is not None:
                raise
            server = make_server(bundle, bind, 0)  # the default port is taken: any free one
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {bind}:{port if port is not None else DEFAULT_PORT} "
            f"({exc.strerror or exc}); try another --port or --host"
        ) from None
    url = url_of(server)
    click.echo(f"ouro workbench: {url}  (read-only view of {bundle.root}; Ctrl-C stops)", err=True)
    if open_browser or (open_browser is None and _desktop_tty()):
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@workbench_cmd.command("build")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@with_json
@click.pass_context
def build_cmd(ctx: click.Context, out: Path, json_mode: bool) -> None:
    """Write the workbench pages as a static site into OUT (opens from file://)."""
    from ouro.cli.output import emit
    from ouro.workbench.site import build_site

    bundle = bundle_from(ctx)
    written = build_site(bundle, out)
    result = {"out": str(out), "files": written}
    emit(result, json_mode=wants_json(ctx, json_mode),
         render=lambda r: f"wrote {len(r['files'])} page(s) to {r['out']}; open "
         f"{Path(r['out']) / 'index.html'}")  # fmt: skip
