"""The ``ouro`` command. This module stays tiny: agents call the CLI once per
tool call, so start-up cost matters; everything heavy is imported lazily."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
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
