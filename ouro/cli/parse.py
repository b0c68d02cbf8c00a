"""The one argument parser builder: a command's ``argparse`` parser from the
signature of the function it runs (``ouro.spec.spec_of``).

The rule (the same for agent tools and the other commands):

- a parameter before ``*`` is a positional argument (``NAME``; optional when it
  has a default, several when it is a list);
- a keyword-only parameter is an option ``--kebab-case`` (``Param.flag``): a
  ``bool`` is a flag (``--no-x`` when its default is True), a ``list[str]`` a
  repeatable option named by its singular, anything else takes one value;
- ``P(file=True)``: also ``--<name>-file PATH`` (``-`` = stdin), read bounded by
  the parameter's limit before it is read.

Only options given on the line are passed on, so every default is the
signature's own. Values stay text except numbers (converted here, so a bad one
is a usage error naming the option); the function's own validation
(``ouro.spec.validate``) checks the rest. A parser is built only for the
command being run, and only when there is something to parse (``plain``):
a command without required inputs run with an empty line gets every default,
and a line of plain words (none starting with ``-``), one for each of the
command's positional inputs, all text, none read from a file, with no other
input required, gets each word as its input: all argparse would return, so
``argparse`` (with ``gettext`` and ``locale``: ~15M instructions of a cold start)
is not imported for it (``ouro hook claude UserPromptSubmit``, run on every
prompt, is such a line). The
parser's classes are in ``ouro.cli.argparser``.
"""

from __future__ import annotations

import sys

from ouro.errors import OuroError

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ouro.cli.argparser import Parser
    from ouro.spec import Param

#: the global options, read anywhere on the line (``ouro.cli.argv``); listed in
#: every command's help
GLOBALS = (
    (
        "--bundle PATH",
        "Bundle folder (default: $OURO_BUNDLE, a .ouro/ouro.toml pointer upwards, "
        "bundle.json upwards, else the one *.ouro folder here).",
    ),
    ("--json", "Print one JSON object (machines)."),
    ("--verbose", "Print the full record a command returns, not the summary."),
    (
        "--config KEY=VALUE",
        "Override a setting for this run (highest precedence; see 'ouro config list').",
    ),
)


