"""The CLI fast path for the four search verbs.

Agents run ``ouro desk search …`` once per tool call, so start-up time is
most of the cost. ``try_run(argv)`` parses exactly these forms with the
standard library::

    ouro [--bundle B] [--json] desk search QUERY [--kind K]... [--track T] [--status S] [--limit N] [--json]
    ouro [--bundle B] [--json] diary consult [QUERY] [--about E] [--since D] [--history] [--limit N] [--json]
    ouro [--bundle B] [--json] facts search QUERY [--about E] [--limit N] [--json]
    ouro [--bundle B] [--json] notes consult QUERY [--tag T] [--limit N] [--json]

and answers through the same functions and printers as the click command,
so the output is byte-identical. Anything it does not fully understand —
``--help``, an unknown or repeated option, a missing query, a bad value,
``OURO_DEBUG=1`` — returns None and the full click CLI handles it, producing
the standard messages. It never imports click or pydantic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

KINDS = ("task", "track", "iteration", "friction", "tip", "fact", "note", "daily")
_INT = re.compile(r"[0-9]{1,3}")


def _kinds(values: list[str]) -> list[str] | None:
    return values if all(v in KINDS for v in values) else None


def _limit(values: list[str]) -> int | None:
    value = values[-1]
    if not _INT.fullmatch(value) or not 1 <= int(value) <= 100:
        return None
    return int(value)


#: verb -> (query required, {option: (field, takes value, repeatable)})
_VERBS: dict[tuple[str, str], tuple[bool, dict[str, tuple[str, bool, bool]]]] = {
    ("desk", "search"): (
        True,
        {
            "--kind": ("kinds", True, True),
            "--track": ("track", True, False),
            "--status": ("status", True, False),
            "--limit": ("limit", True, False),
        },
    ),
    ("diary", "consult"): (
        False,
        {
            "--about": ("about", True, False),
            "--since": ("since", True, False),
            "--history": ("history", False, False),
            "--limit": ("limit", True, False),
        },
    ),
    ("facts", "search"): (
        True,
        {"--about": ("about", True, False), "--limit": ("limit", True, False)},
    ),
    ("notes", "consult"): (
        True,
        {"--tag": ("tag", True, False), "--limit": ("limit", True, False)},
    ),
}


def parse(argv: list[str]) -> tuple[str | None, bool, tuple[str, str], dict[str, Any]] | None:
    """``(bundle, json, verb, arguments)`` or None when this is not a fast-path call."""
    bundle: str | None = None
    json_mode = False
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg == "--json":
            json_mode = True
        elif arg == "--bundle" and i + 1 < len(argv) and bundle is None:
            bundle = argv[i + 1]
            i += 1
        elif arg.startswith("--bundle=") and bundle is None:
            bundle = arg.split("=", 1)[1]
        else:
            return None
        i += 1
    verb = tuple(argv[i : i + 2])
    if verb not in _VERBS or (bundle is not None and not bundle):
        return None
    required, options = _VERBS[verb]
    positional: list[str] = []
    values: dict[str, list[str]] = {}
    rest = argv[i + 2 :]
    j = 0
    only_positional = False
    while j < len(rest):
        arg = rest[j]
        if only_positional or not arg.startswith("-") or arg == "-":
            if arg == "-":
                return None
            positional.append(arg)
        elif arg == "--":
            only_positional = True
        elif arg == "--json":
            json_mode = True
        else:
            name, eq, inline = arg.partition("=")
            if name not in options:
                return None
            field, takes_value, repeatable = options[name]
            if not takes_value:
                if eq:
                    return None
                values.setdefault(field, []).append("1")
            elif eq:
                values.setdefault(field, []).append(inline)
            elif j + 1 < len(rest) and not rest[j + 1].startswith("-"):
                values.setdefault(field, []).append(rest[j + 1])
                j += 1
            else:
                return None
            if not repeatable and len(values[field]) > 1 and takes_value:
                return None
        j += 1
    if len(positional) > 1 or (required and not positional):
        return None
    arguments: dict[str, Any] = {"query": positional[0] if positional else None}
    for field, given in values.items():
        if field == "kinds":
            kinds = _kinds(given)
            if kinds is None:
                return None
            arguments[field] = kinds
        elif field == "limit":
            limit = _limit(given)
            if limit is None:
                return None
            arguments[field] = limit
        elif field == "history":
            arguments[field] = True
        else:
            arguments[field] = given[-1]
    return bundle, json_mode, verb, arguments


def try_run(argv: list[str]) -> int | None:
    """Answer a search verb and return the exit code, or None to use the full CLI."""
    if os.environ.get("OURO_DEBUG") == "1":
        return None
    parsed = parse(argv)
    if parsed is None:
        return None
    bundle_arg, json_mode, verb, arguments = parsed
    from ouro.cli.output import emit, emit_error
    from ouro.errors import OuroError
    from ouro.index import search

    functions: dict[tuple[str, str], Callable[..., dict[str, Any]]] = {
        ("desk", "search"): search.desk_search,
        ("diary", "consult"): search.consult_diary,
        ("facts", "search"): search.search_facts,
        ("notes", "consult"): search.consult_notes,
    }
    try:
        from ouro.bundle import Bundle

        bundle = Bundle.locate(bundle_arg)
        result = functions[verb](bundle.root, **arguments)
    except OuroError as exc:
        emit_error(exc, json_mode=json_mode)
        return 1
    emit(result, json_mode=json_mode, render=search.render)
    return 0
