"""Publish the habit run receipt's JSON Schema.

``python -m ouro.habits.schema docs/schemas/habit-run-receipt.schema.json``
regenerates the published file from ``HabitRunReceipt``; without a path it
prints the schema. A test fails when the published file drifts from the model.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ouro.habits.receipt import receipt_schema
from ouro.store.atomic import atomic_write_bytes, dump_json

PUBLISHED = "docs/schemas/habit-run-receipt.schema.json"


def schema_bytes() -> bytes:
    return dump_json(receipt_schema())


def main(argv: list[str]) -> int:
    if argv:
        atomic_write_bytes(Path(argv[0]), schema_bytes())
    else:
        sys.stdout.write(schema_bytes().decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
