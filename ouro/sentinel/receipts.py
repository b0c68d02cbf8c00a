"""Refresh: run the gauntlet, gather signals, write one receipt.

The one writer of ``arc/flight-recorder/context-loss-sentinel/``. Under the
sentinel lock (``state/locks/sentinel.lock``) a refresh:

1. writes ``receipts/<id>.json`` (atomic replace);
2. appends one summary line to ``history/<generatedAt day>.jsonl`` (the
   append-only ledger, never pruned);
3. replaces ``latest.json`` only if the new receipt orders after it
   (``generatedAt``, then ``id``): refreshes finishing out of order never move
   ``latest`` backwards;
4. replaces ``latest-ready.json`` only if the receipt is ready in every
   respect (see ``qualifies_ready``) and orders after the current one, or the
   current one is unusable (``ouro.sentinel.anchor``: checked for meaning,
   never trusted for its shape);
5. prunes ``receipts/`` to the newest ``keep`` files, always keeping the ones
   ``latest`` and ``latest-ready`` name.

A malformed ``latest.json`` / ``latest-ready.json`` or receipt file is left
untouched and reported (a ``bundle`` signal and ``sentinelIssues``).

Recovery anchor: a ready receipt anchors to itself. If the gauntlet itself
fails, the anchor is the current blocker (an older ready receipt is not offered
as a way around it). Otherwise (only outside signals or warnings stand in the
way) the anchor is ``latest-ready`` — only if that receipt is still ready in
every respect when it is read; an unusable one is reported and never offered.

A refresh deliberately records no flight-recorder event: its output would feed
its own input (the checkpoint it grades), so a
blocked receipt could keep the next one blocked. The history ledger is the
audit trail.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models.clock import format_time, utc_now
from ouro.models.ids import new_id
from ouro.orient_types import Orient
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.sentinel import paths
from ouro.sentinel.anchor import AnchorRead, check_ready, ready_problems, unusable_text
from ouro.sentinel.gauntlet import LIST_CAP, Evaluation, capped, evaluate
from ouro.sentinel.order import order_key, read_receipt
from ouro.sentinel.signals import Signal, git_signals, impact_rank, worst_impact
from ouro.store.atomic import atomic_write_bytes, atomic_write_json, fsync_dir
from ouro.store.guard import Inside, names_inside, outside
from ouro.store.jsonl import append_jsonl

Trigger = Literal[
    "post_turn",
    "provider_failover",
    "daemon_startup",
    "daemon_health",
    "session_start",
    "manual_cli",
    "drill",
]
TRIGGERS: tuple[str, ...] = get_args(Trigger)
#: triggers whose refresh runs no readiness command (host hooks, drills): see ``refresh``
QUIET_TRIGGERS = ("session_start", "post_turn", "drill")
DEFAULT_KEEP = 50
SCHEMA_VERSION = 1
OUTSIDE_KINDS = ("provider_lane", "sense", "bundle")
_VERDICT_OF_IMPACT = {"none": "ready", "watch": "watch", "blocked": "blocked"}
_RANK = {"ready": 0, "watch": 1, "blocked": 2}


def worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def qualifies_ready(receipt: dict[str, Any]) -> bool:
    """Ready in every respect: may become the recovery anchor (``ouro.sentinel.anchor``)."""
    return not ready_problems(receipt)


def _resume_snapshot(resume: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "completeState",
        "canContinue",
        "missing",
        "currentAsk",
        "nextSafeAction",
        "blockedBecause",
        "blockers",
        "activeObligationIds",
        "returnObligationIds",
        "unverifiedClaimIds",
        "lastSafeCheckpoint",
        "lastEvent",
        "eventCount",
        "recorder",
    )
    snapshot = {k: resume.get(k) for k in keep}
    # Long id lists are capped (the checkpoint holds them all); the counts stay exact.
    for key in ("activeObligationIds", "returnObligationIds", "unverifiedClaimIds"):
        ids = snapshot.get(key)
        if isinstance(ids, list):
            snapshot[key] = ids[:LIST_CAP]
            snapshot[key.replace("Ids", "Count")] = len(ids)
    return snapshot


def _malformed_signal(locator: str, problem: str) -> Signal:
    return Signal(
        kind="bundle",
        source=locator,
        status="degraded",
        verdict_impact="watch",
        repair_actor="agent-runnable",
        repair_command=f"mv {locator} {locator}.bad  # from the bundle root; the next refresh rewrites it",
        detail=f"{locator} {problem}; left untouched",
    )


def _anchor(receipt: dict[str, Any], ready: bool, current_ready: AnchorRead) -> dict[str, Any]:
    rid = receipt["id"]
    gauntlet = receipt["gauntlet"]
    if ready:
        return {
            "use": "self",
            "receiptId": rid,
            "locator": paths.LATEST_READY,
            "reason": "this receipt is ready in every respect",
        }
    inner = [
        s["source"]
        for s in receipt["signals"]
        if s["kind"] == "gauntlet" and s["verdictImpact"] == "blocked"
    ]
    if gauntlet["verdict"] == "blocked" or inner:
        failing = ", ".join(x.removeprefix("gauntlet:") for x in inner)
        return {
            "use": "current-blocker",
            "receiptId": rid,
            "locator": paths.receipt_locator(rid),
            "reason": f"the gauntlet itself fails ({failing}); an older ready receipt is no "
            "safe way around it: repair these checks first",
        }
    outside = [
        f"{s['kind']}:{s['source']}={s['status']}"
        for s in receipt["signals"]
        if s["kind"] in OUTSIDE_KINDS and s["verdictImpact"] != "none"
    ]
    why = (
        "only outside signals stand in the way (" + ", ".join(outside) + ")"
        if outside
        else "the gauntlet warns or the resume cannot continue yet"
    )
    anchor = current_ready.usable
    if anchor is not None:
        return {
            "use": "latest-ready",
            "receiptId": anchor["id"],
            "generatedAt": anchor["generatedAt"],
            "locator": paths.LATEST_READY,
            "reason": f"{why}; resume from the last ready receipt",
        }
    earlier = current_ready.read.receipt
    if earlier is not None and current_ready.unusable:
        return {
            "use": "none",
            "receiptId": None,
            "locator": None,
            "reason": f"{why}, and {unusable_text(earlier, current_ready.unusable)}, so it is "
            "not offered: resume from Arc and Desk",
        }
    return {
        "use": "none",
        "receiptId": None,
        "locator": None,
        "reason": f"{why}, and no receipt has been ready yet",
    }


def _history_line(receipt: dict[str, Any]) -> dict[str, Any]:
    gauntlet = receipt["gauntlet"]
    line = {
        "id": receipt["id"],
        "generatedAt": receipt["generatedAt"],
        "trigger": receipt["trigger"],
        "verdict": receipt["verdict"],
        "ready": receipt["ready"],
        "gauntlet": {
            "verdict": gauntlet["verdict"],
            "score": gauntlet["score"],
            "notPassing": [
                f"{c['id']}:{c['status']}"
                for c in gauntlet["checks"]
                if c["status"] in ("warn", "fail")
            ],
        },
        "signals": [
            {k: s[k] for k in ("kind", "source", "status", "verdictImpact")}
            for s in receipt["signals"]
        ],
        "recoveryAnchor": {k: receipt["recoveryAnchor"].get(k) for k in ("use", "receiptId")},
        "locator": paths.receipt_locator(receipt["id"]),
    }
    if "drills" in receipt:
        line["drills"] = [{"name": d["name"], "status": d["status"]} for d in receipt["drills"]]
    return line


def drill_signal(result: dict[str, Any]) -> Signal:
    """A failed drill blocks like a failed check: a recovery guarantee did not hold."""
    look = "; ".join(result.get("lookAt") or [])
    return Signal(
        kind="gauntlet",
        source=f"drill:{result.get('name')}",
        status=str(result.get("status") or "fail"),
        verdict_impact="blocked",
        repair_actor="human-required",
        repair_command=f"ouro drill {result.get('name')}" + (f"  # look at {look}" if look else ""),
        detail=str(result.get("detail") or "")[:2000],
    )


def build_receipt(
    bundle: Bundle,
    evaluation: Evaluation,
    signals: Sequence[Signal],
    *,
    trigger: str,
    generated_at: str,
    drills: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The receipt before the lock is taken (anchor and issues are added under it)."""
    gauntlet = evaluation.gauntlet.to_json()
    drill_signals = [drill_signal(d) for d in drills or [] if d.get("status") != "pass"]
    outside = [*signals, *drill_signals]
    all_signals = [s.to_json() for s in (*outside, *evaluation.gauntlet.signals())]
    verdict = worse(gauntlet["verdict"], _VERDICT_OF_IMPACT[worst_impact(outside)])
    receipt: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "id": new_id("sr"),
        "generatedAt": generated_at,
        "trigger": trigger,
        "verdict": verdict,
        "gauntlet": gauntlet,
        "signals": all_signals,
        "sources": capped(evaluation.gauntlet.sources()),
        "sourceCount": len(evaluation.gauntlet.sources()),
        "resume": _resume_snapshot(evaluation.resume),
    }
    if drills is not None:
        receipt["drills"] = drills
    return receipt


