"""Tool input validation without importing pydantic, for plain inputs.

Contract: the pydantic input models in the registry (``ouro.tools``) are the
one source of truth for a tool's fields. ``ouro/models/lite_specs.py`` is
generated from them (``python -m ouro.models.lite``; a test fails when it is
not current) for every tool whose fields are all plain -- ``str``, ``int``,
``bool``, ``list[str]``, a ``Literal`` of strings, each optionally ``| None``,
without constraints or validators.

``validate(tool, arguments)`` accepts only arguments that the pydantic model
surely accepts unchanged: every key a known field, every value of exactly the
field's type (no coercion), every required field present. It then returns the
same field values pydantic would (defaults filled in, lists copied) as a
``SimpleNamespace``. For anything else it returns None and the caller validates
with pydantic, so an error names the field exactly as pydantic does (a
property test checks that ``validate`` never accepts what pydantic refuses and
agrees on every value it accepts).

``fields(tool)`` describes the same fields for the generated CLI command
(``ouro.cli.gen``), so a plain tool's CLI command builds without pydantic.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: a field: (name, kind, required, default, description, choices)
#: kind: "str" | "int" | "bool" | "list" (of str); ``optional`` kinds end in "?"
Field = tuple[str, str, bool, object, "str | None", "tuple[str, ...] | None"]

_MISSING = object()


def specs() -> dict[str, tuple[Field, ...]]:
    from ouro.models.lite_specs import SPECS

    return SPECS


def fields(tool: str) -> tuple[Field, ...] | None:
    """The plain fields of ``tool``'s input, or None when it is not a plain tool."""
    return specs().get(tool)


def _fits(kind: str, choices: tuple[str, ...] | None, value: object) -> bool:
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    if kind == "str":
        return type(value) is str and (choices is None or value in choices)
    if kind == "bool":
        return type(value) is bool
    if kind == "int":
        return type(value) is int
    if kind == "list":
        return type(value) is list and all(type(item) is str for item in value)
    return False


def validate(tool: str, arguments: Any) -> SimpleNamespace | None:
    """The validated input of a plain tool, or None (then pydantic decides)."""
    spec = fields(tool)
    if spec is None or not isinstance(arguments, dict):
        return None
    known = {f[0] for f in spec}
    if any(key not in known for key in arguments):
        return None
    values: dict[str, object] = {}
    for name, kind, required, default, _description, choices in spec:
        value = arguments.get(name, _MISSING)
        if value is _MISSING:
            if required:
                return None
            value = default
        elif not _fits(kind, choices, value):
            return None
        values[name] = list(value) if isinstance(value, list) else value
    return SimpleNamespace(**values)


# --- generating lite_specs.py from the pydantic models -------------------------
def _field_spec(name: str, info: Any) -> Field | None:
    import types
    import typing

    if info.metadata or info.alias or info.validation_alias is not None:
        return None
    annotation = info.annotation
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(annotation)) != 2:
            return None
        optional, annotation = True, args[0]
        origin = typing.get_origin(annotation)
    choices: tuple[str, ...] | None = None
    if annotation is str:
        kind = "str"
    elif annotation is bool:
        kind = "bool"
    elif annotation is int:
        kind = "int"
    elif origin is list and typing.get_args(annotation) == (str,):
        kind = "list"
    elif origin is typing.Literal and all(isinstance(a, str) for a in typing.get_args(annotation)):
        kind, choices = "str", tuple(typing.get_args(annotation))
    else:
        return None
    required = info.is_required()
    default: object = None
    if not required:
        if info.default_factory is list and kind == "list":
            default = []
        elif info.default_factory is None and type(info.default) in (str, int, bool, type(None)):
            default = info.default
        else:
            return None
    return (name, kind + ("?" if optional else ""), required, default, info.description, choices)


def model_spec(model: Any) -> tuple[Field, ...] | None:
    """The plain fields of a pydantic input model, or None when any field is not plain."""
    decorators = model.__pydantic_decorators__
    if any(
        getattr(decorators, kind)
        for kind in ("validators", "field_validators", "root_validators", "model_validators")
    ):
        return None
    if dict(model.model_config) != {"extra": "forbid"}:  # no strict, no str_* rewriting
        return None
    out = []
    for name, info in model.model_fields.items():
        spec = _field_spec(name, info)
        if spec is None:
            return None
        out.append(spec)
    return tuple(out)


def generate() -> str:
    """The source of ``ouro/models/lite_specs.py`` (deterministic)."""
    from ouro.tools import TOOLS

    lines = [
        '"""Generated by ``python -m ouro.models.lite`` from the registry\'s pydantic',
        "input models (``ouro.models.lite``); do not edit. A test fails when it is not current.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        "    from ouro.models.lite import Field",
        "",
        "# fmt: off",
        "SPECS: dict[str, tuple[Field, ...]] = {",
    ]
    for tool in sorted(TOOLS, key=lambda t: t.name):
        spec = model_spec(tool.model())
        if spec is None:
            continue
        lines.append(f"    {tool.name!r}: (")
        for field in spec:
            lines.append(f"        {field!r},")
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).with_name("lite_specs.py")
    target.write_text(generate())
    sys.stdout.write(f"wrote {target}\n")
