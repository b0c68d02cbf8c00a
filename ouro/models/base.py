"""Base model for records on disk.

Fields are snake_case in Python and camelCase in files. Every record carries
``schemaVersion``; unknown fields are refused on write so typos fail loudly.
"""

from __future__ import annotations

from typing import Any, Self

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from ouro.errors import InvalidInput


class Record(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=True,
    )

    schema_version: int = 1

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data

    def to_bytes(self) -> bytes:
        return orjson.dumps(self.to_json())

    @classmethod
    def from_json(cls, data: Any, *, source: str = "input") -> Self:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidInput(
                describe_validation(exc, source), hint="fix the named field"
            ) from None


def describe_validation(exc: ValidationError, source: str) -> str:
    """One line per problem: ``source: field.path: message``."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(record)"
        lines.append(f"{source}: {where}: {err['msg']}")
    return "; ".join(lines)


def validate_input(model: type[BaseModel], data: Any, *, source: str, hint: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation(exc, source), hint=hint) from None
