"""Turn a registry ``Tool`` into a click command.

Fields listed in ``tool.args`` become positional arguments; every other field
becomes an option named after it (``stop_before`` → ``--stop-before``) unless
``tool.options`` renames it. ``bool`` fields are flags, ``list`` fields repeat,
``Literal`` fields are choices. ``tool.files`` fields are read from the named
file (``-`` = stdin).
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

import click

from ouro.cli.common import (
    bundle_from,
    first_sentence,
    json_option,
    wants_json,
    wants_verbose,
)
from ouro.cli.examples import epilog
from ouro.cli.output import emit, render_full
from ouro.errors import InvalidInput, OuroError
from ouro.tools import Tool, invoke, load


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """Return (inner type, is_list) with Optional stripped."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    if origin in (list, tuple, set):
        inner = typing.get_args(annotation)
        return (inner[0] if inner else str), True
    return annotation, False


def _click_type(inner: Any) -> Any:
    if typing.get_origin(inner) is Literal:
        return click.Choice([str(v) for v in typing.get_args(inner)])
    if inner is int:
        return click.INT
    if inner is float:
        return click.FLOAT
    return click.STRING


def _read_file(option: str, value: str) -> str:
    try:
        if value == "-":
            return sys.stdin.read()
        return Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(
            f"{option} {value}: cannot read ({exc})", hint="pass a readable UTF-8 file"
        ) from None


def tool_command(tool: Tool) -> click.Command:
    model = tool.model()
    params: list[click.Parameter] = []
    for name in tool.args:
        info = model.model_fields[name]
        _inner, is_list = _unwrap(info.annotation)
        params.append(
            click.Argument([name], nargs=-1 if is_list else 1, required=info.is_required())
        )
    for name, info in model.model_fields.items():
        if name in tool.args:
            continue
        help_text = info.description
        if name in tool.files:
            params.append(
                click.Option(
                    [tool.files[name], name], help=help_text or "file to read ('-' = stdin)"
                )
            )
            continue
        flag = tool.options.get(name, "--" + name.replace("_", "-"))
        inner, is_list = _unwrap(info.annotation)
        if inner is bool:
            params.append(click.Option([flag, name], is_flag=True, default=None, help=help_text))
        else:
            params.append(
                click.Option(
                    [flag, name],
                    type=_click_type(inner),
                    multiple=is_list,
                    required=info.is_required(),
                    help=help_text,
                )
            )
    params.append(json_option())

    def callback(**kwargs: Any) -> int | None:
        ctx = click.get_current_context()
        json_mode = wants_json(ctx, kwargs.pop("json_mode", False))
        arguments: dict[str, Any] = {}
        for key, value in kwargs.items():
            if value is None or value == ():
                continue
            if key in tool.files:
                value = _read_file(tool.files[key], value)
            arguments[key] = list(value) if isinstance(value, tuple) else value
        for key, option in tool.files.items():
            if (
                key not in arguments
                and model.model_fields[key].is_required()
                and not sys.stdin.isatty()
            ):
                arguments[key] = _read_file(option, "-")
        bundle = bundle_from(ctx)
        try:
            result = invoke(tool.name, bundle, arguments)
        except OuroError as exc:
            # A tool that needs the user's go-ahead (e.g. a check written
            # elsewhere) names the confirming field; ask on a terminal only.
            field_name = getattr(exc, "confirm_field", None)
            if not field_name or json_mode or not sys.stdin.isatty():
                raise
            click.echo(f"{exc.message}", err=True)
            if not click.confirm("Run it?", default=False, err=True):
                raise
            arguments[field_name] = True
            result = invoke(tool.name, bundle, arguments)
        # --verbose (or a tool without a renderer): the whole record, as text
        render = render_full if wants_verbose(ctx) or not tool.render else load(tool.render)
        emit(result, json_mode=json_mode, render=render)
        if tool.exit_status:
            status: int = load(tool.exit_status)(result)
            return status
        return None

    return click.Command(
        name=tool.cli[-1],
        params=params,
        callback=callback,
        help=f"{tool.description}\n\n(agent tool: {tool.name})",
        short_help=first_sentence(tool.description),
        epilog=epilog(tool.cli),
    )
