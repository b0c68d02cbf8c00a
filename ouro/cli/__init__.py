"""The ``ouro`` command. This module stays tiny: agents call the CLI once per
tool call, so start-up cost matters; everything heavy is imported lazily."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    try:
        "".join(args).encode("utf-8")
    except UnicodeEncodeError:  # invalid bytes in argv arrive as lone surrogates
        sys.exit(_refuse_argv(args))
    if _only_version(args):  # what click's version option prints, without click
        from ouro import __version__

        sys.stdout.write(f"ouro, version {__version__}\n")
        sys.exit(0)
    # Host hooks and the search verbs have stdlib-only fast paths (no click,
    # no pydantic); hooks first, since hosts kill slow ones.
    from ouro.cli.fasthook import try_run as try_hook

    code = try_hook(args)
    if code is None:
        from ouro.cli.fast import try_run

        code = try_run(args)
    if code is None:
        from ouro.cli.app import run

        code = run(args)
    sys.exit(code)


def _only_version(args: list[str]) -> bool:
    """``ouro [--bundle B] --version``: click prints the version before it looks at
    anything else (an eager option), so these forms print only the version."""
    rest = list(args)
    while rest[:1] != ["--version"]:
        if rest[:1] == ["--bundle"] and len(rest) > 2:
            del rest[:2]
        elif rest and rest[0].startswith("--bundle=") and len(rest) > 1:
            del rest[0]
        else:
            return False
    return rest == ["--version"]


def _refuse_argv(args: list[str]) -> int:
    """Say which argument is not UTF-8 text (never echoing it); a usage error (2)."""
    from ouro.cli.exits import USAGE
    from ouro.cli.output import emit_error
    from ouro.edge import check_argv
    from ouro.errors import OuroError

    try:
        check_argv(args)
    except OuroError as exc:
        emit_error(exc, json_mode="--json" in args, exit_code=USAGE)
    return USAGE
