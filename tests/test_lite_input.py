"""Plain tool input validated without pydantic (``ouro.models.lite``) agrees with
the pydantic models it is generated from."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ouro.cli.gen import tool_command
from pydantic import ValidationError

from ouro import tools
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models import lite
from tests.conftest import REPO


def test_the_generated_specs_are_current() -> None:
    path = REPO / "ouro" / "models" / "lite_specs.py"
    assert path.read_text() == lite.generate(), "run: python -m ouro.models.lite"


def test_the_hot_write_and_info_are_plain() -> None:
    assert lite.fields("diary_write") is not None
    assert lite.fields("info") == ()


@pytest.mark.parametrize("name", sorted(lite.specs()))
def test_the_cli_command_is_the_same_from_the_spec_and_the_model(name: str) -> None:
    tool = tools.get(name)
    from_spec = tool_command(tool).to_info_dict(_ctx())
    from_model = tool_command(tool, lite=False).to_info_dict(_ctx())
    assert from_spec == from_model


def _ctx() -> Any:
    import click

    return click.Context(click.Command("x"))


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=4),
    st.lists(st.text(max_size=3), max_size=3),
    st.lists(st.one_of(st.integers(0, 2), st.none(), st.text(max_size=2)), max_size=2),
    st.sampled_from(["lexical", "active", "done", "f-01abc", "1", "true"]),
)


@pytest.mark.parametrize("name", sorted(lite.specs()))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_lite_accepts_only_what_pydantic_accepts_with_the_same_values(
    name: str, data: st.DataObject
) -> None:
    tool = tools.get(name)
    model = tool.model()
    names = [*model.model_fields, "extra_field"]
    keys = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    arguments = {key: data.draw(_values) for key in keys}
    fast = lite.validate(name, arguments)
    if fast is None:
        return  # pydantic decides (and words any error)
    try:
        validated = model.model_validate(arguments)
    except ValidationError as exc:  # pragma: no cover - the failure this test looks for
        raise AssertionError(f"lite accepted {arguments!r}; pydantic refused: {exc}") from None
    assert vars(fast) == dict(validated)


def test_plain_input_takes_the_lite_path_and_the_rest_pydantic(bundle: Bundle) -> None:
    good = {"text": "the staging host is web-3", "about": ["staging"]}
    assert lite.validate("diary_write", good) is not None
    for bad in ({"text": 3}, {"about": ["x"]}, {"text": "x", "colour": "red"}):
        assert lite.validate("diary_write", bad) is None
        with pytest.raises(InvalidInput) as err:
            tools.invoke("diary_write", bundle, bad)
        assert err.value.message.startswith("diary_write: ")
    result = tools.invoke("diary_write", bundle, good)
    assert result["fact"]["about"] == ["staging"]
