"""Inputs declared once, as library method signatures.

A verb of the library (``ouro.api``) declares each input as a parameter
annotated with ``P``::

    @verb
    def write(self, text: Annotated[str, P("the fact", limit=4000, nonblank=True)],
              *, about: Annotated[list[str], P("an entity it is about")] = [],
              source: Annotated[str | None, P("where it came from")] = None) -> dict[str, Any]:
        \"\"\"Write one atomic fact to the diary.\"\"\"   # the docstring is the tool's description

Everything else is derived from that signature: ``validate`` (the one
validator: the library, the CLI and the MCP server all go through it),
``json_schema`` (the MCP ``inputSchema``) and the CLI arguments
(``ouro.cli`` reads ``spec_of``). Nothing is generated or kept by hand.

Types: ``str``, ``int``, ``float``, ``bool``, ``list[str]``, each optionally
``| None``; ``list[str | dict[str, Any]]`` for items that are JSON objects or
their text (kind ``"json"``).

The rule for the CLI (``Param``):

- a parameter declared before ``*`` is a positional CLI argument (``positional``);
  it is required when it has no default, optional (``?``, or ``*`` for a list)
  when it has one;
- a keyword-only parameter is an option ``--kebab-case`` (``flag``); a ``bool``
  with default False is ``--flag``, with default True ``--no-flag``; a
  ``list[str]`` is a repeatable option named by the singular (``tags`` is
  ``--tag``, ``about`` is ``--about``);
- ``file=True``: the CLI also offers ``--<name>-file PATH`` (``-`` = stdin),
  read bounded by the limit (``file_flag``).

``P`` fields: ``limit`` is the most characters of a string (of each item of a
list), default ``ouro.edge.SHORT``; ``nonblank`` refuses text that is empty or
only whitespace (``ouro.edge.is_blank``; each item of a list); ``choices`` a
tuple, or a zero-argument callable returning one (read when first needed);
``min`` / ``max`` bound a number (inclusive), or a list's item count (``max``
defaults to ``ouro.edge.MAX_ITEMS``); ``secret`` marks a value never echoed.

Validation is strict: unknown fields are refused, a value is coerced only
where nothing is lost (an ``int`` for a ``float``, an integral ``float`` for an
``int``, a tuple for a list, the text of a number for a number), and every
error is ``BadInput`` (an ``ouro.errors.InvalidInput``) naming the field;
``ouro.api.call`` adds the tool's name (``arc_ask: text: ...``).

``@verb`` validates every call (a library caller gets the same checks as the
CLI and MCP) and returns the result with the warnings the call collected
(``ouro.notices``) under ``"warnings"``.

This module imports cheaply: no pydantic, no ``typing`` (a cold CLI start would pay
~15M instructions for it). A signature is read only when first needed, then cached:
its hints are the strings ``from __future__ import annotations`` leaves, evaluated
in the function's module with ``Annotated`` and ``Any`` standing for light
stand-ins (``_Annotated``, ``_ANY``), so reading them needs no ``typing``; a hint
that is not a string (a module without that import) is read with
``typing.get_type_hints``.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Mapping

from ouro.errors import InvalidInput

TYPE_CHECKING = False  # no typing at run time (see the module docstring)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _F = TypeVar("_F", bound=Callable[..., Any])


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: the default of a parameter that has none
MISSING: Any = _Missing()


# P and Param are plain classes (read-only by convention), not dataclasses or
# NamedTuples: ``dataclasses`` imports ``inspect`` and a NamedTuple compiles its
# annotations, on every cold CLI start, which costs more than most commands' work.
class P:
    """How one input is described and bounded (see the module docstring)."""

    __slots__ = ("choices", "file", "help", "limit", "max", "min", "nonblank", "secret")

    def __init__(
        self,
        help: str,
        *,
        limit: int | None = None,
        nonblank: bool = False,
        choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None,
        file: bool = False,
        min: float | None = None,
        max: float | None = None,
        secret: bool = False,
    ) -> None:
        self.help = help
        self.limit = limit
        self.nonblank = nonblank
        self.choices = choices
        self.file = file
        self.min = min
        self.max = max
        self.secret = secret

    def __repr__(self) -> str:
        return f"P({self.help!r})"


_KINDS = {str: "str", int: "int", float: "float", bool: "bool"}


class Param:
    """One input of a verb, as read from its signature."""

    __slots__ = (
        "default",
        "item_kind",
        "kind",
        "name",
        "optional",
        "p",
        "positional",
        "required",
        "type",
    )

    def __init__(
        self,
        name: str,
        type: Any,
        default: Any,
        required: bool,
        positional: bool,
        p: P,
        kind: str = "str",
        item_kind: str | None = None,
        optional: bool = False,
    ) -> None:
        self.name = name
        #: the annotation without ``Annotated`` (e.g. ``str | None``, ``list[str]``)
        self.type = type
        #: the default, or ``MISSING``
        self.default = default
        self.required = required
        #: declared before ``*``: a positional CLI argument
        self.positional = positional
        self.p = p
        #: "str" | "int" | "float" | "bool" | "list" | "json"
        self.kind = kind
        #: for a list: "str" or "json"
        self.item_kind = item_kind
        #: ``None`` is accepted
        self.optional = optional

    def __repr__(self) -> str:
        return f"Param({self.name!r}, kind={self.kind!r}, positional={self.positional})"

    @property
    def flag(self) -> str:
        """The CLI option (``--kebab-case``; a list by its singular; ``--no-x``
        for a bool whose default is True). A positional has one too (unused)."""
        name = self.name
        if self.kind == "list" and name.endswith("s") and not name.endswith("ss"):
            name = name[:-1]
        dashed = name.replace("_", "-")
        if self.kind == "bool" and self.default is True:
            return f"--no-{dashed}"
        return f"--{dashed}"

    @property
    def file_flag(self) -> str | None:
        """``--<name>-file`` when the value may be read from a file, else None."""
        return f"--{self.name.replace('_', '-')}-file" if self.p.file else None

    @property
    def limit(self) -> int:
        """The most characters of the value (of each item of a list)."""
        from ouro.edge import SHORT

        return self.p.limit if self.p.limit is not None else SHORT

    @property
    def max_items(self) -> int:
        from ouro.edge import MAX_ITEMS

        return int(self.p.max) if self.p.max is not None else MAX_ITEMS

    def choices(self) -> tuple[str, ...] | None:
        """The allowed values (of each item of a list), or None for any."""
        found = self.p.choices
        if found is None or isinstance(found, tuple):
            return found
        return tuple(found())


def _unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


class _Hint:
    """``Annotated[base, *extras]`` as evaluated by ``_hints``."""

    __slots__ = ("base", "extras")

    def __init__(self, base: Any, extras: tuple[Any, ...]) -> None:
        self.base = base
        self.extras = extras


class _Annotated:
    """Stands for ``typing.Annotated`` while a verb's hints are evaluated."""

    def __class_getitem__(cls, params: Any) -> _Hint:
        base, *extras = params if isinstance(params, tuple) else (params,)
        return _Hint(base, tuple(extras))


