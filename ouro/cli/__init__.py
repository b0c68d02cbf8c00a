"""The ``ouro`` command. This module stays tiny: agents call the CLI once per
tool call, so start-up cost matters; everything heavy is imported lazily."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from ouro.cli.app import run

    sys.exit(run(sys.argv[1:] if argv is None else argv))