def refresh(
    bundle: Bundle,
    *,
    orient: Orient,
    trigger: str = "manual_cli",
    signals: Sequence[Signal] = (),
    drills: list[dict[str, Any]] | None = None,
    keep: int = DEFAULT_KEEP,
    now: datetime | None = None,
    run_checks: bool | None = None,
    yes: bool = False,
) -> dict[str, Any]:
    """Write one receipt; returns it with what the refresh changed. ``orient``
    builds the packet the gauntlet grades (``ouro.orient.build_packet``).

    The provider lane (``ouro.sentinel.readiness``) is gathered first, outside
    the lock: ``run_checks`` runs the declared check commands (``yes`` confirms
    one not yet trusted here); without it the lane is the credential checks,
    the caller's signals and the last known state of each source. By default
    (None) the commands run unless the trigger is one of ``QUIET_TRIGGERS``:
    the hooks' refreshes and a drill's receipt must not wait on a provider."""
    from ouro.sentinel.readiness import gather

    if trigger not in TRIGGERS:
        raise InvalidInput(
            f"trigger: {trigger!r} is not one of {', '.join(TRIGGERS)}",
            hint="pass --trigger manual_cli (or post_turn, session_start, ...)",
        )
    if keep < 1:
        raise InvalidInput("keep: must be at least 1", hint="the default keeps 50 receipts")
    moment = now or utc_now()
    generated_at = format_time(moment)
    if run_checks is None:
        run_checks = trigger not in QUIET_TRIGGERS
    lane = gather(
        bundle, [s for s in signals if s.kind == "provider_lane"], now=moment,
        run_commands=run_checks, yes=yes,
    )  # fmt: skip
    evaluation = evaluate(bundle, orient)
    outside = [*(s for s in signals if s.kind != "provider_lane"), *lane, *git_signals(bundle)]
    receipt = build_receipt(
        bundle, evaluation, outside, trigger=trigger, generated_at=generated_at, drills=drills
    )
    literals = bundle_literals(bundle)
    with paths.sentinel_lock(bundle):
        return _commit(bundle, receipt, literals, keep)


