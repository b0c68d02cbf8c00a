"""``ouro sentinel status``: the latest verdict, its anchor and what to repair.

Pure: it reads ``latest.json`` and ``latest-ready.json`` and stats the event
log; it writes nothing (not even an mtime) and never refreshes. A missing
receipt reads as ``unknown``; a malformed one is reported as degraded with its
locator and left untouched. The recovery anchor is checked for meaning, not
taken from ``latest.json`` on trust (``ouro.sentinel.anchor``): a latest-ready
receipt that is not ready in every respect, or whose resume snapshot cannot
continue, is reported unusable with the reason and never offered.
"""

from __future__ import annotations

import os
from typing import Any

from ouro.arc.paths import events_dir
from ouro.bundle import Bundle
from ouro.models.clock import parse_time
from ouro.sentinel import paths
from ouro.sentinel.anchor import check_ready, unusable_reason, unusable_text
from ouro.sentinel.order import read_receipt
from ouro.store.guard import Inside


def _brief(receipt: dict[str, Any], locator: str) -> dict[str, Any]:
    gauntlet = receipt.get("gauntlet") or {}
    return {
        "id": receipt["id"],
        "generatedAt": receipt["generatedAt"],
        "trigger": receipt.get("trigger"),
        "verdict": receipt["verdict"],
        "score": gauntlet.get("score"),
        "locator": locator,
    }


def _newest_event_mtime(bundle: Bundle) -> float | None:
    folder = events_dir(bundle)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
    except OSError:
        return None
    times = []
    for name in names:
        try:
            times.append(os.stat(folder / name).st_mtime)
        except OSError:
            continue
    return max(times) if times else None


def sentinel_status(bundle: Bundle) -> dict[str, Any]:
    inside = Inside(bundle.root)  # a derived file behind a link leading outside: not read
    latest = read_receipt(paths.latest_path(bundle), inside)
    checked = check_ready(read_receipt(paths.latest_ready_path(bundle), inside))
    ready = checked.read
    issues: list[dict[str, str]] = []
    for read, locator in ((latest, paths.LATEST), (ready, paths.LATEST_READY)):
        if read.problem:
            issues.append(
                {
                    "locator": locator,
                    "problem": f"{read.problem}; left untouched",
                    "hint": f"move it aside (mv {locator} {locator}.bad) and run "
                    "'ouro sentinel refresh'",
                }
            )
    brief_ready = None
    if ready.receipt is not None:
        brief_ready = {
            **_brief(ready.receipt, paths.LATEST_READY),
            "usable": checked.unusable is None,
            "unusable": checked.unusable,
        }
        if checked.unusable:
            issues.append(
                {
                    "locator": paths.LATEST_READY,
                    "problem": unusable_text(ready.receipt, checked.unusable),
                    "hint": "resume from Arc and Desk; the next receipt that is ready in every "
                    "respect replaces it ('ouro sentinel refresh')",
                }
            )
    out: dict[str, Any] = {
        "state": "degraded" if issues else "ok",
        "verdict": "unknown",
        "latest": None,
        "latestReady": brief_ready,
        "recoveryAnchor": None,
        "failing": [],
        "signals": [],
        "drills": [],
        "behindEvents": None,
        "issues": issues,
    }
    receipt = latest.receipt
    if receipt is None:
        out["state"] = "degraded" if issues else "missing"
        out["hint"] = "run 'ouro sentinel refresh' to write the first receipt"
        return out
    out["verdict"] = receipt["verdict"]
    out["latest"] = _brief(receipt, paths.LATEST)
    out["recoveryAnchor"] = _checked_anchor(receipt, checked.usable, checked.unusable)
    gauntlet = receipt.get("gauntlet") or {}
    out["failing"] = [
        {
            "check": c.get("id"),
            "status": c.get("status"),
            "detail": c.get("detail"),
            "repair": c.get("repair"),
        }
        for c in gauntlet.get("checks", [])
        if c.get("status") in ("warn", "fail")
    ]
    out["signals"] = [
        s
        for s in receipt.get("signals", [])
        if s.get("kind") != "gauntlet" and s.get("verdictImpact") != "none"
    ]
    out["drills"] = [
        {k: d.get(k) for k in ("name", "status", "detail", "lookAt")}
        for d in receipt.get("drills", [])
    ]
    newest = _newest_event_mtime(bundle)
    if newest is not None:
        try:
            out["behindEvents"] = newest > parse_time(receipt["generatedAt"]).timestamp()
        except ValueError:
            out["behindEvents"] = None
    if out["behindEvents"]:
        out["hint"] = "events were recorded after this receipt: run 'ouro sentinel refresh'"
    elif out["failing"] or out["signals"]:
        out["hint"] = "repair the items above, then run 'ouro sentinel refresh'"
    else:
        out["hint"] = None
    return out


def _checked_anchor(
    receipt: dict[str, Any], ready: dict[str, Any] | None, unusable: str | None
) -> dict[str, Any] | None:
    """``latest.json``'s anchor, unless what it names is not usable now."""
    anchor = receipt.get("recoveryAnchor")
    if not isinstance(anchor, dict):
        return None
    use = anchor.get("use")
    reason = None
    if use == "self":
        reason = unusable_reason(receipt)
        if reason:
            reason = f"the latest receipt names itself, but {reason}"
    elif use == "latest-ready":
        if ready is None:
            reason = (
                f"latest-ready is unusable ({unusable})" if unusable else "latest-ready is missing"
            )
        else:
            # the anchor is the latest-ready that is there now (a newer one may have come)
            return {**anchor, "receiptId": ready["id"], "generatedAt": ready["generatedAt"]}
    if reason is None:
        return anchor
    return {
        "use": "none",
        "receiptId": None,
        "locator": None,
        "reason": f"{reason}, so no receipt is offered as the recovery anchor: resume from Arc "
        "and Desk, then 'ouro sentinel refresh'",
        "recorded": anchor,
    }