class _AnyType:
    """Stands for ``typing.Any`` while a verb's hints are evaluated."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Any"

    def __or__(self, other: Any) -> _Union:
        return _Union((self, other))

    def __ror__(self, other: Any) -> _Union:
        return _Union((other, self))


_ANY = _AnyType()


class _Union:
    """``Any | X`` (``types.UnionType`` refuses a non-type): its members."""

    __slots__ = ("__args__",)

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.__args__ = args


def _typing_loaded() -> Any:
    """``typing`` when something already imported it (then a hint may hold its
    constructs), else None: no hint can, and it is not imported for them."""
    return sys.modules.get("typing")


def _members(base: Any) -> tuple[Any, ...] | None:
    """The members of a union (``X | Y``, ``Optional[X]``), or None."""
    if isinstance(base, types.UnionType | _Union):
        return tuple(base.__args__)
    typing = _typing_loaded()
    if typing is not None and typing.get_origin(base) is typing.Union:
        return tuple(typing.get_args(base))
    return None


def _is_any(base: Any) -> bool:
    typing = _typing_loaded()
    return base is _ANY or (typing is not None and base is typing.Any)


def _classify(name: str, annotation: Any) -> tuple[Any, str, str | None, bool]:
    """(type, kind, item_kind, optional) of one annotation without ``Annotated``."""
    optional = False
    base = annotation
    args = _members(base)
    if args is not None:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            optional, base = True, rest[0]
    if base in _KINDS:
        return annotation, _KINDS[base], None, optional
    origin = getattr(base, "__origin__", None)
    if origin is list:
        (item,) = getattr(base, "__args__", None) or (str,)
        if item is str:
            return annotation, "list", "str", optional
        return annotation, "list", "json", optional
    if _is_any(base) or origin is dict or base is dict:
        return annotation, "json", None, optional
    raise TypeError(f"{name}: unsupported parameter type {annotation!r}")


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s hints by parameter, each ``Annotated[...]`` one as a ``_Hint``."""
    raw = getattr(fn, "__annotations__", None) or {}
    if all(isinstance(text, str) for text in raw.values()):
        light = {"Annotated": _Annotated, "Any": _ANY}
        hints = {name: eval(text, fn.__globals__, light) for name, text in raw.items()}
    else:
        import typing

        hints = typing.get_type_hints(fn, include_extras=True)
    return {name: _hint(value) for name, value in hints.items()}


