"""argparse's classes as ``ouro.cli.parse`` builds a command's parser with them:
the layout of the help, and errors raised as ``UsageError`` instead of printed.
Imported only for a command line that has something to parse or asks for help."""

from __future__ import annotations

import argparse
import sys

from ouro.cli.parse import Exit, UsageError, epilog, wrap

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NoReturn


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's layout with a capitalised "Usage:" prefix; descriptions are wrapped
    here (``describe``) so the examples block keeps its lines."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=100)

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        # never break inside a hyphenated name (unknown-not-zero, --stop-before)
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, prefix="Usage: " if prefix is None else prefix)


class Parser(argparse.ArgumentParser):
    """Errors are raised (``UsageError``), never printed and exited on. The
    description and the examples are laid out only when help is printed."""

    text = ""
    path: tuple[str, ...] = ()

    def format_help(self) -> str:
        if self.description is None:
            self.description = wrap(self.text)
        if self.epilog is None:
            self.epilog = epilog(self.path)
        self._optionals.title = "Options"
        self._positionals.title = "Arguments"
        text = super().format_help()
        from ouro.cli.tree import children

        below = children(self.path)
        if below:  # a command that is a group too (ouro sync, ouro workbench)
            from ouro.cli.help import summary

            width = max(len(n) for n in below)
            text += "\nCommands:\n" + "".join(
                f"  {n:<{width}}  {summary((*self.path, n))}\n" for n in below
            )
        return text

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise Exit(status)

    def error(self, message: str) -> NoReturn:
        raise UsageError(
            message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."),
            usage=self.format_usage().strip(),
            hint=f"see '{self.prog} --help'",
        )
