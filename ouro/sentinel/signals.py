"""Signals: outside facts that bear on whether a resume is safe right now.

A signal is ``{kind, source, status, verdictImpact, repairActor,
repairCommand, detail}``:

- ``provider_lane`` and ``sense`` signals come from the caller (a harness that
  knows its model provider is down or a sensor is silent), as JSON;
- ``bundle`` signals ouro produces itself about ``ouro sync`` (read from
  ``state/sync/``, no git process): ``not-configured`` (no impact: a bundle
  that does not sync is not nagged about git), ``configured`` (no sync yet,
  within the interval), ``synced``, and — watch —
  ``sync-failed`` (the last sync failed), ``sync-overdue`` (no successful
  sync within the configured interval), ``sync-conflict`` (a merge kept both
  versions of a file; ``ouro sync status``) or ``unknown``. Uncommitted
  changes between syncs are normal and not a signal;
- ``gauntlet`` signals restate each check that did not pass, with its repair.

``verdictImpact`` is none | watch | blocked. A caller that leaves it out gets
one derived from the status: ``ok`` → none, ``unknown`` → watch, anything
else → blocked (a lane that is down blocks until someone says otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.store import jsonio

SignalKind = Literal["provider_lane", "sense", "bundle", "gauntlet"]
Impact = Literal["none", "watch", "blocked"]
RepairActor = Literal["agent-runnable", "human-required", "human-choice"]
CALLER_KINDS = ("provider_lane", "sense")
_IMPACT_RANK = {"none": 0, "watch": 1, "blocked": 2}


@dataclass(frozen=True)
class Signal:
    """A plain value: the sentinel runs inside hooks, where pydantic's import
    cost matters. Caller input is validated in ``parse_caller_signal``."""

    kind: SignalKind
    source: str
    status: str
    verdict_impact: Impact
    repair_actor: RepairActor | None = None
    repair_command: str | None = None
    detail: str | None = None
    #: provider lane only: when the evidence was taken, and whether in this refresh
    checked_at: str | None = None
    fresh: bool | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "source": self.source,
            "status": self.status,
            "verdictImpact": self.verdict_impact,
            "repairActor": self.repair_actor,
            "repairCommand": self.repair_command,
            "detail": self.detail,
            "checkedAt": self.checked_at,
            "fresh": self.fresh,
        }
        return {k: v for k, v in data.items() if v is not None}


def _validate(data: dict[str, Any], where: str) -> Signal:
    from pydantic import BaseModel, ConfigDict, Field, ValidationError
    from pydantic.alias_generators import to_camel

    from ouro.models.base import describe_validation

    class CallerSignal(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

        kind: SignalKind
        source: str = Field(min_length=1, max_length=200)
        status: str = Field(min_length=1, max_length=80)
        verdict_impact: Impact
        repair_actor: RepairActor | None = None
        repair_command: str | None = Field(default=None, max_length=2000)
        detail: str | None = Field(default=None, max_length=2000)

    try:
        checked = CallerSignal.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation(exc, where), hint="fix the named field") from None
    return Signal(**checked.model_dump())


def impact_rank(impact: str) -> int:
    return _IMPACT_RANK.get(impact, 2)


def default_impact(status: str) -> Impact:
    lowered = status.strip().lower()
    if lowered == "ok":
        return "none"
    if lowered == "unknown":
        return "watch"
    return "blocked"


def parse_caller_signal(value: str | dict[str, Any], *, index: int) -> Signal:
    """One ``--signal`` value (JSON text or an object) → a validated signal."""
    where = f"signal[{index}]"
    if isinstance(value, str):
        try:
            data = jsonio.loads(value)
        except jsonio.JSONDecodeError as exc:
            raise InvalidInput(
                f"{where}: not valid JSON ({exc})",
                hint='pass a JSON object, e.g. --signal \'{"kind":"provider_lane",'
                '"source":"anthropic","status":"down"}\'',
            ) from None
    else:
        data = value
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: must be a JSON object", hint='pass {"kind": ..., ...}')
    data = dict(data)
    kind = data.get("kind")
    if kind not in CALLER_KINDS:
        raise InvalidInput(
            f"{where}: kind must be one of {', '.join(CALLER_KINDS)} (got {kind!r})",
            hint="bundle and gauntlet signals are produced by ouro itself",
        )
    data.setdefault("source", kind)
    if "verdictImpact" not in data and "verdict_impact" not in data:
        data["verdictImpact"] = default_impact(str(data.get("status") or ""))
    return _validate(data, where)


def parse_caller_signals(values: Sequence[str | dict[str, Any]]) -> list[Signal]:
    return [parse_caller_signal(v, index=i) for i, v in enumerate(values)]


def _sync_signal(status: str, impact: Impact, detail: str, command: str | None = None) -> Signal:
    return Signal(
        kind="bundle",
        source="sync",
        status=status,
        verdict_impact=impact,
        repair_actor="agent-runnable" if command else None,
        repair_command=command,
        detail=detail,
    )


def git_signals(bundle: Bundle, *, now: datetime | None = None) -> list[Signal]:
    """The bundle's sync state as signals, from ``state/sync/`` (no git process).

    Without sync configured there is nothing to watch: uncommitted files are
    not a concern of a bundle that does not travel. With sync configured,
    uncommitted changes between syncs are normal; what matters is a last sync
    that failed, no successful sync within the interval, or kept conflicts.
    """
    from ouro.desk.names import parse_duration
    from ouro.errors import OuroError
    from ouro.models.clock import parse_time, utc_now
    from ouro.sync import state

    root = str(bundle.root)
    sync_cmd = f"ouro --bundle {root} sync"
    try:
        config = state.read_config(bundle)
        status = state.read_status(bundle) if config is not None else None
    except OuroError as exc:
        return [_sync_signal("unknown", "watch", f"sync state unreadable: {exc.message}", sync_cmd)]
    if config is None:
        return [
            Signal(
                kind="bundle",
                source="sync",
                status="not-configured",
                verdict_impact="none",
                repair_actor="human-choice",
                repair_command=f"ouro --bundle {root} sync init --remote URL",
                detail="sync is not configured; git is not consulted (nothing to watch)",
            )
        ]
    signals: list[Signal] = []
    now = now or utc_now()
    interval = str(config.get("interval") or state.DEFAULT_INTERVAL)
    try:
        seconds = parse_duration(interval, field="interval")
    except OuroError:
        seconds = parse_duration(state.DEFAULT_INTERVAL, field="interval")
    if status is not None and status.get("lastResult") == "failed":
        signals.append(
            _sync_signal(
                "sync-failed",
                "watch",
                f"the last sync ({status.get('lastAttemptAt')}) failed: {status.get('lastError')}",
                sync_cmd,
            )
        )
    since = (status or {}).get("lastSuccessAt") or config.get("configuredAt")
    try:
        age = (now - parse_time(str(since))).total_seconds() if since else None
    except ValueError:
        age = None
    if age is None:
        signals.append(
            _sync_signal("unknown", "watch", "no readable time of a last sync", sync_cmd)
        )
    elif age > seconds:
        never = not (status or {}).get("lastSuccessAt")
        what = "never synced since sync was configured" if never else "not synced"
        signals.append(
            _sync_signal(
                "sync-overdue",
                "watch",
                f"{what} {since}: {int(age // 60)} min ago, longer than the interval {interval}",
                sync_cmd,
            )
        )
    conflicts, problems = state.open_conflicts(bundle)
    if conflicts or problems:
        shown = ", ".join(f"{c.get('path')} ({c.get('kind')})" for c in conflicts[:3])
        signals.append(
            _sync_signal(
                "sync-conflict",
                "watch",
                f"{len(conflicts)} sync conflict(s) kept both versions: {shown}"
                + (f"; {'; '.join(problems)}" if problems else ""),
                f"ouro --bundle {root} sync status",
            )
        )
    if signals:
        return signals
    if not (status or {}).get("lastSuccessAt"):
        return [_sync_signal("configured", "none", f"sync configured {since}; no sync yet")]
    return [_sync_signal("synced", "none", f"last successful sync {since}")]


def worst_impact(signals: Iterable[Signal]) -> Impact:
    worst: Impact = "none"
    for sig in signals:
        if impact_rank(sig.verdict_impact) > impact_rank(worst):
            worst = sig.verdict_impact
    return worst
