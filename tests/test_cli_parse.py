"""The one parser builder (``ouro.cli.parse``): a command line from a signature."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Annotated, Any

import pytest

from ouro.cli.parse import UsageError, build, flags_of, parse
from ouro.spec import P, spec_of


def sample(
    name: Annotated[str, P("a name")],
    paths: Annotated[list[str], P("paths")] = [],  # noqa: B006
    *,
    tags: Annotated[list[str], P("a tag")] = [],  # noqa: B006
    limit: Annotated[int | None, P("at most", min=1)] = None,
    force: Annotated[bool, P("force it")] = False,
    index: Annotated[bool, P("keep the index")] = True,
    body: Annotated[str | None, P("a body", file=True, limit=20)] = None,
    global_: Annotated[bool, P("everywhere")] = False,
) -> dict[str, Any]:
    """A sample command."""
    return {}


def _parse(*words: str) -> dict[str, Any]:
    parser, spec = build("ouro sample", sample, description="A sample.", path=("sample",))
    return parse(parser, spec, list(words))


def test_the_rule_names_every_option() -> None:
    flags = [f for p in spec_of(sample) for f in flags_of(p)]
    assert flags == [
        "--tag",
        "--limit",
        "--force",
        "--no-index",
        "--body",
        "--body-file",
        "--global",
    ]


def test_only_what_is_given_is_passed_on_in_any_order() -> None:
    assert _parse("x") == {"name": "x"}
    got = _parse("--tag", "a", "x", "p1", "--limit", "3", "p2", "--tag=b", "--force", "--no-index")
    assert got == {
        "name": "x",
        "paths": ["p1", "p2"],
        "tags": ["a", "b"],
        "limit": 3,
        "force": True,
        "index": False,
    }
    assert _parse("--global", "x") == {"name": "x", "global_": True}
    assert _parse("--", "-x") == {"name": "-x"}


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ((), "required: NAME"),
        (("x", "--limit", "many"), "'many' is not a whole number"),
        (("x", "--bogus"), "Unrecognized arguments: --bogus"),
        (("x", "--forc"), "Unrecognized arguments: --forc"),  # no abbreviations
        (("x", "--force=yes"), "ignored explicit argument"),
    ],
)
def test_a_bad_line_is_a_usage_error_naming_what(words: tuple[str, ...], said: str) -> None:
    with pytest.raises(UsageError) as caught:
        _parse(*words)
    assert said in caught.value.message
    assert caught.value.usage and caught.value.usage.startswith("Usage: ouro sample")


def test_a_file_option_is_read_bounded_and_dash_is_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = tmp_path / "short.txt"
    short.write_text("the body\n")
    assert _parse("x", "--body-file", str(short))["body"] == "the body\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin"))
    assert _parse("x", "--body-file", "-")["body"] == "from stdin"
    long = tmp_path / "long.txt"
    long.write_text("x" * 21)
    with pytest.raises(Exception, match="more than the limit of 20"):
        _parse("x", "--body-file", str(long))
    with pytest.raises(UsageError, match="Give --body or --body-file, not both"):
        _parse("x", "--body", "a", "--body-file", str(short))


def test_help_comes_from_the_docstring_and_the_p_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser, _spec = build("ouro sample", sample, description="A sample command.", path=("x",))
    text = parser.format_help()
    assert "A sample command." in text and "keep the index" in text and "--no-index" in text
    assert "(or --body-file PATH; '-' reads stdin)" in text
    assert "Global options (anywhere on the line):" in text


@pytest.mark.parametrize(
    "words",
    [[], ["UserPromptSubmit"], ["a", "b"], ["x y", "é"]],
    ids=repr,
)
def test_a_line_read_without_a_parser_is_what_the_parser_reads(words: list[str]) -> None:
    """``plain``: whenever it answers without a parser, it answers what argparse
    does, for every command there is."""
    from ouro.cli import tree
    from ouro.cli.parse import plain

    answered = 0
    for entry in tree.entries().values():
        fn = entry.function()
        spec = spec_of(fn)
        found = plain(spec, list(words))
        if found is None:
            continue
        answered += 1
        parser, spec = build("ouro x", fn, description="", path=entry.path)
        assert parse(parser, spec, list(words)) == found, entry.path
    assert answered  # every line above has commands it fits


def test_a_line_the_parser_must_read_is_left_to_it() -> None:
    from ouro.cli.parse import plain

    spec = spec_of(sample)
    assert plain(spec, ["x"]) is None  # paths is an optional list: argparse decides
    assert plain(spec, ["--force"]) is None
    assert plain(spec, ["-x"]) is None
