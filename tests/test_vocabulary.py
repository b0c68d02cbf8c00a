"""The record is a record. No template, tool name, tool description, input
schema, command help or rendered demo text uses the word "memory"."""

from __future__ import annotations

import ast
import json
import re
import subprocess

import click
from ouro.cli.app import cli

from ouro.resources import templates_dir
from ouro.tools import TOOLS
from tests.conftest import REPO

WORD = re.compile(r"memor(y|ies)", re.IGNORECASE)
# SQLite's in-process database name is an identifier, not a description of the record.
ALLOWED_LITERALS = {":memory:"}


def test_templates_are_clean() -> None:
    for path in templates_dir().rglob("*"):
        if path.is_file():
            assert not WORD.search(path.read_text(encoding="utf-8", errors="replace")), path
            assert not WORD.search(path.as_posix()), path


def test_tool_names_descriptions_and_schemas_are_clean() -> None:
    for tool in TOOLS:
        assert not WORD.search(tool.name), tool.name
        assert not WORD.search(tool.description), tool.name
        schema = json.dumps(tool.model().model_json_schema())
        assert not WORD.search(schema), tool.name


def _walk(command: click.Command, ctx: click.Context, path: str = "ouro") -> list[tuple[str, str]]:
    texts = [(path, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name}"
            sub_ctx = click.Context(sub, info_name=name, parent=ctx)
            texts.extend(_walk(sub, sub_ctx, f"{path} {name}"))
    return texts


def test_every_command_help_is_clean() -> None:
    ctx = click.Context(cli, info_name="ouro")
    texts = _walk(cli, ctx)
    assert len(texts) > 3
    for path, text in texts:
        assert not WORD.search(text), path


def test_package_string_literals_are_clean() -> None:
    for path in (REPO / "ouro").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in ALLOWED_LITERALS:
                    continue
                assert not WORD.search(node.value), f"{path}:{node.lineno}"


def test_demo_output_is_clean(demo_output: subprocess.CompletedProcess[str]) -> None:
    assert not WORD.search(demo_output.stdout + demo_output.stderr)
