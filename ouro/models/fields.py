"""Reading one record's JSON object field by field, without a schema library.

The readers of small Arc records (claims, obligations) take the exact on-disk
form: camelCase keys, exact JSON types, known literals. ``Fields`` does the
reads; every refusal is an ``InvalidInput`` that names ``<where>.<key>`` and
what is wrong, so a hand-edited file is reported with the field to fix.
"""

from __future__ import annotations

from typing import Any

from ouro.errors import InvalidInput

#: a required field: ``default=REQUIRED``
REQUIRED: Any = object()
_INT_LIMIT = 2**63


class Fields:
    """Typed reads from one JSON object; ``None`` as a default makes a field optional."""

    __slots__ = ("data", "hint", "where")

    def __init__(self, data: Any, where: str, known: frozenset[str], *, hint: str) -> None:
        self.where = where
        self.hint = hint
        if type(data) is not dict:
            raise InvalidInput(f"{where}: must be a JSON object", hint=hint)
        unknown = sorted(set(data) - known)
        if unknown:
            raise self.bad(unknown[0], f"unknown field (the fields are {', '.join(sorted(known))})")
        self.data: dict[str, Any] = data

    def bad(self, key: str, what: str) -> InvalidInput:
        return InvalidInput(f"{self.where}.{key}: {what}", hint=self.hint)

    def _get(self, key: str, default: Any) -> Any:
        value = self.data.get(key, default)
        if value is REQUIRED:
            raise self.bad(key, "required")
        return value

    def text(self, key: str, default: Any = REQUIRED, *, nonempty: bool = False) -> Any:
        value = self._get(key, default)
        if value is None and default is None:
            return None
        if type(value) is not str:
            raise self.bad(key, "must be a string")
        if nonempty and not value:
            raise self.bad(key, "must not be empty")
        return value

    def integer(self, key: str, default: Any = REQUIRED) -> Any:
        value = self._get(key, default)
        if value is None and default is None:
            return None
        if type(value) is not int or not -_INT_LIMIT <= value < _INT_LIMIT:
            raise self.bad(key, "must be an integer")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: Any = REQUIRED) -> Any:
        value = self.text(key, default)
        if value is not None and value not in choices:
            raise self.bad(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def items(self, key: str) -> list[Any]:
        value = self.data.get(key, [])
        if type(value) is not list:
            raise self.bad(key, "must be a list")
        return value
