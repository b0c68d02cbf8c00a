"""Helpers shared by CLI commands: the bundle from context, the --json flag, summaries."""

from __future__ import annotations

from typing import Any

import click

from ouro.bundle import Bundle


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (a command's one-line summary), never cut mid-word."""
    flat = " ".join(text.split())
    for i, char in enumerate(flat):
        if char in ".!?" and (i + 1 == len(flat) or flat[i + 1] == " "):
            before = flat[:i]
            # not an abbreviation such as "e.g." or "i.e."
            if not before.endswith(("e.g", "i.e", "etc", "vs")):
                return flat[: i + 1]
    return flat


def json_option() -> click.Option:
    return click.Option(["--json", "json_mode"], is_flag=True, help="Print one JSON object.")


def with_json(fn: Any) -> Any:
    """Decorator form of ``json_option`` for hand-written commands."""
    return click.option("--json", "json_mode", is_flag=True, help="Print one JSON object.")(fn)


def wants_json(ctx: click.Context, local: bool) -> bool:
    state = ctx.find_root().obj
    return bool(local or (state is not None and state.json))


def wants_verbose(ctx: click.Context) -> bool:
    state = ctx.find_root().obj
    return bool(state is not None and state.verbose)


def bundle_option_value(ctx: click.Context) -> str | None:
    state = ctx.find_root().obj
    return None if state is None else state.bundle


def bundle_from(ctx: click.Context, *, allow_legacy: bool = False) -> Bundle:
    return Bundle.locate(bundle_option_value(ctx), allow_legacy=allow_legacy)
