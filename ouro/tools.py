"""The one tool registry.

Each agent-facing tool is declared here exactly once: its name, its pydantic
input model, its description, its read-only / destructive / idempotent hints,
the domain function it calls and the CLI path it appears under. ``ouro.cli``
and ``ouro.mcp`` are both generated from ``TOOLS``, so they cannot drift.

Models and functions are named as ``"module:attr"`` strings and imported on
first use, so a CLI call pays only for the tool it runs.

A tool function has the signature ``fn(bundle: Bundle, inp: Model) -> dict``
and returns a JSON-ready dict (the object the CLI prints with ``--json``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ouro.errors import NotFound

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ouro.bundle import Bundle


def load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: str
    function: str
    cli: tuple[str, ...]
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    #: input fields taken as positional CLI arguments, in order
    args: tuple[str, ...] = ()
    #: CLI option name overrides: field -> "--flag"
    options: Mapping[str, str] = field(default_factory=dict)
    #: fields whose CLI option names a file to read ("-" = stdin): field -> "--flag"
    files: Mapping[str, str] = field(default_factory=dict)
    #: optional "module:func" turning the result dict into text for humans
    render: str | None = None

    def model(self) -> type[BaseModel]:
        model: type[BaseModel] = load(self.input_model)
        return model

    def func(self) -> Callable[[Bundle, Any], dict[str, Any]]:
        fn: Callable[[Bundle, Any], dict[str, Any]] = load(self.function)
        return fn


TOOLS: tuple[Tool, ...] = (
    # --- bundle ------------------------------------------------------------
    Tool(
        name="bundle_info",
        description="Describe the bundle: its path, agent, layout version, how many files "
        "each area holds, and the state of the search index.",
        input_model="ouro.info:InfoInput",
        function="ouro.info:bundle_info",
        cli=("info",),
        read_only=True,
        idempotent=True,
        render="ouro.info:render_info",
    ),
    # --- arc ---------------------------------------------------------------
    # --- desk --------------------------------------------------------------
    # --- sentinel ----------------------------------------------------------
    # --- habits ------------------------------------------------------------
)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def get(name: str) -> Tool:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise NotFound(
            f"no tool named {name!r}", hint="known tools: " + ", ".join(sorted(_BY_NAME))
        ) from None


def invoke(name: str, bundle: Bundle, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``arguments`` against the tool's model and call its function."""
    from ouro.models.base import validate_input

    tool = get(name)
    inp = validate_input(tool.model(), arguments, source=name)
    return tool.func()(bundle, inp)