class UsageError(OuroError):
    """A command line that does not parse: exit 2, with the command's usage."""

    kind = "usage"

    def __init__(self, message: str, *, usage: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.usage = usage


class Exit(Exception):
    """``--help`` was printed: the command is done with this status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def wrap(text: str, width: int = 96) -> str:
    """Paragraphs of ``text`` wrapped to ``width`` (blank lines kept)."""
    import textwrap

    return "\n\n".join(
        textwrap.fill(" ".join(part.split()), width, break_on_hyphens=False)
        for part in text.split("\n\n")
        if part.strip()
    )


def epilog(path: tuple[str, ...]) -> str:
    """The "Examples:" block and the global options, under a command's help."""
    from ouro.cli.examples import examples_for

    lines: list[str] = []
    found = examples_for(path)
    if found:
        lines.append("Examples:")
        for line, what in found:
            lines += [f"  # {what}", f"  ouro {line}"]
        lines.append("")
    lines.append("Global options (anywhere on the line):")
    lines += global_lines()
    return "\n".join(lines)


def global_lines() -> list[str]:
    """The global options as help lines (the text wrapped beside the flag)."""
    import textwrap

    out: list[str] = []
    for flag_text, text in GLOBALS:
        body = textwrap.wrap(text, 74, break_on_hyphens=False)
        out.append(f"  {flag_text:<20}{body[0]}")
        out += [" " * 22 + more for more in body[1:]]
    return out


def _number(kind: str) -> Callable[[str], int | float]:
    def convert(value: str) -> int | float:
        try:
            return int(value) if kind == "int" else float(value)
        except ValueError:
            what = "a whole number" if kind == "int" else "a number"
            import argparse

            raise argparse.ArgumentTypeError(f"{value!r} is not {what}") from None

    convert.__name__ = kind
    return convert


def flag(param: Param) -> str:
    """The option of ``param`` (``Param.flag``; a name ending in ``_`` to dodge a
    Python word, ``global_``, is ``--global``)."""
    return param.flag.rstrip("-")


def flags_of(param: Param) -> list[str]:
    """Every option string of ``param`` (none for a positional)."""
    if param.positional:
        return []
    return [flag(param), *([param.file_flag] if param.file_flag else [])]


def _help(param: Param) -> str:
    text = param.p.help.replace("%", "%%")
    if param.p.file:
        text += f" (or {param.file_flag} PATH; '-' reads stdin)"
    return text


def _metavar(param: Param) -> str:
    choices = param.p.choices
    if isinstance(choices, tuple):
        return "{" + ",".join(choices) + "}"
    name = flag(param).removeprefix("--") if not param.positional else param.name
    return name.replace("-", "_").upper()


def _add(parser: Parser, param: Param) -> None:
    import argparse

    convert: Any = _number(param.kind) if param.kind in ("int", "float") else None
    if param.positional:
        many = param.kind == "list"
        nargs: Any = ("+" if param.required else "*") if many else (None if param.required else "?")
        parser.add_argument(
            param.name,
            metavar=_metavar(param),
            nargs=nargs,
            type=convert,
            default=argparse.SUPPRESS,
            help=_help(param),
        )
        return
    if param.kind == "bool":
        parser.add_argument(
            flag(param),
            dest=param.name,
            action="store_false" if param.default is True else "store_true",
            default=argparse.SUPPRESS,
            help=_help(param),
        )
    else:
        parser.add_argument(
            flag(param),
            dest=param.name,
            metavar=_metavar(param),
            type=convert,
            action="append" if param.kind == "list" else "store",
            default=argparse.SUPPRESS,
            required=param.required and not param.p.file,
            help=_help(param),
        )
    if param.file_flag:
        parser.add_argument(
            param.file_flag,
            dest=param.name + "//file",
            metavar="PATH",
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


def build(
    prog: str, fn: Callable[..., Any], *, description: str, path: tuple[str, ...]
) -> tuple[Parser, tuple[Param, ...]]:
    """The parser of one command, from ``fn``'s signature."""
    from ouro.cli.argparser import Formatter, Parser
    from ouro.spec import spec_of

    spec = spec_of(fn)
    parser = Parser(prog=prog, formatter_class=Formatter, allow_abbrev=False)
    parser.text, parser.path = description, path
    for param in spec:
        _add(parser, param)
    return parser, spec


def plain(spec: tuple[Param, ...], words: list[str]) -> dict[str, Any] | None:
    """The arguments of the line without a parser, when there is nothing for one
    to decide; None when the line needs the parser.

    - an empty line with no input required: no arguments (every default is the
      signature's own);
    - as many plain words (none starting with ``-``: no option, no ``--``) as
      the command has positional inputs, each required, single and text (no
      number to convert, no file to read), and no option required: each word is
      its input, as argparse assigns them (its positionals take a word each, in
      order; a value is passed on as written).
    """
    if not words:
        return None if any(param.required for param in spec) else {}
    positional = [param for param in spec if param.positional]
    if len(positional) != len(words) or any(word.startswith("-") for word in words):
        return None
    for param in spec:
        if param.positional:
            if not param.required or param.kind != "str" or param.p.file:
                return None
        elif param.required:
            return None
    return {param.name: word for param, word in zip(positional, words, strict=True)}


def parse(parser: Parser, spec: tuple[Param, ...], words: list[str]) -> dict[str, Any]:
    """The arguments given on the line, by parameter name (files read)."""
    # argparse's intermixed parse lets options and positionals come in any
    # order; it does not take a ``--`` separator, which the plain parse does.
    found = vars(parser.parse_args(words) if "--" in words else parser.parse_intermixed_args(words))
    out: dict[str, Any] = {}
    for param in spec:
        if param.name in found:
            out[param.name] = found[param.name]
        file_key = param.name + "//file"
        if file_key in found:
            if param.name in out:
                parser.error(f"give {flag(param)} or {param.file_flag}, not both")
            out[param.name] = read_file(param, found[file_key])
        elif param.p.file and param.required and param.name not in out:
            if sys.stdin.isatty():
                parser.error(f"the following arguments are required: {flag(param)}")
            out[param.name] = read_file(param, "-")  # piped in: the value is stdin
    return out


def read_file(param: Param, value: str) -> str:
    """The text of ``--<name>-file``: bounded by the parameter's limit before it
    is read (``ouro.store.bounded``); a device or FIFO is refused, ``-`` is stdin."""
    from ouro.store.bounded import read_input

    return read_input(value, limit=param.limit, what=param.file_flag or flag(param))