def _commit(
    bundle: Bundle, receipt: dict[str, Any], literals: list[str], keep: int
) -> dict[str, Any]:
    inside = Inside(bundle.root)  # a derived file behind a link leading outside: not read
    latest = read_receipt(paths.latest_path(bundle), inside)
    checked = check_ready(read_receipt(paths.latest_ready_path(bundle), inside))
    ready_now = checked.read
    issues: list[dict[str, str]] = []
    for read, locator in ((latest, paths.LATEST), (ready_now, paths.LATEST_READY)):
        if read.problem:
            issues.append({"locator": locator, "problem": read.problem})
            sig = _malformed_signal(locator, read.problem).to_json()
            receipt["signals"].append(sig)
            receipt["verdict"] = worse(receipt["verdict"], _VERDICT_OF_IMPACT[sig["verdictImpact"]])
    if ready_now.receipt is not None and checked.unusable:
        # Reported, not a signal: a receipt ready in every respect replaces it (below).
        issues.append(
            {
                "locator": paths.LATEST_READY,
                "problem": unusable_text(ready_now.receipt, checked.unusable)
                + "; the next receipt that is ready in every respect replaces it",
            }
        )
    ready = qualifies_ready(receipt)
    receipt["ready"] = ready
    receipt["recoveryAnchor"] = _anchor(receipt, ready, checked)
    receipt = redact_tree(receipt, literals)
    rid = receipt["id"]
    detail = paths.receipts_dir(bundle) / f"{rid}.json"
    atomic_write_json(detail, receipt)
    day = receipt["generatedAt"][:10]
    append_jsonl(paths.history_dir(bundle) / f"{day}.jsonl", [_history_line(receipt)])
    key = order_key(receipt)
    latest_replaced = latest.missing or (
        latest.receipt is not None and key > order_key(latest.receipt)
    )
    ready_replaced = ready and (
        ready_now.missing
        or checked.unusable is not None
        or (ready_now.receipt is not None and key > order_key(ready_now.receipt))
    )
    targets = [
        target
        for target, replace in (
            (paths.latest_path(bundle), latest_replaced),
            (paths.latest_ready_path(bundle), ready_replaced),
        )
        if replace
    ]
    if targets:
        publish(detail, targets)
    protect = {rid}
    for read, replaced in ((latest, latest_replaced), (ready_now, ready_replaced)):
        if read.receipt is not None and not replaced:
            protect.add(read.receipt["id"])
    pruned, cache_issues = prune(bundle, keep, protect)
    issues.extend(cache_issues)
    receipt["sentinelIssues"] = issues
    return {
        "receipt": receipt,
        "locator": paths.receipt_locator(rid),
        "latestReplaced": latest_replaced,
        "latestReadyReplaced": ready_replaced,
        "pruned": pruned,
        "issues": issues,
    }


