"""The tool registry is the one source of the CLI and MCP tool sets."""

from __future__ import annotations

import re

import click
from ouro.cli.app import COMMANDS, cli

from ouro import tools as registry
from ouro.mcp import tool_definitions
from ouro.models.base import ToolInput

# Narrower than MCP's own rule (SEP-986: [A-Za-z0-9_.-]{1,128}) so every client
# accepts the names: hosts turn tools into model function names (letters,
# digits, underscore, at most 64) after a prefix such as "mcp__ouro__".
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


def cli_leaves(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> dict[tuple[str, ...], click.Command]:
    """Every runnable command of the click tree, by path. A group that runs on
    its own (``ouro sync``) is one declared command together with its subcommands."""
    ctx = click.Context(group)
    leaves: dict[tuple[str, ...], click.Command] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"listed but not loadable: {(*prefix, name)}"
        if isinstance(command, click.Group) and not command.invoke_without_command:
            leaves.update(cli_leaves(command, (*prefix, name)))
        else:
            leaves[(*prefix, name)] = command
    return leaves


def test_cli_and_mcp_expose_the_same_tool_set() -> None:
    by_path = {tool.cli: tool.name for tool in registry.TOOLS}
    leaves = cli_leaves(cli)
    cli_tools = {by_path[path] for path in leaves if path in by_path}
    mcp_tools = {t.name for t in tool_definitions()}  # every tool: 'ouro mcp --tools all'
    registered = {tool.name for tool in registry.TOOLS}
    assert cli_tools == registered
    assert mcp_tools == registered
    # every other command is a declared non-tool command, not a hand-wired tool
    assert set(leaves) - set(by_path) == set(COMMANDS)


def test_tool_commands_name_their_tool() -> None:
    leaves = cli_leaves(cli)
    for tool in registry.TOOLS:
        assert f"(agent tool: {tool.name})" in (leaves[tool.cli].help or "")


def test_names_and_cli_paths_are_unique_and_valid() -> None:
    names = [tool.name for tool in registry.TOOLS]
    paths = [tool.cli for tool in registry.TOOLS]
    assert len(set(names)) == len(names)
    assert len(set(paths)) == len(paths)
    assert not set(paths) & set(COMMANDS), "a tool path collides with a non-tool command"
    for name in names:
        assert TOOL_NAME.match(name), name
        assert registry.get(name).name == name


def test_input_models_refuse_unknown_fields_and_bind_cli_fields() -> None:
    for tool in registry.TOOLS:
        model = tool.model()
        assert issubclass(model, ToolInput), tool.name
        assert model.model_config.get("extra") == "forbid", tool.name
        fields = set(model.model_fields)
        declared = set(tool.args) | set(tool.options) | set(tool.files)
        assert declared <= fields, f"{tool.name}: CLI names unknown fields {declared - fields}"
        schema = model.model_json_schema()
        assert schema["type"] == "object"
        assert set(schema.get("properties", {})) == fields


def test_hints_are_consistent() -> None:
    for tool in registry.TOOLS:
        # MCP: destructiveHint only has meaning for a tool that writes
        if tool.read_only:
            assert not tool.destructive, tool.name


def test_functions_and_renderers_load() -> None:
    for tool in registry.TOOLS:
        assert callable(tool.func()), tool.name
        if tool.render:
            assert callable(registry.load(tool.render)), tool.name


def test_every_tool_description_is_a_sentence() -> None:
    for tool in registry.TOOLS:
        assert tool.description[:1].isupper() and tool.description.endswith("."), tool.name


def test_one_naming_rule_for_cli_and_mcp() -> None:
    """The MCP name is the CLI path joined by '_' ('-' -> '_'); nothing else."""
    for tool in registry.TOOLS:
        assert tool.name == "_".join(tool.cli).replace("-", "_"), tool.cli
    assert {t.name for t in tool_definitions()} == {
        "_".join(t.cli).replace("-", "_") for t in registry.TOOLS
    }


def test_the_search_verbs_take_the_same_arguments() -> None:
    searches = [t for t in registry.TOOLS if t.cli[-1] == "search"]
    assert {t.cli for t in searches} == {
        ("desk", "search"),
        ("diary", "search"),
        ("facts", "search"),
        ("notes", "search"),
    }
    for tool in searches:
        fields = tool.model().model_fields
        assert tool.args == ("query",), tool.name
        assert not fields["query"].is_required(), tool.name
        assert fields["query"].description == fields["query"].description
        assert "limit" in fields, tool.name
    descriptions = {t.model().model_fields["query"].description for t in searches}
    assert len(descriptions) == 1
