"""``ouro config get|set|unset|list``: settings and where each value comes from
(the precedence and files are ``ouro.config``'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ouro.cli.common import bundle_option_value, wants_json, with_json
from ouro.cli.output import emit, table

_SHOW_ORIGIN = click.option(
    "--show-origin", is_flag=True, help="Also say which source (and file) each value came from."
)
_SCOPE = click.option(
    "--global",
    "scope",
    flag_value="global",
    help="Write $XDG_CONFIG_HOME/ouro/config.toml (every bundle).",
)
_PROJECT = click.option(
    "--project",
    "scope",
    flag_value="project",
    help="Write the project pointer file (.ouro or ouro.toml) found walking up.",
)


def _bundle_root(ctx: click.Context) -> Path | None:
    """The bundle whose bundle.json is a source, or None when there is none."""
    from ouro.bundle import Bundle
    from ouro.errors import BundleNotFound

    try:
        return Bundle.locate(bundle_option_value(ctx)).root
    except BundleNotFound:
        return None


def _rows(ctx: click.Context, names: list[str]) -> list[dict[str, Any]]:
    from ouro import config

    root = _bundle_root(ctx)
    resolved = config.resolve(root)
    return [
        {
            "key": name,
            "value": resolved[name][0],
            "source": resolved[name][1],
            "origin": config.origin_label(resolved[name][1], root),
            "description": config.setting(name).description,
        }
        for name in names
    ]


@click.command("get")
@click.argument("key")
@_SHOW_ORIGIN
@with_json
@click.pass_context
def get_cmd(ctx: click.Context, key: str, show_origin: bool, json_mode: bool) -> None:
    """Print one setting's effective value (exit 1 when it has none)."""
    from ouro import config

    config.setting(key)
    row = _rows(ctx, [key])[0]
    emit(
        row,
        json_mode=wants_json(ctx, json_mode),
        render=lambda r: (
            (r["value"] if r["value"] is not None else "(not set)")
            + (f"\t{r['origin']}" if show_origin else "")
        ),
    )
    if row["value"] is None:
        ctx.exit(1)


@click.command("list")
@_SHOW_ORIGIN
@with_json
@click.pass_context
def list_cmd(ctx: click.Context, show_origin: bool, json_mode: bool) -> None:
    """List every setting with its effective value (and, with --show-origin, its source)."""
    from ouro import config

    rows = _rows(ctx, list(config.resolve(_bundle_root(ctx))))
    columns = ["key", "value", "origin"] if show_origin else ["key", "value"]
    emit(
        {"settings": rows},
        json_mode=wants_json(ctx, json_mode),
        render=lambda r: table(
            [{**row, "value": row["value"] or "(not set)"} for row in r["settings"]], columns
        ),
    )


def _write(
    ctx: click.Context, key: str, value: str | None, scope: str | None, json_mode: bool
) -> None:
    from ouro import config

    chosen = scope or "bundle"
    root = _bundle_root(ctx) if chosen == "bundle" else None
    if chosen == "bundle" and root is None:
        from ouro.bundle import Bundle

        Bundle.locate(bundle_option_value(ctx))  # raises the usual "no bundle" error
    result = config.set_value(key, value, chosen, root)

    def render(r: dict[str, Any]) -> str:
        done = f"set {r['key']} = {r['value']}" if r["value"] is not None else f"unset {r['key']}"
        line = f"{done}  ({r['scope']}: {r['file']})"
        if r["backup"]:
            line += (
                f"\nwarning: {r['file']} was not valid TOML; the old file is kept as {r['backup']}"
            )
        return line

    emit(result, json_mode=wants_json(ctx, json_mode), render=render)


@click.command("set")
@click.argument("key")
@click.argument("value")
@_SCOPE
@_PROJECT
@with_json
@click.pass_context
def set_cmd(ctx: click.Context, key: str, value: str, scope: str | None, json_mode: bool) -> None:
    """Write a setting to bundle.json (default), the global file (--global) or the project
    pointer file (--project)."""
    _write(ctx, key, value, scope, json_mode)


@click.command("unset")
@click.argument("key")
@_SCOPE
@_PROJECT
@with_json
@click.pass_context
def unset_cmd(ctx: click.Context, key: str, scope: str | None, json_mode: bool) -> None:
    """Remove a setting from bundle.json (default), the global file or the project file."""
    _write(ctx, key, None, scope, json_mode)
