"""The registry is data: one row per tool; names, paths, methods and specs agree."""

from __future__ import annotations

import re

import pytest

from ouro import registry
from ouro.cli.tree import COMMANDS, entries
from ouro.errors import NotFound
from ouro.mcp import tool_definitions
from ouro.spec import is_verb, spec_of

# Narrower than MCP's own rule (SEP-986: [A-Za-z0-9_.-]{1,128}) so every client
# accepts the names: hosts turn tools into model function names (letters,
# digits, underscore, at most 64) after a prefix such as "mcp__ouro__".
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")

#: the seed's record tools (../shared/seeds/002_*): these names, exactly
SEED = {
    ("diary", "write"): "diary_write",
    ("diary", "consult"): "consult_diary",
    ("facts", "search"): "search_facts",
    ("notes", "consult"): "consult_notes",
    ("desk", "search"): "desk_search",
}


def test_cli_and_mcp_expose_the_same_tool_set() -> None:
    by_path = {tool.path: tool.name for tool in registry.TOOLS}
    leaves = entries()
    cli_tools = {by_path[path] for path in leaves if path in by_path}
    mcp_tools = {t["name"] for t in tool_definitions()}  # every tool: 'ouro mcp --tools all'
    assert cli_tools == {tool.name for tool in registry.TOOLS}
    assert mcp_tools == {tool.name for tool in registry.TOOLS if tool.agent}
    # a tool command runs its library method
    for path, entry in leaves.items():
        if path in by_path:
            assert entry.tool is registry.find(path) and entry.function() is entry.tool.method()
    # every other command is a declared non-tool command, not a hand-wired tool
    assert set(leaves) - set(by_path) == set(COMMANDS)


def test_no_tool_path_starts_with_a_command_path() -> None:
    """The CLI finds a non-tool command without the registry (``ouro.cli.tree.resolve``)."""
    for tool in registry.TOOLS:
        for command in COMMANDS:
            assert tool.path[: len(command)] != command, (tool.path, command)


def test_names_and_cli_paths_are_unique_and_valid() -> None:
    names = [tool.name for tool in registry.TOOLS]
    paths = [tool.path for tool in registry.TOOLS]
    assert len(set(names)) == len(names)
    assert len(set(paths)) == len(paths)
    assert not set(paths) & set(COMMANDS), "a tool path collides with a non-tool command"
    for tool in registry.TOOLS:
        assert TOOL_NAME.match(tool.name), tool.name
        assert registry.find(tool.name) is tool
        assert registry.find(tool.path) is tool
        assert registry.find(" ".join(tool.path)) is tool
    with pytest.raises(NotFound, match="no tool named 'diary_search'"):
        registry.find("diary_search")


def test_the_naming_rule_and_its_only_exceptions() -> None:
    """MCP name = CLI path joined by '_' ('-' -> '_'), except the seed's names,
    declared once in SEED_NAMES; no alias tools for the old names."""
    for tool in registry.TOOLS:
        rule = "_".join(tool.path).replace("-", "_")
        if tool.path in registry.SEED_NAMES:
            assert tool.name == registry.SEED_NAMES[tool.path] != rule
        else:
            assert tool.name == rule, tool.path
    for path, name in SEED.items():
        assert registry.find(path).name == name
    assert set(registry.SEED_NAMES) <= {t.path for t in registry.TOOLS}
    names = {t.name for t in registry.TOOLS}
    # the renamed names are gone, and no tool answers to the rule's name of a seed tool
    assert not names & {"diary_search", "facts_search", "notes_search"}
    assert not names & {"diary_consult", "notes_consult"}
    # the default MCP set serves all five seed tools
    assert {registry.find(path).name for path in SEED if registry.find(path).default} == set(
        SEED.values()
    )


def test_every_target_is_a_verb_reached_by_its_path() -> None:
    """The target names the method; the CLI path walks to the same method on a bundle."""
    import ouro.api

    b = ouro.api.Bundle.__new__(ouro.api.Bundle)  # no bundle on disk needed to walk
    for tool in registry.TOOLS:
        method = tool.method()
        assert is_verb(method), tool.target
        found: object = b
        for part in tool.path:
            found = getattr(found, part.replace("-", "_"))
        # a namespace that is itself a verb (``b.surface(...)``) is reached by calling it
        reached = getattr(found, "__func__", None) or vars(type(found)).get("__call__")
        assert reached is method, tool.path
        spec_of(method)  # every parameter is declared with P


def test_hints_are_consistent() -> None:
    for tool in registry.TOOLS:
        # MCP: destructiveHint only has meaning for a tool that writes
        if tool.read_only:
            assert not tool.destructive, tool.name
        if tool.open_world:
            assert tool.destructive, tool.name


def test_every_tool_description_is_a_sentence() -> None:
    for tool in registry.TOOLS:
        text = tool.description()
        assert text[:1].isupper() and text.endswith("."), tool.name


def test_the_search_verbs_take_the_same_arguments() -> None:
    searches = [t for t in registry.TOOLS if t.path[-1] in ("search", "consult")]
    assert {t.path for t in searches} == {
        ("desk", "search"),
        ("diary", "consult"),
        ("facts", "search"),
        ("notes", "consult"),
    }
    queries = set()
    for tool in searches:
        params = {p.name: p for p in spec_of(tool.method())}
        first = spec_of(tool.method())[0]
        assert first.name == "query" and first.positional and not first.required, tool.name
        assert {"limit", "mode", "explain"} <= set(params), tool.name
        queries.add(params["query"].p.help)
    assert len(queries) == 1
