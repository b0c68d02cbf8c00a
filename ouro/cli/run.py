"""The ``ouro`` command line: one path per verb, on ``argparse``.

``main(argv)`` reads the global options anywhere on the line
(``ouro.cli.argv``), finds the command path in the tree (``ouro.cli.tree``),
builds the parser of that one command from the signature of the function it
runs (``ouro.cli.parse``) and runs it:

- an agent tool calls its library method through ``ouro.api.call`` (the one
  dispatcher, which also enforces a habit session's tool policy), then prints
  the result: ``--json`` the object itself, else its renderer's text
  (``ouro.cli.render.RENDERERS``), ``--verbose`` the full record; its exit
  status is ``ouro.cli.render.EXITS``'s for that path (else 0);
- a library verb that is not an agent tool (``ouro index sync``, ``ouro sync``)
  is called on the bundle the run names (``b.index.sync()``), printed the same way;
- any other command calls its front-end function (validated like a verb),
  which returns a result to print the same way, or an exit status when it
  printed for itself.

Only what the command needs is imported: start-up is most of the cost of a
call an agent makes once per tool call. This module is also the one place that
turns errors into exit codes, by the contract in ``ouro.cli.exits`` (0 ok,
1 negative outcome, 2 usage, 3 bundle unusable); ``OURO_DEBUG=1`` re-raises.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # no typing at run time: ``ouro --version`` imports only this module
if TYPE_CHECKING:
    from typing import Any

    from ouro.cli.tree import Entry, Path


class Globals:
    """This run's global options (read by the command functions)."""

    def __init__(self) -> None:
        self.bundle: str | None = None
        self.json = False
        self.verbose = False
        self.settings: list[str] = []


#: the options of the run in progress (``ouro.cli.common`` reads them)
G = Globals()


#: set by ``main``: this process runs one command and exits (``execute`` may then
#: freeze the garbage collector's view of what is loaded)
_ONE_COMMAND = False


def main(argv: list[str] | None = None) -> None:
    global _ONE_COMMAND
    _ONE_COMMAND = True
    import gc

    # Until the command runs (``execute`` freezes what is loaded by then), nothing
    # is garbage: importing and building the parser make only objects that live
    # until the process exits, so collections over them are wasted work.
    gc.disable()
    sys.exit(run(sys.argv[1:] if argv is None else list(argv)))


def run(argv: list[str]) -> int:
    """Run the command line ``argv`` and return its exit code (``ouro.cli.exits``)."""
    global G
    G = Globals()
    words = argv[: argv.index("--")] if "--" in argv else argv
    json_mode = "--json" in words
    debug = os.environ.get("OURO_DEBUG") == "1"
    try:
        "".join(argv).encode("utf-8")
    except UnicodeEncodeError:  # invalid bytes in argv arrive as lone surrogates
        from ouro.edge import check_argv

        try:
            check_argv(argv)
        except Exception as exc:
            return _report(exc, json_mode)
    try:
        return _run(argv)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (ouro ... | head): stop quietly
        import contextlib

        with contextlib.suppress(OSError, ValueError):  # no real descriptor: in-process
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        from ouro.errors import OuroError

        if debug or not (isinstance(exc, OuroError | OSError) or json_mode):
            raise
        return _report(exc, json_mode)


def _report(exc: BaseException, json_mode: bool) -> int:
    from ouro.cli.parse import UsageError

    if isinstance(exc, UsageError) and not json_mode:
        if exc.usage:
            prog = (exc.hint or "").removeprefix("see '").removesuffix(" --help'")
            sys.stderr.write(f"{exc.usage}\nTry '{prog} --help' for help.\n\n")
        sys.stderr.write(f"Error: {exc.message}\n")
        return 2
    from ouro.cli.output import report_error

    return report_error(exc, json_mode=json_mode)


def _globals(argv: list[str]) -> list[str]:
    """Read the global options (moved to the front by ``hoist_globals``) into
    ``G`` and return the rest of the line."""
    from ouro.cli.argv import hoist_globals

    line = hoist_globals(argv)
    i = 0
    while i < len(line):
        arg = line[i]
        name, eq, value = arg.partition("=")
        if arg == "--json":
            G.json = True
        elif arg == "--verbose":
            G.verbose = True
        elif name in ("--bundle", "--config"):
            if not eq:
                if i + 1 >= len(line):
                    from ouro.cli.parse import UsageError

                    raise UsageError(
                        f"Option '{name}' requires an argument.", hint="see 'ouro --help'"
                    )
                value = line[i + 1]
                i += 1
            if name == "--config":
                G.settings.append(value)
            else:
                if os.path.isfile(os.path.expanduser(value)):
                    from ouro.cli.parse import UsageError

                    raise UsageError(
                        f"Invalid value for '--bundle': {value!r} is a file, not a bundle folder.",
                        hint="see 'ouro --help'",
                    )
                G.bundle = value
        else:
            break
        i += 1
    return line[i:]


def _setup() -> None:
    """Per-run state shared with the library (in-process runs share modules)."""
    from ouro import progress

    if G.settings or "ouro.config" in sys.modules:  # untouched, nothing to import
        from ouro import config

        config.COMMAND_LINE.clear()
        config.COMMAND_LINE.update(dict(config.parse_assignment(s) for s in G.settings))
    if "ouro.cli.output" in sys.modules:
        sys.modules["ouro.cli.output"].reset()
    progress.set_json(G.json)


