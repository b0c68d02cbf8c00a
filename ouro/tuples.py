"""``NamedTuple`` without ``typing``: the same class syntax, the same classes.

``import typing`` costs a cold process ~15M instructions (about 4 ms), more than
the rest of a host hook's imports of ouro's own records. ``typing.NamedTuple``
builds a ``collections.namedtuple`` from the class body's annotated names
(their defaults from the values given) and copies the body's methods onto it;
this does the same without ``typing``, so the records on the CLI and hook paths
are the tuples they were. A module writes::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple  # what type checkers read
    else:
        from ouro.tuples import NamedTuple

Only names are read from the annotations (``from __future__ import
annotations`` leaves them as text; they are never evaluated).
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: class-body names never copied onto the tuple (as ``typing``'s ``_prohibited``)
_SKIP = frozenset(
    {"__annotations__", "__dict__", "__module__", "__qualname__", "__slots__", "__weakref__"}
)


class _Maker(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], body: dict[str, Any]) -> Any:
        if not bases:  # ``NamedTuple`` itself
            return super().__new__(mcls, name, bases, body)
        fields = list(body.get("__annotations__", {}))
        defaults = [body[field] for field in fields if field in body]
        if defaults and any(field not in body for field in fields[len(fields) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        made = namedtuple(name, fields, defaults=defaults, module=body.get("__module__"))  # type: ignore[misc]
        made.__qualname__ = body.get("__qualname__", name)
        for key, value in body.items():
            if key not in _SKIP and key not in fields:
                setattr(made, key, value)
        made.__annotations__ = dict(body.get("__annotations__", {}))
        return made


class NamedTuple(metaclass=_Maker):
    """Subclass it as ``typing.NamedTuple``: the subclass is a ``collections.namedtuple``."""