def _hint(value: Any) -> Any:
    """A real ``typing.Annotated[...]`` (an alias a module built with ``typing``,
    ``Text = Annotated[str, P(...)]``) as a ``_Hint``; anything else as it is."""
    typing = _typing_loaded()
    if typing is not None and typing.get_origin(value) is typing.Annotated:
        base, *extras = typing.get_args(value)
        return _Hint(base, tuple(extras))
    return value


_SPECS: dict[Callable[..., Any], tuple[Param, ...]] = {}


def spec_of(fn: Callable[..., Any]) -> tuple[Param, ...]:
    """The inputs of ``fn`` (a verb, bound or not), in declaration order;
    ``self`` is skipped. Every parameter must be annotated with ``P``."""
    fn = _unwrap(getattr(fn, "__func__", fn))
    found = _SPECS.get(fn)
    if found is not None:
        return found
    hints = _hints(fn)
    out: list[Param] = []
    # the signature read from the code object (``inspect.signature`` is costly to import)
    code = fn.__code__
    if code.co_flags & 0x0C:  # CO_VARARGS | CO_VARKEYWORDS
        raise TypeError(f"{fn.__qualname__}: *args or **kwargs are not verb inputs")
    n_positional = code.co_argcount
    names = code.co_varnames[: n_positional + code.co_kwonlyargcount]
    defaults = dict(zip(names[n_positional - len(fn.__defaults__ or ()) : n_positional],
                        fn.__defaults__ or (), strict=True))  # fmt: skip
    defaults.update(fn.__kwdefaults__ or {})
    for index, name in enumerate(names):
        if name == "self":
            continue
        annotation = hints.get(name)
        if not isinstance(annotation, _Hint):
            raise TypeError(f"{fn.__qualname__}: {name} is not Annotated[..., P(...)]")
        base, extras = annotation.base, annotation.extras
        ps = [e for e in extras if isinstance(e, P)]
        if len(ps) != 1:
            raise TypeError(f"{fn.__qualname__}: {name} needs exactly one P(...)")
        type_, kind, item_kind, optional = _classify(name, base)
        default = defaults.get(name, MISSING)
        out.append(
            Param(
                name=name,
                type=type_,
                default=default,
                required=default is MISSING,
                positional=code.co_posonlyargcount <= index < n_positional,
                p=ps[0],
                kind=kind,
                item_kind=item_kind,
                optional=optional,
            )
        )
    spec = tuple(out)
    _SPECS[fn] = spec
    return spec