def _run(argv: list[str]) -> int:
    rest = _globals(argv)
    if rest[:1] == ["--version"]:
        from ouro import __version__

        sys.stdout.write(f"ouro, version {__version__}\n")
        return 0
    _setup()
    if rest[:1] == ["__complete"]:  # what the shell completion scripts call
        from ouro.cli.completion import complete

        return complete(rest[1:])
    from ouro.cli import tree

    path, entry, words = tree.resolve(rest)
    if G.json and _asks_help(words):  # what 'ouro --json help PATH' prints
        from ouro.cli.helptopics import help_json

        return help_json(list(path), command=True)
    if entry is None:
        return _group(path, words)
    from ouro.cli.parse import Exit

    try:
        return execute(entry, words)
    except Exit as done:  # --help
        return done.status


def _asks_help(words: list[str]) -> bool:
    """``--help`` or ``-h`` among the command's words (before a ``--``), as argparse reads them."""
    return any(
        w in ("--help", "-h") for w in (words[: words.index("--")] if "--" in words else words)
    )


def _group(path: Path, words: list[str]) -> int:
    """A group named without a command: its help (exit 0 when asked for, else 2)."""
    from ouro.cli.help import group_help
    from ouro.cli.parse import UsageError

    asked = words[:1] in (["--help"], ["-h"])
    if words and not asked:
        prog = " ".join(("ouro", *path))
        word = words[0]
        what = f"No such option: {word}" if word.startswith("-") else f"No such command {word!r}"
        raise UsageError(
            f"{what}.",
            usage=f"Usage: {prog} [OPTIONS] COMMAND [ARGS]...",
            hint=f"see '{prog} --help'",
        )
    text = group_help(path)
    (sys.stdout if asked else sys.stderr).write(text.rstrip("\n") + "\n")
    return 0 if asked else 2


def parser_of(entry: Entry) -> tuple[Any, Any, Any]:
    """(parser, spec, function) of one command."""
    from ouro.cli.parse import build
    from ouro.spec import description

    fn = entry.function()
    text = description(fn)  # the docstring (a tool's: its library method's)
    if entry.tool is not None:
        from ouro.registry import name_of

        text += f"\n\n(agent tool: {name_of(entry.tool)})"
    parser, spec = build(" ".join(("ouro", *entry.path)), fn, description=text, path=entry.path)
    return parser, spec, fn


def execute(entry: Entry, words: list[str]) -> int:
    """Parse ``words`` for ``entry``, run it, print its result; the exit code."""
    from ouro.cli.parse import parse, plain
    from ouro.spec import spec_of

    fn = entry.function()
    prog = " ".join(("ouro", *entry.path))
    arguments = plain(spec_of(fn), words)  # nothing for a parser to decide: none is built
    if arguments is None:
        parser, spec, fn = parser_of(entry)
        arguments = parse(parser, spec, words)
    if _ONE_COMMAND:
        # What is loaded now (the interpreter, the modules, the parser) lives until
        # the process exits: moved out of the collector's generations, it is not
        # walked again by every collection the command's own allocations trigger
        # (5,000 stat results for orient's task check): ~3% of a cold orient's
        # instructions. A long-lived command (ouro mcp) collects what it makes later.
        import gc

        gc.freeze()
        gc.enable()
    if entry.tool is not None:
        result: Any = call_tool(entry, arguments)
    elif entry.library:  # a library verb that is not an agent tool (its own checks)
        import ouro.api as api

        namespace, _, name = fn.__qualname__.partition(".")
        result = getattr(getattr(api.open(G.bundle), namespace.lower()), name)(**arguments)
    else:  # a front-end command: the same validation as a library verb's
        from ouro.spec import validate

        result = fn(**validate(fn, arguments, hint=f"see '{prog} --help'"))
    if isinstance(result, int):
        return result
    if result is None:
        return 0
    return show(entry.path, result)


def call_tool(entry: Entry, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's library method, called through the one dispatcher."""
    import ouro.api as api
    from ouro.errors import OuroError
    from ouro.registry import name_of

    assert entry.tool is not None
    bundle = api.open(G.bundle)
    name = name_of(entry.tool)
    try:
        result: dict[str, Any] = api.call(name, bundle, arguments)
    except OuroError as exc:
        # A tool that needs the user's go-ahead (e.g. a check written
        # elsewhere) names the confirming field; ask on a terminal only.
        confirming = getattr(exc, "confirm_field", None)
        if not confirming or G.json or not sys.stdin.isatty():
            raise
        sys.stderr.write(f"{exc.message}\nRun it? [y/N]: ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            raise
        result = api.call(name, bundle, {**arguments, confirming: True})
    return result


def show(path: Path, result: Any) -> int:
    """Print a command's result and return the exit status of its outcome."""
    from ouro.cli import render
    from ouro.cli.output import emit, render_full

    if G.json:
        emit(result, json_mode=True)
    else:
        ref = render.RENDERERS.get(path)
        emit(
            result,
            json_mode=False,
            render=render_full if G.verbose or ref is None else render.load(ref),
        )
    status = render.EXITS.get(path)
    return int(render.load(status)(result)) if status else 0
