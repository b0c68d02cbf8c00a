"""Signals: outside facts that bear on whether a resume is safe right now.

A signal is ``{kind, source, status, verdictImpact, repairActor,
repairCommand, detail}``:

- ``provider_lane`` and ``sense`` signals come from the caller (a harness that
  knows its model provider is down or a sensor is silent), as JSON;
- ``bundle`` signals ouro produces itself from git: ``uncommitted`` when the
  bundle's files have changes git has not committed, ``git-unavailable`` when
  the bundle is not in a git repository or git is missing;
- ``gauntlet`` signals restate each check that did not pass, with its repair.

``verdictImpact`` is none | watch | blocked. A caller that leaves it out gets
one derived from the status: ``ok`` → none, ``unknown`` → watch, anything
else → blocked (a lane that is down blocks until someone says otherwise).

Git is run without a shell, with a timeout and ``GIT_OPTIONAL_LOCKS=0`` so
``git status`` never rewrites git's index file while the sentinel looks.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.sentinel.paths import SENTINEL_DIR

SignalKind = Literal["provider_lane", "sense", "bundle", "gauntlet"]
Impact = Literal["none", "watch", "blocked"]
RepairActor = Literal["agent-runnable", "human-required", "human-choice"]
CALLER_KINDS = ("provider_lane", "sense")
GIT_TIMEOUT = 5.0
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

    def to_json(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "source": self.source,
            "status": self.status,
            "verdictImpact": self.verdict_impact,
            "repairActor": self.repair_actor,
            "repairCommand": self.repair_command,
            "detail": self.detail,
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
            data = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
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


def _porcelain_paths(out: bytes) -> list[str]:
    """Paths named by ``git status --porcelain -z`` (rename sources skipped)."""
    paths: list[str] = []
    entries = out.split(b"\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:].decode("utf-8", "replace"))
        if entry[:1] in (b"R", b"C"):
            i += 1  # -z puts the rename's source path in the next entry
    return paths


def _unavailable(root: str, why: str) -> Signal:
    return Signal(
        kind="bundle",
        source="git",
        status="git-unavailable",
        verdict_impact="none",
        repair_actor="human-choice",
        repair_command=f"git -C {root} init",
        detail=f"{why}; the bundle's history is not versioned or shared",
    )


def _inside_repo(root: Path) -> bool:
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def git_signals(bundle: Bundle, *, timeout: float = GIT_TIMEOUT) -> list[Signal]:
    """The bundle's git state as signals (never raises for git problems)."""
    root = str(bundle.root)
    if not os.environ.get("GIT_DIR") and not _inside_repo(bundle.root):
        # No .git from here up: not a repository, and no need to spawn git to say so.
        return [_unavailable(root, "the bundle is not inside a git repository")]
    argv = [
        "git",
        "-C",
        root,
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=normal",
        "--",
        ".",
        # The sentinel's own output must not make the next refresh "dirty".
        f":(exclude){SENTINEL_DIR}",
    ]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, env=env, check=False)
    except FileNotFoundError:
        return [_unavailable(root, "git is not installed (not found on PATH)")]
    except subprocess.TimeoutExpired:
        return [
            Signal(
                kind="bundle",
                source="git",
                status="unknown",
                verdict_impact="watch",
                repair_actor="agent-runnable",
                repair_command=f"git -C {root} status",
                detail=f"git status did not answer within {timeout:g}s; bundle state unknown",
            )
        ]
    except OSError as exc:
        return [_unavailable(root, f"git could not run ({exc.strerror or exc})")]
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        first = err[0] if err else f"exit status {proc.returncode}"
        if "not a git repository" in first:
            return [_unavailable(root, "the bundle is not inside a git repository")]
        return [
            Signal(
                kind="bundle",
                source="git",
                status="unknown",
                verdict_impact="watch",
                repair_actor="human-required",
                repair_command=f"git -C {root} status",
                detail=f"git status failed: {first}",
            )
        ]
    paths = _porcelain_paths(proc.stdout)
    if not paths:
        return [Signal(kind="bundle", source="git", status="clean", verdict_impact="none")]
    shown = ", ".join(paths[:3]) + (f" (+{len(paths) - 3} more)" if len(paths) > 3 else "")
    return [
        Signal(
            kind="bundle",
            source="git",
            status="uncommitted",
            verdict_impact="watch",
            repair_actor="agent-runnable",
            repair_command=f"git -C {root} add -A && git -C {root} commit -m 'ouro: bundle checkpoint'",
            detail=f"{len(paths)} uncommitted change(s) in the bundle: {shown}",
        )
    ]


def worst_impact(signals: Iterable[Signal]) -> Impact:
    worst: Impact = "none"
    for sig in signals:
        if impact_rank(sig.verdict_impact) > impact_rank(worst):
            worst = sig.verdict_impact
    return worst
