"""Docs stay true: the CLI reference is generated from the code, and every
command and agent tool appears in it."""

from __future__ import annotations

from ouro.cli.reference import render_reference
from ouro.registry import TOOLS
from tests.conftest import REPO


def test_cli_reference_matches_the_code() -> None:
    current = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == render_reference(), (
        "docs/cli.md is out of date: run 'python -m ouro.cli.reference > docs/cli.md'"
    )


def test_every_tool_is_in_the_reference() -> None:
    text = render_reference()
    for tool in TOOLS:
        assert f"*agent tool* `{tool.name}`" in text, tool.name
        assert f"## `ouro {' '.join(tool.path)}`" in text, tool.name


def test_readme_starts_with_the_two_commands() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    block = lines[lines.index("```sh") + 1 : lines.index("```")]
    assert block == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/ouro demo",
        "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/python -m pytest",
    ]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert block[1] in ci


def test_docs_links_resolve() -> None:
    import re

    for doc in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"
