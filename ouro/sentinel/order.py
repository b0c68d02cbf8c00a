"""Receipt order and tolerant, pure reads of receipt files.

Receipts are ordered by ``generatedAt`` (UTC ISO-8601 with milliseconds and a
``Z``, so string order is time order), then by ``id`` to break ties.
A receipt file that cannot be parsed is reported, never rewritten or removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.models.ids import is_id
from ouro.store import jsonio
from ouro.store.bounded import file_bytes
from ouro.store.guard import Inside

OrderKey = tuple[str, str]


def order_key(receipt: dict[str, Any]) -> OrderKey:
    return (str(receipt.get("generatedAt", "")), str(receipt.get("id", "")))


@dataclass(frozen=True)
class ReceiptRead:
    receipt: dict[str, Any] | None
    missing: bool = False
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.receipt is not None


#: the problem of a receipt file behind a symlink leading outside the bundle
OUTSIDE = "resolves outside the bundle through a symlink; it was not read"


def read_receipt(path: Path, inside: Inside | None = None) -> ReceiptRead:
    """Read one receipt file. Missing → ``missing``; unusable → ``problem``; one
    that ``inside`` (the bundle's read rule) says resolves outside is never opened."""
    if inside is not None and not inside.path(path):
        return ReceiptRead(None, problem=OUTSIDE)
    try:
        data = jsonio.loads(file_bytes(path))  # a FIFO, a huge file: a problem
    except FileNotFoundError:
        return ReceiptRead(None, missing=True)
    except OSError as exc:
        return ReceiptRead(None, problem=f"cannot read ({exc.strerror or exc})")
    except jsonio.JSONDecodeError as exc:
        return ReceiptRead(None, problem=f"not valid JSON ({exc})")
    if not isinstance(data, dict):
        return ReceiptRead(None, problem="not a JSON object")
    rid, when, verdict = data.get("id"), data.get("generatedAt"), data.get("verdict")
    if not isinstance(rid, str) or not is_id(rid, "sr"):
        return ReceiptRead(None, problem="has no valid receipt id ('sr-…')")
    if not isinstance(when, str) or not when.endswith("Z"):
        return ReceiptRead(None, problem="has no valid generatedAt time")
    if verdict not in ("ready", "watch", "blocked"):
        return ReceiptRead(None, problem=f"has an unknown verdict {verdict!r}")
    return ReceiptRead(data)
