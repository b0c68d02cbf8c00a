"""Whether a receipt may be the recovery anchor, checked for meaning on every read.

``latest-ready.json`` is the last-known-good recovery anchor, but a file is
not trusted for its shape: a receipt that is not ready in every respect, or
whose resume snapshot cannot continue (no current ask, no next safe action,
can-continue false), is *unusable* and is never offered as the anchor — by a
refresh (``ouro.sentinel.receipts``), by ``sentinel status``, or by the packet
(``ouro.sentinel.orientation``), which every hook injects. The reasons say
which respect failed, so a hand-edited or damaged file is named, not obeyed.

Pure: reads nothing but the receipt dict it is given (``read_anchor`` reads
``latest-ready.json`` once, with ``ouro.store.jsonio``: the packet pays for no
orjson or dataclasses here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ouro.bundle import Bundle
from ouro.sentinel import paths

if TYPE_CHECKING:
    from ouro.sentinel.order import ReceiptRead


def ready_problems(receipt: dict[str, Any]) -> list[str]:
    """Every respect in which ``receipt`` is not ready (empty: it may anchor)."""
    problems = []
    if receipt.get("verdict") != "ready":
        problems.append(f"its verdict is {receipt.get('verdict')!r}")
    if receipt.get("ready", True) is not True:
        problems.append("it is marked not ready")
    gauntlet = receipt.get("gauntlet")
    verdict = gauntlet.get("verdict") if isinstance(gauntlet, dict) else None
    if verdict != "ready":
        problems.append(f"its gauntlet verdict is {verdict!r}")
    signals = receipt.get("signals", [])
    if not isinstance(signals, list):
        problems.append("it has no signal list")
        signals = []
    for s in signals:
        impact = s.get("verdictImpact") if isinstance(s, dict) else None
        if impact != "none":
            what = f"{s.get('kind')}:{s.get('source')}" if isinstance(s, dict) else repr(s)
            problems.append(f"signal {what} has impact {impact!r}")
    resume = receipt.get("resume")
    if not isinstance(resume, dict):
        return [*problems, "it has no resume snapshot"]
    if resume.get("canContinue") is not True:
        problems.append("its resume snapshot cannot continue (canContinue is not true)")
    for key, what in (("currentAsk", "current ask"), ("nextSafeAction", "next safe action")):
        value = resume.get(key)
        if not (isinstance(value, dict) and isinstance(value.get("value"), str) and value["value"]):
            problems.append(f"its resume snapshot has no {what}")
    return problems


def unusable_reason(receipt: dict[str, Any]) -> str | None:
    """Why ``receipt`` cannot be the recovery anchor, or None when it can."""
    problems = ready_problems(receipt)
    return "; ".join(problems) if problems else None


class AnchorRead(NamedTuple):
    """``latest-ready.json`` as read, and why it is unusable (None: usable or absent)."""

    read: ReceiptRead
    unusable: str | None

    @property
    def usable(self) -> dict[str, Any] | None:
        """The receipt, only when it may be offered as the recovery anchor."""
        return self.read.receipt if self.unusable is None else None


def check_ready(read: ReceiptRead) -> AnchorRead:
    return AnchorRead(read, None if read.receipt is None else unusable_reason(read.receipt))


def read_anchor(bundle: Bundle) -> tuple[dict[str, Any] | None, str | None]:
    """(latest-ready as read, why it is unusable); (None, None) when it is missing or
    is not a receipt at all (``sentinel status`` and a refresh report that);
    (None, why) when it resolves outside the bundle through a symlink or cannot
    be read (a FIFO, a file past ``DOC_LIMIT``: never read)."""
    from ouro.store import jsonio
    from ouro.store.bounded import file_bytes
    from ouro.store.guard import Inside, outside

    path = paths.latest_ready_path(bundle)
    if not Inside(bundle.root).path(path):
        return None, outside(paths.LATEST_READY)
    try:
        data = jsonio.loads(file_bytes(path))
    except FileNotFoundError:
        return None, None
    except OSError as exc:  # a FIFO, a file past DOC_LIMIT: never read, and said so
        return None, f"{paths.LATEST_READY}: cannot read ({exc.strerror or exc})"
    except ValueError:
        return None, None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None, None
    return data, unusable_reason(data)


def unusable_text(receipt: dict[str, Any], reason: str) -> str:
    return f"latest-ready {receipt.get('id')} is unusable as the recovery anchor ({reason})"
