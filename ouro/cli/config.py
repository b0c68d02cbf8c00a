"""``ouro config get|set|unset|list``: settings and where each value comes from
(the precedence and files are ``ouro.config``'s).

Front-end commands rather than the library's ``b.config`` verbs: they work
without a bundle (the global and project files, the environment), and keep
``--global`` / ``--project`` for ``b.config``'s ``scope``. Both report through
``ouro.config.rows`` and write through ``ouro.config.set_value``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from ouro.spec import P

_SHOW_ORIGIN = "Also say which source (and file) each value came from."
_GLOBAL = "Write $XDG_CONFIG_HOME/ouro/config.toml (every bundle)."
_PROJECT = "Write the project pointer file (.ouro or ouro.toml) found walking up."


def _bundle_root() -> Path | None:
    """The bundle whose bundle.json is a source, or None when there is none."""
    from ouro.bundle import Bundle
    from ouro.cli.common import bundle_option
    from ouro.errors import BundleNotFound

    try:
        return Bundle.locate(bundle_option()).root
    except BundleNotFound:
        return None


def _rows(names: list[str]) -> list[dict[str, Any]]:
    """As ``b.config`` reports them (``ouro.config.rows``), with or without a bundle."""
    from ouro import config

    return config.rows(_bundle_root(), names)


def _print(result: dict[str, Any], text: str) -> None:
    from ouro.cli.common import wants_json
    from ouro.cli.output import to_json_line

    sys.stdout.write(to_json_line(result) if wants_json() else text.rstrip("\n") + "\n")


def get(
    key: Annotated[str, P("The setting's name ('ouro config list' lists them).")],
    *,
    show_origin: Annotated[bool, P(_SHOW_ORIGIN)] = False,
) -> int:
    """Print one setting's effective value (exit 1 when it has none)."""
    from ouro import config

    config.setting(key)
    row = _rows([key])[0]
    text = row["value"] if row["value"] is not None else "(not set)"
    _print(row, text + (f"\t{row['origin']}" if show_origin else ""))
    return 1 if row["value"] is None else 0


def list_(*, show_origin: Annotated[bool, P(_SHOW_ORIGIN)] = False) -> int:
    """List every setting with its effective value (and, with --show-origin, its source)."""
    from ouro import config
    from ouro.cli.output import table

    rows = config.rows(_bundle_root())  # every setting, readiness keys included
    columns = ["key", "value", "origin"] if show_origin else ["key", "value"]
    shown = [{**row, "value": row["value"] or "(not set)"} for row in rows]
    _print({"settings": rows}, table(shown, columns))
    return 0


def _write(key: str, value: str | None, global_: bool, project: bool) -> dict[str, Any]:
    from ouro import config
    from ouro.cli.parse import UsageError

    if global_ and project:
        raise UsageError(
            "--global and --project exclude each other", hint="see 'ouro config --help'"
        )
    chosen = "global" if global_ else "project" if project else "bundle"
    root = _bundle_root() if chosen == "bundle" else None
    if chosen == "bundle" and root is None:
        from ouro.bundle import Bundle
        from ouro.cli.common import bundle_option

        Bundle.locate(bundle_option())  # raises the usual "no bundle" error
    return config.set_value(key, value, chosen, root)


def render_written(r: dict[str, Any]) -> str:
    done = f"set {r['key']} = {r['value']}" if r["value"] is not None else f"unset {r['key']}"
    line = f"{done}  ({r['scope']}: {r['file']})"
    if r["backup"]:
        line += f"\nwarning: {r['file']} was not valid TOML; the old file is kept as {r['backup']}"
    return line


def set_(
    key: Annotated[str, P("The setting's name.")],
    value: Annotated[str, P("Its new value.")],
    *,
    global_: Annotated[bool, P(_GLOBAL)] = False,
    project: Annotated[bool, P(_PROJECT)] = False,
) -> dict[str, Any]:
    """Write a setting to bundle.json (default), the global file (--global) or the project
    pointer file (--project)."""
    return _write(key, value, global_, project)


def unset(
    key: Annotated[str, P("The setting's name.")],
    *,
    global_: Annotated[bool, P(_GLOBAL)] = False,
    project: Annotated[bool, P(_PROJECT)] = False,
) -> dict[str, Any]:
    """Remove a setting from bundle.json (default), the global file or the project file."""
    return _write(key, None, global_, project)
