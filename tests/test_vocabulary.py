"""The record is a record. No template, tool name, tool description, input
schema, command help or rendered demo text uses the word "memory"."""

from __future__ import annotations

import ast
import json
import re
import subprocess

from ouro.registry import TOOLS
from ouro.resources import templates_dir
from ouro.spec import json_schema
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
        assert not WORD.search(tool.description()), tool.name
        schema = json.dumps(json_schema(tool.method()))
        assert not WORD.search(schema), tool.name


def test_every_command_help_is_clean() -> None:
    from ouro.cli import tree
    from ouro.cli.help import group_help
    from ouro.cli.run import parser_of

    table = tree.entries()
    groups = {p[:n] for p in table for n in range(len(p))}
    texts = [(p, parser_of(e)[0].format_help()) for p, e in table.items()]
    texts += [(p, group_help(p)) for p in groups if p not in table]
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
