"""ouro.tuples.NamedTuple: the class syntax of typing.NamedTuple, without typing."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from ouro.tuples import NamedTuple


class Light(NamedTuple):
    """A record."""

    name: str
    size: int = 0

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}"


class Heavy(typing.NamedTuple):
    name: str
    size: int = 0


def test_it_builds_the_tuple_typing_builds() -> None:
    light, heavy = Light("a"), Heavy("a")
    assert light == heavy == ("a", 0)
    assert Light._fields == Heavy._fields and Light._field_defaults == Heavy._field_defaults
    assert light._replace(size=2) == ("a", 2) and light.label == "a:0"
    assert repr(Light("b", 1)) == "Light(name='b', size=1)"
    assert Light.__doc__ == "A record." and Light.__module__ == __name__
    assert Light.__qualname__ == "Light" and list(Light.__annotations__) == ["name", "size"]
    with pytest.raises(AttributeError):
        light.name = "c"  # type: ignore[misc]


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        class Bad(NamedTuple):
            a: int = 0
            b: int  # type: ignore[misc]


def test_it_imports_no_typing() -> None:
    code = "import sys, ouro.tuples, ouro.spec; print('typing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