def description(fn: Callable[..., Any]) -> str:
    """The verb's description: its docstring, as one paragraph per blank line."""
    doc = _unwrap(getattr(fn, "__func__", fn)).__doc__ or ""
    lines = "\n".join(line.strip() for line in doc.splitlines())  # inspect.cleandoc's effect here
    paragraphs = [" ".join(part.split()) for part in lines.split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


# --- validation ------------------------------------------------------------------


class BadInput(InvalidInput):
    """An input refused by its spec: ``field`` names it (``text``, ``about[1]``)."""

    def __init__(self, message: str, hint: str | None = None, *, field: str) -> None:
        super().__init__(message, hint)
        self.field = field

    def within(self, tool: str, usage: str | None = None) -> BadInput:
        """The same error named by the tool it came to (``arc_ask: text: ...``),
        with ``usage`` as the hint when the spec gave only the generic one."""
        hint = usage if usage and self.hint == f"fix {self.field}" else self.hint
        return BadInput(f"{tool}: {self.message}", hint, field=self.field)


def _bad(field: str, problem: str, hint: str | None) -> BadInput:
    return BadInput(f"{field}: {problem}", hint=hint or f"fix {field}", field=field)


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _number(param: Param, field: str, value: Any, hint: str | None) -> int | float:
    kind = param.kind
    out: int | float
    if isinstance(value, bool):
        raise _bad(
            field, f"must be {'an integer' if kind == 'int' else 'a number'}, not a bool", hint
        )
    if kind == "int":
        if isinstance(value, int):
            out = value
        elif isinstance(value, float) and value.is_integer():
            out = int(value)
        elif isinstance(value, str) and _is_integer_text(value.strip()):
            out = int(value.strip())
        else:
            shown = repr(value) if isinstance(value, int | float) else _type_name(value)
            raise _bad(field, f"must be an integer, not {shown}", hint)
    else:
        if isinstance(value, int | float):
            out = float(value)
        elif isinstance(value, str):
            try:
                out = float(value.strip())
            except ValueError:
                raise _bad(field, "must be a number", hint) from None
        else:
            raise _bad(field, f"must be a number, not {_type_name(value)}", hint)
        import math  # on use: a number parameter is rare on the hot paths

        if not math.isfinite(out):
            raise _bad(field, "must be a finite number", hint)
    low, high = param.p.min, param.p.max
    if low is not None and out < low:
        raise _bad(field, f"must be at least {_fmt(low)} (got {_fmt(out)})", hint)
    if high is not None and out > high:
        raise _bad(field, f"must be at most {_fmt(high)} (got {_fmt(out)})", hint)
    return out


def _is_integer_text(text: str) -> bool:
    """``[+-]?[0-9]+`` (ASCII digits only), without ``re`` on the CLI's path."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _text(param: Param, field: str, value: Any, hint: str | None) -> str:
    from ouro.edge import check_text, is_blank

    if not isinstance(value, str):
        raise _bad(field, f"must be text, not {_type_name(value)}", hint)
    try:
        check_text(value, field, param.limit)
    except InvalidInput as exc:
        raise BadInput(exc.message, exc.hint, field=field) from None
    if param.p.nonblank and is_blank(value):
        raise _bad(field, "must not be empty or only whitespace", hint)
    choices = param.choices()
    if choices is not None and value not in choices:
        shown = "" if param.p.secret else f" (got {value[:60]!r})"
        raise _bad(field, f"must be one of {', '.join(choices)}{shown}", hint)
    return value


def _json(param: Param, field: str, value: Any, hint: str | None) -> Any:
    from ouro.edge import check_value

    if not isinstance(value, str | dict):
        raise _bad(field, f"must be a JSON object or its text, not {_type_name(value)}", hint)
    try:
        check_value(value, field, param.limit)
    except InvalidInput as exc:
        raise BadInput(exc.message, exc.hint, field=field) from None
    return value


def _one(param: Param, value: Any, hint: str | None) -> Any:
    field = param.name
    if value is None:
        if param.optional:
            return None
        raise _bad(field, "must not be null", hint)
    kind = param.kind
    if kind == "str":
        return _text(param, field, value, hint)
    if kind in ("int", "float"):
        return _number(param, field, value, hint)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _bad(field, f"must be true or false, not {_type_name(value)}", hint)
        return value
    if kind == "json":
        return _json(param, field, value, hint)
    # a list
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise _bad(field, f"must be a list, not {_type_name(value)}", hint)
    if len(value) > param.max_items:
        raise _bad(
            field,
            f"{len(value)} items, more than the limit of {param.max_items}",
            hint or f"pass at most {param.max_items} values",
        )
    if param.p.min is not None and len(value) < param.p.min:
        raise _bad(field, f"needs at least {_fmt(param.p.min)} item(s)", hint)
    check = _json if param.item_kind == "json" else _text
    return [check(param, f"{field}[{i}]", item, hint) for i, item in enumerate(value)]


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def validate(
    fn: Callable[..., Any], args: Mapping[str, Any], *, hint: str | None = None
) -> dict[str, Any]:
    """The validated inputs of ``fn`` for ``args`` (defaults filled in), or
    ``InvalidInput`` naming the first bad field. Unknown fields are refused."""
    spec = spec_of(fn)
    if not isinstance(args, Mapping):
        raise BadInput(
            f"arguments must be an object of named fields, not {_type_name(args)}",
            hint=hint or "pass the inputs by name",
            field="(arguments)",
        )
    known = {param.name for param in spec}
    unknown = [str(key) for key in args if key not in known]
    if unknown:
        raise BadInput(
            f"{unknown[0]}: unknown field"
            + (f" (and {', '.join(unknown[1:])})" if len(unknown) > 1 else ""),
            hint=hint or ("known fields: " + (", ".join(sorted(known)) or "none")),
            field=unknown[0],
        )
    out: dict[str, Any] = {}
    for param in spec:
        if param.name in args:
            out[param.name] = _one(param, args[param.name], hint)
        elif param.required:
            raise _bad(param.name, "required", hint)
        else:
            out[param.name] = _copy(param.default)
    return out


# --- the MCP input schema -------------------------------------------------------------
_JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _item_schema(param: Param, kind: str) -> dict[str, Any]:
    if kind == "json":
        return {"type": ["object", "string"]}
    out: dict[str, Any] = {"type": _JSON_TYPES[kind]}
    if kind == "str":
        choices = param.choices()
        if choices is not None:
            out["enum"] = list(choices)
        out["maxLength"] = param.limit
        if param.p.nonblank:
            out["minLength"] = 1
    elif kind in ("int", "float"):
        if param.p.min is not None:
            out["minimum"] = param.p.min if kind == "float" else int(param.p.min)
        if param.p.max is not None:
            out["maximum"] = param.p.max if kind == "float" else int(param.p.max)
    return out


def _param_schema(param: Param) -> dict[str, Any]:
    if param.kind == "list":
        out: dict[str, Any] = {
            "type": "array",
            "items": _item_schema(param, param.item_kind or "str"),
            "maxItems": param.max_items,
        }
        if param.p.min is not None:
            out["minItems"] = int(param.p.min)
    else:
        out = _item_schema(param, param.kind)
    out["description"] = param.p.help
    if not param.required and param.default is not None:
        out["default"] = _copy(param.default)
    return out


def json_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON schema of ``fn``'s inputs (the MCP ``inputSchema``): an object
    with one property per input, the required ones listed, nothing else allowed.
    An optional input is given as its plain type: omitting it means null."""
    spec = spec_of(fn)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {param.name: _param_schema(param) for param in spec},
        "additionalProperties": False,
    }
    required = [param.name for param in spec if param.required]
    if required:
        schema["required"] = required
    return schema


