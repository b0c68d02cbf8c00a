"""``Plain``: value records without ``dataclasses``.

``import dataclasses`` pulls in ``inspect``, ``ast``, ``dis`` and ``tokenize``:
about 40M instructions, 12-15 ms, more than a one-shot ``ouro diary write``
spends on its work. The classes on the write and index paths are small records,
so they are written out: ``__slots__`` name the fields, ``__init__`` sets them,
and this base gives equality and ``repr`` by those fields, as a dataclass would.
``Frozen`` is the immutable, hashable kind.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Plain:
    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    # (``__eq__`` without ``__hash__``: unhashable, as a mutable dataclass is)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Frozen(Plain):
    """A ``Plain`` that cannot change after ``__init__`` (which sets its fields
    with ``_set``), hashable by value, as a frozen dataclass."""

    __slots__: tuple[str, ...] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())