def redact_tree(obj: Any, literals: list[str]) -> Any:
    """``redact_obj`` with each distinct string redacted once (receipts repeat keys)."""
    seen: dict[str, str] = {}

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            if value not in seen:
                seen[value] = redact_obj(value, literals)
            return seen[value]
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    return walk(obj)


def publish(detail: Path, targets: list[Path]) -> None:
    """Make each target a copy of the (already fsynced) detail file, atomically.

    A hard link to a temp name renamed over the target costs no data write or
    fsync; receipts are never rewritten in place, so sharing the inode is safe.
    Where links are not supported, the bytes are written out instead.
    """
    folders = set()
    for target in targets:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.link.tmp")
        try:
            tmp.unlink(missing_ok=True)
            os.link(detail, tmp)
        except OSError:
            atomic_write_bytes(target, detail.read_bytes())
            continue
        try:
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        folders.add(target.parent)
    for folder in folders:
        fsync_dir(folder)


def prune(bundle: Bundle, keep: int, protect: set[str]) -> tuple[list[str], list[dict[str, str]]]:
    """Drop the oldest receipt detail files beyond ``keep`` (never a protected or
    unreadable one). Returns (pruned ids, issues about unreadable files)."""
    folder = paths.receipts_dir(bundle)
    skipped: list[str] = []  # behind a symlink leading outside the bundle: never opened
    names = names_inside(folder, lambda n: n.endswith(".json") and n[0] != ".", skipped)
    good: list[tuple[tuple[str, str], str]] = []
    issues: list[dict[str, str]] = [{"locator": r, "problem": outside(r)} for r in skipped]
    if len(names) <= keep:
        return [], issues  # nothing to prune: spare the reads
    for name in names:
        read = read_receipt(folder / name)
        locator = f"{paths.RECEIPTS_DIR}/{name}"
        if read.receipt is None or f"{read.receipt['id']}.json" != name:
            problem = read.problem or "does not match its file name"
            issues.append({"locator": locator, "problem": problem})
            continue
        good.append((order_key(read.receipt), read.receipt["id"]))
    good.sort(reverse=True)
    pruned: list[str] = []
    for _key, rid in good[keep:]:
        if rid in protect:
            continue
        try:
            os.unlink(folder / f"{rid}.json")
        except FileNotFoundError:
            continue
        pruned.append(rid)
    return sorted(pruned), issues


__all__ = ["DEFAULT_KEEP", "TRIGGERS", "impact_rank", "qualifies_ready", "refresh"]