# --- @verb ----------------------------------------------------------------------------
def bind(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """``args`` (positional, in declaration order) and ``kwargs`` as one mapping
    by name, refusing a positional beyond the positional inputs or a name given twice."""
    spec = spec_of(fn)
    positional = [param.name for param in spec if param.positional]
    if len(args) > len(positional):
        raise BadInput(
            f"{len(args)} positional values, but only {len(positional)} inputs are positional"
            + (f" ({', '.join(positional)})" if positional else ""),
            hint="pass the others by name",
            field="(arguments)",
        )
    named = dict(zip(positional, args, strict=False))
    for key, value in kwargs.items():
        if key in named:
            raise BadInput(f"{key}: given twice", hint=f"pass {key} once", field=key)
        named[key] = value
    return named


def verb(fn: _F) -> _F:
    """Mark ``fn`` (a method of a library namespace) as a verb: every call is
    validated against its signature, runs collecting warnings, and returns the
    result dict with them under ``"warnings"``."""

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        from ouro.notices import collect

        inputs = validate(fn, bind(fn, args, kwargs))
        with collect() as warnings:
            result = fn(self, **inputs)
        if warnings and isinstance(result, dict):
            result["warnings"] = list(dict.fromkeys([*result.get("warnings", []), *warnings]))
        return result

    call.__ouro_verb__ = True  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def is_verb(fn: object) -> bool:
    return bool(getattr(getattr(fn, "__func__", fn), "__ouro_verb__", False))
