"""The CLI fast path for the four search verbs, ``ouro orient``, ``ouro diary write``,
``ouro index status`` and ``ouro info``.

Agents run ``ouro desk search …`` once per tool call, so start-up time is
most of the cost. ``try_run(argv)`` parses exactly these forms with the
standard library::

    ouro desk search [QUERY] [--kind K]... [--track T] [--status S] [--limit N] [MODE]
    ouro diary consult [QUERY] [--about E] [--since D] [--history] [--limit N] [MODE]
    ouro facts search [QUERY] [--about E] [--limit N] [MODE]
    ouro notes consult [QUERY] [--tag T] [--limit N] [MODE]

where MODE is ``[--mode lexical|semantic|hybrid] [--explain]``, and::

    ouro orient [--budget N]
    ouro diary write TEXT [--about E]... [--source S] [--trust T] [--channel C]
                          [--friend F] [--friend-name N] [--supersedes ID] [--force]
    ouro index status
    ouro info

with ``--bundle B`` and ``--json`` anywhere on the line (as the full CLI accepts them)

and answers through the same search functions and renderer as the click
command, so the output is byte-identical (a test compares them). Anything it
does not fully understand returns None and the full click CLI handles it,
producing the standard messages: ``--help``, an unknown or repeated option, a
missing query, a bad value, ``OURO_DEBUG=1``, a habit session's tool policy
(``OURO_GRANTED_TOOLS`` / ``OURO_DENIED_TOOLS`` set: only
``ouro.tools.invoke`` enforces it), a bundle that ``Bundle.locate`` might
refuse, and every ``OuroError`` of a read (the full CLI runs the search again
and prints the error its way). ``diary write`` falls back only before its tool
call; an error of the write itself is printed here by the same function the
full CLI uses (``ouro.cli.output.report_error``), with the same exit code.

Cost is what matters here, so this path imports only cheap standard modules:
not click, pydantic, PyYAML, orjson (its import pulls in ``dataclasses`` and
``inspect``), pathlib, typing or ``ouro.bundle``. JSON is printed with the
standard ``json`` encoder in orjson's exact format (compact, UTF-8); a test
checks the two agree.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = ("task", "track", "iteration", "friction", "lesson", "tip", "fact", "note", "daily")
#: the habit tool-policy variables (``ouro.habits.policy.ENV_GRANTED/ENV_DENIED``)
POLICY_ENV = ("OURO_GRANTED_TOOLS", "OURO_DENIED_TOOLS")
#: what ``Bundle.locate`` reads and refuses (``ouro.bundle``)
BUNDLE_ENV = "OURO_BUNDLE"
LEGACY_ROOTS = ("journal", "diary", "notes")
#: project pointer files (``ouro.bundle.POINTER_FILES``)
POINTER_FILES = (".ouro", "ouro.toml")


def _kinds(values: list[str]) -> list[str] | None:
    return values if all(v in KINDS for v in values) else None


def _limit(values: list[str]) -> int | None:
    value = values[-1]
    if not (0 < len(value) <= 3 and all(c in "0123456789" for c in value)):
        return None
    return int(value) if 1 <= int(value) <= 100 else None


MODES = ("lexical", "semantic", "hybrid")
_MODE = {"--mode": ("mode", True, False), "--explain": ("explain", False, False)}

#: verb -> (query required, {option: (field, takes value, repeatable)})
_VERBS: dict[tuple[str, str], tuple[bool, dict[str, tuple[str, bool, bool]]]] = {
    ("desk", "search"): (
        False,
        {
            "--kind": ("kinds", True, True),
            "--track": ("track", True, False),
            "--status": ("status", True, False),
            "--limit": ("limit", True, False),
            **_MODE,
        },
    ),
    ("diary", "consult"): (
        False,
        {
            "--about": ("about", True, False),
            "--since": ("since", True, False),
            "--history": ("history", False, False),
            "--limit": ("limit", True, False),
            **_MODE,
        },
    ),
    ("facts", "search"): (
        False,
        {"--about": ("about", True, False), "--limit": ("limit", True, False), **_MODE},
    ),
    ("notes", "consult"): (
        False,
        {"--tag": ("tag", True, False), "--limit": ("limit", True, False), **_MODE},
    ),
}


def parse(argv: list[str]) -> tuple[str | None, bool, tuple[str, str], dict[str, Any]] | None:
    """``(bundle, json, verb, arguments)`` or None when this is not a fast-path call."""
    from ouro.cli.argv import hoist_globals

    argv = hoist_globals(argv)
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
    # mode None: hybrid when ouro[semantic] is installed (the tools' default)
    arguments: dict[str, Any] = {"query": positional[0] if positional else None, "mode": None}
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
        elif field in ("history", "explain"):
            arguments[field] = True
        elif field == "mode":
            if given[-1] not in MODES:
                return None
            arguments[field] = given[-1]
        else:
            arguments[field] = given[-1]
    return bundle, json_mode, verb, arguments


#: ``ouro.orient_tool.OrientInput.budget``'s lower bound (``ge``)
ORIENT_MIN_BUDGET = 200


def parse_orient(argv: list[str]) -> tuple[str | None, bool, int | None] | None:
    """``(bundle, json, budget)`` for ``ouro orient [--budget N]``, or None."""
    from ouro.cli.argv import hoist_globals

    argv = hoist_globals(argv)
    bundle: str | None = None
    json_mode = False
    budget: int | None = None
    seen_verb = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            json_mode = True
        elif not seen_verb and arg == "--bundle" and i + 1 < len(argv) and bundle is None:
            bundle = argv[i + 1]
            i += 1
        elif not seen_verb and arg.startswith("--bundle=") and bundle is None:
            bundle = arg.split("=", 1)[1]
        elif not seen_verb and arg == "orient":
            seen_verb = True
        elif seen_verb and budget is None and arg.partition("=")[0] == "--budget":
            _name, eq, value = arg.partition("=")
            if not eq:
                if i + 1 >= len(argv):
                    return None
                value = argv[i + 1]
                i += 1
            if not (0 < len(value) <= 9 and all(c in "0123456789" for c in value)):
                return None
            budget = int(value)
            if budget < ORIENT_MIN_BUDGET:
                return None
        else:
            return None
        i += 1
    if not seen_verb or (bundle is not None and not bundle):
        return None
    return bundle, json_mode, budget


def run_orient(argv: list[str]) -> int | None:
    """Answer ``ouro orient`` as the registry tool does, or None to use the full CLI."""
    parsed = parse_orient(argv)
    if parsed is None:
        return None
    bundle_arg, json_mode, budget = parsed
    root = locate(bundle_arg)
    if root is None:
        return None
    from ouro import progress
    from ouro.bundle import Bundle
    from ouro.errors import OuroError
    from ouro.notices import collect
    from ouro.orient import DEFAULT_BUDGET, build_packet

    progress.set_json(json_mode)
    try:
        bundle = Bundle.open(root)
        with collect() as warnings:
            result = build_packet(bundle, budget=DEFAULT_BUDGET if budget is None else budget)
            out = result.to_json()
    except OuroError:
        return None
    if warnings:
        out["warnings"] = [*out.get("warnings", []), *warnings]
    sys.stdout.write(dumps(out) if json_mode else str(out["text"]).rstrip("\n") + "\n")
    return 0


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # orjson refuses NaN and Infinity: let Bundle.open say so


def locate(explicit: str | None) -> str | None:
    """The bundle root when ``Bundle.locate(explicit)`` surely accepts it, else None.

    Same discovery (``--bundle``, ``$OURO_BUNDLE``, no pointer file upwards,
    nearest ``bundle.json`` upwards) and the same checks (a folder, no legacy top-level folders,
    ``bundle.json`` read bounded and valid by ``ouro.models.meta``); on any doubt the
    full CLI decides.
    """
    import json

    chosen = explicit or os.environ.get(BUNDLE_ENV)
    if chosen:
        root = os.path.join(os.getcwd(), os.path.expanduser(chosen))
    else:
        # A pointer file anywhere upwards comes first, and a *.ouro child of the
        # cwd last: both are left to the full CLI (``Bundle.discover``).
        found = None
        folder = os.getcwd()
        while True:
            if any(os.path.isfile(os.path.join(folder, n)) for n in POINTER_FILES):
                return None
            if found is None and os.path.isfile(os.path.join(folder, "bundle.json")):
                found = folder
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        if found is None:
            return None
        root = found
    if not os.path.isdir(root) or any(os.path.exists(os.path.join(root, n)) for n in LEGACY_ROOTS):
        return None
    from ouro.errors import OuroError
    from ouro.models import meta as meta_shape
    from ouro.store.bounded import read_bytes

    try:
        raw = read_bytes(
            os.path.join(root, "bundle.json"), limit=meta_shape.META_LIMIT, what="bundle.json"
        )
        meta = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (OuroError, ValueError, RecursionError):
        return None
    # the same check as ``Bundle.open`` (``ouro.models.meta``): any problem, the full CLI says it
    return root if meta_shape.problem(meta) is None else None


def dumps(result: Any) -> str:
    """``ouro.cli.output.to_json_line`` (orjson) byte for byte, without orjson."""
    import json

    return json.dumps(result, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


#: ``ouro diary write`` options: flag -> (field, takes a value, repeatable), as
#: the registry's generated command has them (a test compares the two)
WRITE_OPTIONS: dict[str, tuple[str, bool, bool]] = {
    "--about": ("about", True, True),
    "--source": ("source", True, False),
    "--trust": ("trust", True, False),
    "--channel": ("channel", True, False),
    "--friend": ("friend", True, False),
    "--friend-name": ("friend_name", True, False),
    "--supersedes": ("supersedes", True, False),
    "--force": ("force", False, False),
}


def parse_write(argv: list[str]) -> tuple[str | None, bool, dict[str, Any]] | None:
    """``(bundle, json, arguments)`` for ``ouro diary write TEXT [options]``, or None.

    ``arguments`` are what the click command passes to ``tools.invoke``: the
    text, each option given (``--about`` as a list, ``--force`` as True).
    Anything unusual (a repeated single option, ``--``, a value or text that
    starts with ``-``, ``--verbose``, ``--help``) is left to the full CLI.
    """
    from ouro.cli.argv import hoist_globals

    argv = hoist_globals(argv)
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
    if argv[i : i + 2] != ["diary", "write"] or (bundle is not None and not bundle):
        return None
    rest = argv[i + 2 :]
    texts: list[str] = []
    arguments: dict[str, Any] = {}
    j = 0
    while j < len(rest):
        arg = rest[j]
        if not arg.startswith("-"):
            texts.append(arg)
        elif arg == "--json":
            json_mode = True
        else:
            name, eq, inline = arg.partition("=")
            if name not in WRITE_OPTIONS:
                return None
            field, takes_value, repeatable = WRITE_OPTIONS[name]
            if not takes_value:
                if eq:
                    return None
                arguments[field] = True
            else:
                if eq:
                    value = inline
                elif j + 1 < len(rest) and not rest[j + 1].startswith("-"):
                    value = rest[j + 1]
                    j += 1
                else:
                    return None
                if repeatable:
                    arguments.setdefault(field, []).append(value)
                elif field in arguments:
                    return None
                else:
                    arguments[field] = value
        j += 1
    if len(texts) != 1:
        return None
    return bundle, json_mode, {"text": texts[0], **arguments}


def run_write(argv: list[str]) -> int | None:
    """Run ``ouro diary write`` as the click command does (same tool call, output,
    errors and exit codes), or None to use the full CLI.

    Only what happens before the tool runs may fall back (the full CLI then
    does it again); once the write is attempted its outcome is reported here.
    """
    parsed = parse_write(argv)
    if parsed is None:
        return None
    bundle_arg, json_mode, arguments = parsed
    root = locate(bundle_arg)
    if root is None:
        return None
    from ouro import progress
    from ouro.bundle import Bundle
    from ouro.errors import OuroError

    progress.set_json(json_mode)
    try:
        bundle = Bundle.open(root)
    except OuroError:
        return None
    from ouro.cli.output import emit, report_error
    from ouro.cli.render import fact_written
    from ouro.tools import invoke

    try:
        result = invoke("diary_write", bundle, arguments)
    except (OuroError, OSError) as exc:
        return report_error(exc, json_mode="--json" in argv)
    except KeyboardInterrupt:
        from ouro.cli.exits import INTERRUPTED

        sys.stderr.write("interrupted\n")
        return INTERRUPTED
    except Exception as exc:  # as the full CLI: JSON when asked, else the traceback
        if "--json" not in argv:
            raise
        return report_error(exc, json_mode=True)
    emit(result, json_mode=json_mode, render=fact_written)
    return 0


def parse_index_status(
    argv: list[str], verb_wanted: tuple[str, ...] = ("index", "status")
) -> tuple[str | None, bool] | None:
    """``(bundle, json)`` for ``ouro index status [--json]`` (or another verb
    without arguments: ``verb_wanted``), or None."""
    from ouro.cli.argv import hoist_globals

    argv = hoist_globals(argv)
    bundle: str | None = None
    json_mode = False
    verb: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            json_mode = True
        elif not verb and arg == "--bundle" and i + 1 < len(argv) and bundle is None:
            bundle = argv[i + 1]
            i += 1
        elif not verb and arg.startswith("--bundle=") and bundle is None:
            bundle = arg.split("=", 1)[1]
        elif arg.startswith("-") or len(verb) == len(verb_wanted):
            return None
        else:
            verb.append(arg)
        i += 1
    if tuple(verb) != verb_wanted or (bundle is not None and not bundle):
        return None
    return bundle, json_mode


def run_info(argv: list[str]) -> int | None:
    """Answer ``ouro info [--json]`` through the registry tool as the click
    command does, or None (read-only: on any error the full CLI asks again)."""
    parsed = parse_index_status(argv, ("info",))
    if parsed is None:
        return None
    bundle_arg, json_mode = parsed
    root = locate(bundle_arg)
    if root is None:
        return None
    from ouro import progress
    from ouro.bundle import Bundle
    from ouro.errors import OuroError
    from ouro.info import render_info
    from ouro.tools import invoke

    progress.set_json(json_mode)
    try:
        result = invoke("info", Bundle.open(root), {})
    except (OuroError, OSError):
        return None
    sys.stdout.write(dumps(result) if json_mode else render_info(result).rstrip("\n") + "\n")
    return 0


def run_index_status(argv: list[str]) -> int | None:
    """Answer ``ouro index status`` as the click command does, or None."""
    parsed = parse_index_status(argv)
    if parsed is None:
        return None
    bundle_arg, json_mode = parsed
    root = locate(bundle_arg)
    if root is None:
        return None
    from ouro.derived import index_status, render_status
    from ouro.errors import OuroError

    try:
        result = index_status(root)
    except (OuroError, OSError):
        return None  # read-only: the full CLI asks again and reports it its way
    sys.stdout.write(dumps(result) if json_mode else render_status(result).rstrip("\n") + "\n")
    return 0


def try_run(argv: list[str]) -> int | None:
    """Answer a search verb, ``orient`` or ``diary write`` and return the exit
    code, or None to use the full CLI."""
    if os.environ.get("OURO_DEBUG") == "1" or any(v in os.environ for v in POLICY_ENV):
        return None
    if "orient" in argv:
        return run_orient(argv)
    if "write" in argv:
        code = run_write(argv)
        if code is not None:
            return code
    if "status" in argv:
        code = run_index_status(argv)
        if code is not None:
            return code
    if "info" in argv:
        code = run_info(argv)
        if code is not None:
            return code
    parsed = parse(argv)
    if parsed is None:
        return None
    bundle_arg, json_mode, verb, arguments = parsed
    root = locate(bundle_arg)
    if root is None:
        return None
    from ouro import progress
    from ouro.errors import OuroError
    from ouro.index import search

    progress.set_json(json_mode)
    functions: dict[tuple[str, str], Callable[..., dict[str, Any]]] = {
        ("desk", "search"): search.desk_search,
        ("diary", "consult"): search.consult_diary,
        ("facts", "search"): search.search_facts,
        ("notes", "consult"): search.consult_notes,
    }
    try:
        result = functions[verb](root, **arguments)
    except OuroError:
        return None
    sys.stdout.write(dumps(result) if json_mode else search.render(result).rstrip("\n") + "\n")
    return 0
