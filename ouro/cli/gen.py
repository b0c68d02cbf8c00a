"""Turn a registry ``Tool`` into a click command.

Fields listed in ``tool.args`` become positional arguments; every other field
becomes an option named after it (``stop_before`` → ``--stop-before``) unless
``tool.options`` renames it. ``bool`` fields are flags, ``list`` fields repeat,
``Literal`` fields are choices. ``tool.files`` fields are read from the named
file (``-`` = stdin), bounded by the field's limit (``ouro.edge.limit_for``)
before it is read.
"""

from __future__ import annotations

import sys
import types
import typing
from dataclasses import dataclass
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
from ouro.errors import OuroError
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


def _read_file(tool: Tool, field: str, value: str) -> str:
    """The text of a ``tool.files`` option: bounded by the field's limit before it
    is read (``ouro.store.bounded``); a device or FIFO is refused, ``-`` is stdin."""
    from ouro.edge import limit_for
    from ouro.store.bounded import read_input

    return read_input(value, limit=limit_for(tool.name, field), what=tool.files[field])


@dataclass(frozen=True)
class _Field:
    name: str
    inner: Any  # the element type (str, int, bool, a Literal)
    is_list: bool
    required: bool
    description: str | None


def input_fields(tool: Tool, *, lite: bool = True) -> list[_Field]:
    """The tool's input fields: from the generated plain spec when there is one
    (no pydantic import, ``ouro.models.lite``), else from the pydantic model."""
    from ouro.models import lite as lite_specs

    spec = lite_specs.fields(tool.name) if lite else None
    if spec is not None:
        out = []
        for name, kind, required, _default, description, choices in spec:
            base = kind.rstrip("?")
            inner: Any = {"str": str, "int": int, "bool": bool, "list": str}[base]
            if choices is not None:
                inner = Literal[choices]
            out.append(_Field(name, inner, base == "list", required, description))
        return out
    model = tool.model()
    fields = []
    for name, info in model.model_fields.items():
        inner, is_list = _unwrap(info.annotation)
        fields.append(_Field(name, inner, is_list, info.is_required(), info.description))
    return fields


def tool_command(tool: Tool, *, lite: bool = True) -> click.Command:
    fields = {f.name: f for f in input_fields(tool, lite=lite)}
    params: list[click.Parameter] = []
    for name in tool.args:
        field = fields[name]
        params.append(
            click.Argument([name], nargs=-1 if field.is_list else 1, required=field.required)
        )
    for name, field in fields.items():
        if name in tool.args:
            continue
        help_text = field.description
        if name in tool.files:
            params.append(
                click.Option(
                    [tool.files[name], name], help=help_text or "file to read ('-' = stdin)"
                )
            )
            continue
        flag = tool.options.get(name, "--" + name.replace("_", "-"))
        if field.inner is bool:
            params.append(click.Option([flag, name], is_flag=True, default=None, help=help_text))
        else:
            params.append(
                click.Option(
                    [flag, name],
                    type=_click_type(field.inner),
                    multiple=field.is_list,
                    required=field.required,
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
                value = _read_file(tool, key, value)
            arguments[key] = list(value) if isinstance(value, tuple) else value
        for key in tool.files:
            if key not in arguments and fields[key].required and not sys.stdin.isatty():
                arguments[key] = _read_file(tool, key, "-")
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
