"""The ``ouro`` command (``ouro.cli.run``). This package's own import is tiny:
agents call the CLI once per tool call, so start-up cost matters."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and exit with its status."""
    from ouro.cli.run import main as run_main

    run_main(argv)
