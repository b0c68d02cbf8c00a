"""ouro.spec: inputs declared once as a signature; validation, limits and the schema."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Any

import pytest

from ouro.errors import InvalidInput
from ouro.spec import MISSING, P, description, json_schema, spec_of, validate, verb


def _kinds() -> tuple[str, ...]:
    return ("low", "high")


class Sample:
    @verb
    def write(
        self,
        text: Annotated[str, P("the fact", limit=40, nonblank=True)],
        topic: Annotated[str | None, P("optional positional")] = None,
        *,
        about: Annotated[list[str], P("an entity", limit=10, max=3)] = [],
        level: Annotated[str, P("how much", choices=_kinds)] = "low",
        count: Annotated[int, P("how many", min=1, max=5)] = 2,
        ratio: Annotated[float, P("a ratio", min=0.5)] = 1.0,
        force: Annotated[bool, P("write anyway")] = False,
        color: Annotated[bool, P("use colour")] = True,
        body: Annotated[str | None, P("details", limit=100, file=True)] = None,
        signals: Annotated[list[str | dict[str, Any]], P("outside signals")] = [],
    ) -> dict[str, Any]:
        """Write one thing.

        It is a sample."""
        return {
            "text": text,
            "topic": topic,
            "about": about,
            "level": level,
            "count": count,
            "ratio": ratio,
            "force": force,
            "color": color,
            "body": body,
            "signals": signals,
        }


def test_spec_reads_the_signature() -> None:
    spec = {p.name: p for p in spec_of(Sample.write)}
    assert list(spec) == [
        "text",
        "topic",
        "about",
        "level",
        "count",
        "ratio",
        "force",
        "color",
        "body",
        "signals",
    ]
    text, topic, about = spec["text"], spec["topic"], spec["about"]
    assert (text.required, text.positional, text.kind, text.default) == (True, True, "str", MISSING)
    assert (topic.required, topic.positional, topic.optional) == (False, True, True)
    assert (about.positional, about.kind, about.item_kind, about.flag) == (
        False,
        "list",
        "str",
        "--about",
    )
    assert spec["force"].flag == "--force"
    assert spec["color"].flag == "--no-color"
    assert spec["signals"].flag == "--signal"
    assert spec["signals"].item_kind == "json"
    assert spec["body"].file_flag == "--body-file"
    assert spec["text"].file_flag is None
    assert spec["level"].choices() == ("low", "high")
    # a bound method reads the same spec
    assert spec_of(Sample().write) == spec_of(Sample.write)


def test_description_is_the_docstring() -> None:
    assert description(Sample.write) == "Write one thing.\n\nIt is a sample."


def test_defaults_filled_and_lists_copied() -> None:
    out = validate(Sample.write, {"text": "hello"})
    assert out["about"] == [] and out["count"] == 2 and out["topic"] is None
    out["about"].append("x")
    assert validate(Sample.write, {"text": "hello"})["about"] == []


def _refused(args: dict[str, Any]) -> str:
    with pytest.raises(InvalidInput) as caught:
        validate(Sample.write, args)
    return caught.value.message


def test_errors_name_the_field() -> None:
    assert _refused({}).startswith("text: required")
    assert _refused({"text": "x", "nope": 1}).startswith("nope: unknown field")
    assert _refused({"text": 3}).startswith("text: must be text")
    assert _refused({"text": None}).startswith("text: must not be null")
    assert _refused({"text": "x", "about": "one"}).startswith("about: must be a list")
    assert _refused({"text": "x", "about": ["ok", 5]}).startswith("about[1]: must be text")


def test_limits() -> None:
    assert "text: 41 characters, more than the limit of 40" in _refused({"text": "a" * 41})
    validate(Sample.write, {"text": "a" * 40})
    assert _refused({"text": "x", "about": ["a" * 11]}).startswith("about[0]: 11 characters")
    assert _refused({"text": "x", "about": ["a", "b", "c", "d"]}).startswith(
        "about: 4 items, more than the limit of 3"
    )
    assert "NUL" in _refused({"text": "a\x00b"})
    assert "UTF-8" in _refused({"text": "a\udcffb"})
    # the default limit of any other string is ouro.edge.SHORT
    from ouro.edge import SHORT

    assert _refused({"text": "x", "topic": "t" * (SHORT + 1)}).startswith("topic:")


def test_nonblank() -> None:
    for blank in ("", "   ", "\u200b\n"):
        assert _refused({"text": blank}) == "text: must not be empty or only whitespace"
    # a field without nonblank takes an empty string
    assert validate(Sample.write, {"text": "x", "topic": ""})["topic"] == ""


def test_choices() -> None:
    assert _refused({"text": "x", "level": "mid"}).startswith("level: must be one of low, high")
    assert validate(Sample.write, {"text": "x", "level": "high"})["level"] == "high"


def test_numbers_bounds_and_lossless_coercion() -> None:
    assert _refused({"text": "x", "count": 0}) == "count: must be at least 1 (got 0)"
    assert _refused({"text": "x", "count": 6}) == "count: must be at most 5 (got 6)"
    assert _refused({"text": "x", "count": 2.5}).startswith("count: must be an integer")
    assert _refused({"text": "x", "count": True}).startswith(
        "count: must be an integer, not a bool"
    )
    assert _refused({"text": "x", "count": "two"}).startswith("count: must be an integer")
    assert validate(Sample.write, {"text": "x", "count": 3.0})["count"] == 3
    assert validate(Sample.write, {"text": "x", "count": "4"})["count"] == 4
    got = validate(Sample.write, {"text": "x", "ratio": 2})["ratio"]
    assert got == 2.0 and isinstance(got, float)
    assert _refused({"text": "x", "ratio": 0.1}).startswith("ratio: must be at least 0.5")
    assert _refused({"text": "x", "ratio": float("nan")}).startswith("ratio: must be a finite")


def test_bool_and_list_rules() -> None:
    assert _refused({"text": "x", "force": 1}).startswith("force: must be true or false")
    assert _refused({"text": "x", "force": "yes"}).startswith("force: must be true or false")
    assert validate(Sample.write, {"text": "x", "about": ("a", "b")})["about"] == ["a", "b"]
    ok = validate(Sample.write, {"text": "x", "signals": ['{"kind": "sense"}', {"kind": "sense"}]})
    assert ok["signals"][1] == {"kind": "sense"}
    assert _refused({"text": "x", "signals": [3]}).startswith("signals[0]: must be a JSON object")


def test_file_option_is_bounded_by_the_limit() -> None:
    assert _refused({"text": "x", "body": "b" * 101}).startswith("body: 101 characters")


def test_verb_validates_library_calls_and_collects_warnings() -> None:
    from ouro.notices import warn

    class Warns:
        @verb
        def run(self, text: Annotated[str, P("t", nonblank=True)]) -> dict[str, Any]:
            """Run."""
            warn("index could not be refreshed")
            return {"ok": text}

    sample = Sample()
    assert sample.write("hi", about=["a"])["about"] == ["a"]
    assert sample.write("hi", "topic")["topic"] == "topic"
    with pytest.raises(InvalidInput, match="text: must not be empty"):
        sample.write("  ")
    with pytest.raises(InvalidInput, match="bogus: unknown field"):
        sample.write("hi", bogus=1)
    with pytest.raises(InvalidInput, match="positional"):
        sample.write("hi", "t", "extra")
    with pytest.raises(InvalidInput, match="text: given twice"):
        sample.write("hi", text="again")
    assert Warns().run("x") == {"ok": "x", "warnings": ["index could not be refreshed"]}
    assert "warnings" not in sample.write("hi")


def test_json_schema_shape() -> None:
    schema = json_schema(Sample.write)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["text"]
    props = schema["properties"]
    assert props["text"] == {
        "type": "string",
        "maxLength": 40,
        "minLength": 1,
        "description": "the fact",
    }
    assert props["topic"]["type"] == "string"  # optional: the plain type, omitted means null
    assert "default" not in props["topic"]
    assert props["about"] == {
        "type": "array",
        "items": {"type": "string", "maxLength": 10},
        "maxItems": 3,
        "description": "an entity",
        "default": [],
    }
    assert props["level"]["enum"] == ["low", "high"] and props["level"]["default"] == "low"
    assert props["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": "how many",
        "default": 2,
    }
    assert props["force"] == {"type": "boolean", "description": "write anyway", "default": False}
    assert props["signals"]["items"] == {"type": ["object", "string"]}
    # every schema is valid JSON Schema
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"text": "x", "about": ["a"]}, schema)


def test_unannotated_parameter_is_refused() -> None:
    def bad(self: object, text: str) -> dict[str, Any]:
        return {}

    with pytest.raises(TypeError, match="text is not Annotated"):
        spec_of(bad)


def test_spec_imports_cheaply() -> None:
    code = (
        "import sys, ouro.spec, ouro.registry; "
        "bad = [m for m in ('pydantic', 'ouro.api', 'ouro.bundle', 'ouro.tools') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_warnings_of_an_inner_verb_reach_the_outer_call_once() -> None:
    from ouro.notices import warn

    class Nested:
        @verb
        def inner(self) -> dict[str, Any]:
            """Inner."""
            warn("stale index")
            return {"warnings": ["stale index"]}

        @verb
        def outer(self) -> dict[str, Any]:
            """Outer."""
            self.inner()
            warn("second")
            return {}

    assert Nested().inner() == {"warnings": ["stale index"]}
    assert Nested().outer() == {"warnings": ["stale index", "second"]}
