"""The click application: a lazy command tree built from two tables.

- ``ouro.tools.TOOLS``: every agent-facing tool, turned into a command by
  ``ouro.cli.gen``;
- ``COMMANDS`` below: commands that are not agent tools (init, demo, index,
  watch, migrate, mcp, hook, ...), each a ``"module:attr"`` click command.

Only the command actually run is imported. This module is also the one place
that turns errors into exit codes, by the contract in ``ouro.cli.exits``
(0 ok, 1 negative outcome, 2 usage, 3 bundle unusable).
``OURO_DEBUG=1`` re-raises instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import click

from ouro import __version__
from ouro.cli.output import emit_error, report_error
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
    ("help",): "ouro.cli.helptopics:help_cmd",
    ("config", "get"): "ouro.cli.config:get_cmd",
    ("config", "set"): "ouro.cli.config:set_cmd",
    ("config", "list"): "ouro.cli.config:list_cmd",
    ("config", "unset"): "ouro.cli.config:unset_cmd",
}

#: Help for command groups (the first sentence is the group's summary).
GROUP_HELP: dict[tuple[str, ...], str] = {
    (): "ouro: a durable place to stand for an AI agent. Arc keeps what is live "
    "(the ask, next action, blockers, claims, obligations); Desk keeps durable work "
    "(tracks, tasks, friction, tips) and the record (diary facts, reflections, notes). "
    "Everything is plain files in one bundle folder.\n\n"
    "--bundle and --json work anywhere on the line. Exit codes: 0 success, 1 a negative "
    "outcome you asked about, 2 usage error, 3 bundle unusable. "
    "Run 'ouro help' for the concepts, 'ouro COMMAND --help' for one command.",
    ("arc",): "Arc flight recorder: record the ask, next action, blockers and handoffs; resume. "
    "Arc is live continuity: what a new session needs to carry on safely.",
    ("claim",): "Claims with evidence: record one, attach receipts, verify, list. A claim's "
    "status is derived from its evidence, never set by hand.",
    ("obligation",): "Obligations and return routes: add, close, list. What is owed, to "
    "whom, by when.",
    ("config",): "Settings with a visible precedence: get, set, list. Command line > "
    "environment (OURO_*) > project > bundle (bundle.json) > global "
    "($XDG_CONFIG_HOME/ouro/config.toml).",
    ("desk",): "The Desk: durable work in tracks and tasks, friction, tips, and search over "
    "all of it. Files under desk/ are the truth; the search index is a cache.",
    ("desk", "track"): "Tracks: folders that group related tasks.",
    ("desk", "task"): "Tasks: add, list, show, update, and hold one with a lease.",
    ("desk", "iteration"): "Iterations: numbered records of rounds of work on a task.",
    ("desk", "friction"): "Friction: things that got in the way, filed so they get fixed.",
    ("desk", "tip"): "Tips: short advice for later sessions, by tag.",
    ("diary",): "The diary: atomic facts with provenance and daily reflections. Write, "
    "search, rebuild its entity list.",
    ("facts",): "Diary facts only: search them by text and by the entities they are about.",
    ("record",): "The record's own maintenance: take a secret out of a record file for good.",
    ("notes",): "Reference notes in the record: write, search, rebuild the manifest.",
    ("hook",): "Host lifecycle hooks for Claude Code and Codex: run one, or install them.",
    ("index",): "The search index under state/index/: sync, rebuild, status. A cache of the "
    "files, rebuildable at any time.",
    ("sentinel",): "Context-loss sentinel: refresh a recovery receipt, read its status.",
    ("lock",): "Advisory path locks: announce the files you are changing, see who holds what. "
    "Nothing is blocked; overlapping takes by another agent are refused naming the holder.",
    ("message",): "Messages between agents' bundles: send, reply, read, list; peers; retry "
    "what is queued. Typed (question, answer, status, handoff, blocker) and redacted.",
    ("habits",): "Habits: scheduled private sessions that leave Arc run receipts.",
}


@dataclass
class State:
    bundle: str | None = None
    json: bool = False
    verbose: bool = False


def _paths() -> dict[tuple[str, ...], Any]:
    from ouro.tools import TOOLS

    table: dict[tuple[str, ...], Any] = dict(COMMANDS)
    for tool in TOOLS:
        table[tool.cli] = tool
    return table


def _describe(command: click.Command, path: tuple[str, ...], summary: Any, examples: Any) -> None:
    """Give a hand-written command (and its subcommands) a whole-sentence summary
    and its examples from ``ouro.cli.examples``."""
    if command.help and not command.short_help:
        command.short_help = summary(command.help)
    if command.epilog is None:
        command.epilog = examples(path)
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            _describe(sub, (*path, name), summary, examples)


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
            from ouro.cli.common import first_sentence

            if any(p[: len(path)] == path for p in table):
                text = GROUP_HELP.get(path)
                return LazyGroup(
                    path,
                    name=cmd_name,
                    help=text,
                    short_help=first_sentence(text) if text else None,
                )
            return None
        if isinstance(entry, str):
            from ouro.cli.common import first_sentence
            from ouro.cli.examples import epilog
            from ouro.tools import load

            command: click.Command = load(entry)
            _describe(command, path, first_sentence, epilog)
            return command
        from ouro.cli.gen import tool_command

        command = tool_command(entry)
        if any(len(p) > len(path) and p[: len(path)] == path for p in table):
            return ToolGroup(path, command)  # ``ouro surface TEXT`` and ``ouro surface ack ID``
        return command


_LEAF_ARGS = "ouro.leaf-args"


class ToolGroup(LazyGroup):
    """A tool command that also has subcommands: ``ouro surface TEXT --to …`` runs
    the tool, ``ouro surface ack ID`` the subcommand (the first word decides)."""

    def __init__(self, prefix: tuple[str, ...], leaf: click.Command) -> None:
        super().__init__(
            prefix,
            name=leaf.name,
            help=leaf.help,
            short_help=leaf.short_help,
            epilog=leaf.epilog,
            invoke_without_command=True,
        )
        self.leaf = leaf

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if (args and args[0] in self.list_commands(ctx)) or "--help" in args:
            return super().parse_args(ctx, args)
        ctx.meta[_LEAF_ARGS] = list(args)
        return []

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The tool's own help, then its subcommands."""
        self.leaf.format_help(ctx, formatter)
        self.format_commands(ctx, formatter)

    def invoke(self, ctx: click.Context) -> Any:
        args = ctx.meta.pop(_LEAF_ARGS, None)
        if args is None:
            return super().invoke(ctx)
        # the tool's context takes the group's place: 'ouro surface --help' is the tool's
        with self.leaf.make_context(ctx.info_name, args, parent=ctx.parent) as sub:
            sub.obj = ctx.obj
            return self.leaf.invoke(sub)


