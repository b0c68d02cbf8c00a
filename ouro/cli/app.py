"""The click application: a lazy command tree built from two tables.

- ``ouro.tools.TOOLS``: every agent-facing tool, turned into a command by
  ``ouro.cli.gen``;
- ``COMMANDS`` below: commands that are not agent tools (init, demo, index,
  watch, migrate, mcp, hook, ...), each a ``"module:attr"`` click command.

Only the command actually run is imported. This module is also the one place
that turns errors into exit codes: 0 ok, 1 ``OuroError``, 2 usage.
``OURO_DEBUG=1`` re-raises instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import click

from ouro import __version__
from ouro.cli.output import emit_error
from ouro.errors import OuroError

#: Non-tool commands by CLI path.
COMMANDS: dict[tuple[str, ...], str] = {
    ("init",): "ouro.cli.core:init_cmd",
    ("demo",): "ouro.cli.core:demo_cmd",
    ("mcp",): "ouro.cli.mcp:mcp_cmd",
    ("migrate",): "ouro.cli.migrate:migrate_cmd",
    ("hook", "claude"): "ouro.cli.hook:claude_cmd",
    ("hook", "codex"): "ouro.cli.hook:codex_cmd",
    ("hook", "install"): "ouro.cli.hook:install_cmd",
    ("hook", "doctor"): "ouro.cli.hook:doctor_cmd",
    ("guide",): "ouro.cli.hook:guide_cmd",
    ("index", "sync"): "ouro.cli.index:sync_cmd",
    ("index", "rebuild"): "ouro.cli.index:rebuild_cmd",
    ("index", "status"): "ouro.cli.index:status_cmd",
    ("watch",): "ouro.cli.watch:watch_cmd",
    ("diary", "rebuild-entities"): "ouro.cli.desk:rebuild_entities_cmd",
    ("notes", "rebuild-manifest"): "ouro.cli.desk:rebuild_manifest_cmd",
    ("habits", "show"): "ouro.cli.habits:show_cmd",
    ("habits", "due"): "ouro.cli.habits:due_cmd",
    ("habits", "last"): "ouro.cli.habits:last_cmd",
    ("habits", "tick"): "ouro.cli.habits:tick_cmd",
    ("habits", "install"): "ouro.cli.habits:install_cmd",
    ("sync",): "ouro.cli.sync:sync_cmd",
    ("workbench",): "ouro.cli.workbench:workbench_cmd",
}

#: One-line help for command groups.
GROUP_HELP: dict[tuple[str, ...], str] = {
    (): "ouro: a durable place to stand for an AI agent (Arc continuity + Desk record).",
    ("arc",): "Arc flight recorder: record the ask, next action, blockers, handoffs; resume.",
    ("claim",): "Claims with evidence: record, attach receipts, verify, list.",
    ("obligation",): "Obligations and return routes: add, close, list.",
    ("hook",): "Host lifecycle hooks for Claude Code and Codex: run one, or install them.",
    ("index",): "The search index under state/index/: sync, rebuild, status.",
    ("sentinel",): "Context-loss sentinel: refresh a recovery receipt, read its status.",
    ("habits",): "Habits: scheduled private sessions that leave Arc run receipts.",
}


@dataclass
class State:
    bundle: str | None = None
    json: bool = False


def _paths() -> dict[tuple[str, ...], Any]:
    from ouro.tools import TOOLS

    table: dict[tuple[str, ...], Any] = dict(COMMANDS)
    for tool in TOOLS:
        table[tool.cli] = tool
    return table


class LazyGroup(click.Group):
    """A group whose children are looked up in the path tables on demand."""

    def __init__(self, prefix: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefix = prefix

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not self.prefix:  # the root: --bundle and --json anywhere on the line
            from ouro.cli.argv import hoist_globals

            args = hoist_globals(args)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        n = len(self.prefix)
        return sorted({p[n] for p in _paths() if len(p) > n and p[:n] == self.prefix})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        path = (*self.prefix, cmd_name)
        table = _paths()
        entry = table.get(path)
        if entry is None:
            if any(p[: len(path)] == path for p in table):
                return LazyGroup(path, name=cmd_name, help=GROUP_HELP.get(path))
            return None
        if isinstance(entry, str):
            from ouro.tools import load

            command: click.Command = load(entry)
            return command
        from ouro.cli.gen import tool_command

        return tool_command(entry)


@click.group(cls=LazyGroup, prefix=(), help=GROUP_HELP[()])
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(file_okay=False),
    help="Bundle folder (default: $OURO_BUNDLE, a .ouro/ouro.toml pointer upwards, bundle.json upwards, else the one *.ouro folder here).",
)
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON object (machines).")
# The version comes from ouro/__init__ (pyproject reads the same number), not
# importlib.metadata: looking up the installed distribution costs ~30 ms.
@click.version_option(version=__version__, prog_name="ouro")
@click.pass_context
def cli(ctx: click.Context, bundle: str | None, json_mode: bool) -> None:
    ctx.obj = State(bundle=bundle, json=json_mode)


def json_wanted(argv: list[str]) -> bool:
    return "--json" in argv


def run(argv: list[str]) -> int:
    debug = os.environ.get("OURO_DEBUG") == "1"
    json_mode = json_wanted(argv)
    try:
        result = cli.main(args=argv, prog_name="ouro", standalone_mode=False)
    except OuroError as exc:
        if debug:
            raise
        emit_error(exc, json_mode=json_mode)
        return 1
    except click.UsageError as exc:
        if debug:
            raise
        if json_mode:
            emit_error(
                None,
                json_mode=True,
                kind="usage",
                message=exc.format_message(),
                hint="see 'ouro --help'",
            )
        else:
            exc.show()
        return 2
    except OSError as exc:  # an OS error no store primitive converted: say it plainly
        if debug:
            raise
        from ouro.store.guard import storage_error

        emit_error(
            storage_error(
                exc,
                exc.filename or "(unknown path)",
                outcome="the command stopped; what it had finished writing stays written",
            ),
            json_mode=json_mode,
        )
        return 1
    except click.exceptions.Abort:
        sys.stderr.write("aborted\n")
        return 1
    except click.ClickException as exc:
        if debug:
            raise
        emit_error(None, json_mode=json_mode, kind="error", message=exc.format_message())
        return 1
    except Exception as exc:  # report internal errors as JSON when asked; never hide them
        if debug or not json_mode:
            raise
        emit_error(
            None,
            json_mode=True,
            kind="internal",
            message=f"{type(exc).__name__}: {exc}",
            hint="this is a bug in ouro; rerun with OURO_DEBUG=1 for the traceback",
        )
        return 1
    return result if isinstance(result, int) else 0