@click.group(cls=LazyGroup, prefix=(), help=GROUP_HELP[()])
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(file_okay=False),
    help="Bundle folder (default: $OURO_BUNDLE, a .ouro/ouro.toml pointer upwards, bundle.json upwards, else the one *.ouro folder here).",
)
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON object (machines).")
@click.option(
    "--verbose", is_flag=True, help="Print the full record a command returns, not the summary."
)
@click.option(
    "--config",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a setting for this run (highest precedence; see 'ouro config list').",
)
# The version comes from ouro/__init__ (pyproject reads the same number), not
# importlib.metadata: looking up the installed distribution costs ~30 ms.
@click.version_option(version=__version__, prog_name="ouro")
@click.pass_context
def cli(
    ctx: click.Context,
    bundle: str | None,
    json_mode: bool,
    verbose: bool,
    settings: tuple[str, ...],
) -> None:
    from ouro import progress
    from ouro.cli import output

    if settings or "ouro.config" in sys.modules:  # one run's settings (in-process runs
        from ouro import config  # share the module); untouched, nothing to import

        config.COMMAND_LINE.clear()
        config.COMMAND_LINE.update(dict(config.parse_assignment(s) for s in settings))
    output.reset()
    progress.set_json(json_mode)
    ctx.obj = State(bundle=bundle, json=json_mode, verbose=verbose)


def json_wanted(argv: list[str]) -> bool:
    return "--json" in argv


def run(argv: list[str]) -> int:
    """Run the CLI on ``argv`` and return the exit code (``ouro.cli.exits``)."""
    from ouro.cli import exits

    debug = os.environ.get("OURO_DEBUG") == "1"
    json_mode = json_wanted(argv)
    try:
        result = cli.main(args=argv, prog_name="ouro", standalone_mode=False)
    except OuroError as exc:
        if debug:
            raise
        return report_error(exc, json_mode=json_mode)
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
                exit_code=exits.USAGE,
            )
        else:
            exc.show()
        return exits.USAGE
    except OSError as exc:  # an OS error no store primitive converted: say it plainly
        if debug:
            raise
        return report_error(exc, json_mode=json_mode)
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.stderr.write("interrupted\n")
        return exits.INTERRUPTED
    except click.ClickException as exc:  # a bad file or value given on the line
        if debug:
            raise
        emit_error(
            None,
            json_mode=json_mode,
            kind="usage",
            message=exc.format_message(),
            exit_code=exits.USAGE,
        )
        return exits.USAGE
    except Exception as exc:  # report internal errors as JSON when asked; never hide them
        if debug or not json_mode:
            raise
        return report_error(exc, json_mode=True)
    return result if isinstance(result, int) else 0
