"""Does the host's own transcript back a reported tool call?

``witness`` looks the reported call up in the host's session transcript
(``ouro.hooks.transcript``: only the host's own file is read) and ``judge``
compares what the host recorded with what was reported: the same command,
an exit status, the same exit status as the report states (if it states one),
a result recorded within ``WINDOW_SECONDS`` of the report, and (Codex records
it) the same folder. The verdict is ``observed-by-host``, ``pending`` (the
host's file does not show the call or its result yet: look again later) or
``asserted``, with the reason in words.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from ouro.hooks import transcript
from ouro.hooks.common import HookInput, Host
from ouro.models.clock import format_time, parse_time

#: how far from the hook (or, for a pending receipt, from the report) the
#: host's record of the result may be: the host writes it as the command ends
WINDOW_SECONDS = 600
OBSERVED, PENDING, ASSERTED = "observed-by-host", "pending", "asserted"


@dataclass(frozen=True)
class Verdict:
    """How far the host's transcript backs a report."""

    kind: str  # OBSERVED | PENDING | ASSERTED
    exit_code: int | None = None  # the transcript's, when OBSERVED
    reason: str = ""


def tool_id(inp: HookInput) -> str | None:
    raw = (inp.tool or {}).get("tool_use_id")
    return raw if transcript.valid_tool_id(raw) else None


def witness(
    host: Host, inp: HookInput, raw: str, claimed: int | None, env: Mapping[str, str], *,
    now: datetime,
) -> Verdict:  # fmt: skip
    """What the host's own transcript says about the reported call."""
    call = tool_id(inp)
    if call is None:
        return Verdict(ASSERTED, reason="the report names no tool_use_id the host could record")
    path, why = transcript.trusted_path(host.name, inp.transcript_path, inp.session_id, env)
    if path is None:
        return Verdict(ASSERTED, reason=why)
    assert inp.session_id is not None  # trusted_path requires one
    found = transcript.lookup(host.name, path, inp.session_id, call)
    if found.run is None:
        return Verdict(PENDING if found.retry else ASSERTED, reason=found.reason)
    return judge(found.run, raw, claimed, inp.cwd, reference=now)


def judge(
    run: transcript.HostRun,
    raw: str,
    claimed: int | None,
    cwd: str | None,
    *,
    reference: datetime,
) -> Verdict:
    """OBSERVED when the transcript's call is the reported one; else ASSERTED and why."""
    if run.command != raw:
        return Verdict(
            ASSERTED, reason=f"the host's transcript shows that call ran {run.command!r:.120}"
        )
    if run.interrupted or run.exit_code is None:
        return Verdict(ASSERTED, reason="the host's transcript records no exit status for it")
    if claimed is not None and claimed != run.exit_code:
        return Verdict(
            ASSERTED,
            reason=f"the report says exit {claimed}; the host's transcript records exit {run.exit_code}",
        )
    try:
        at = parse_time(run.at) if run.at else None
    except ValueError:
        at = None
    if at is None:
        return Verdict(ASSERTED, reason="the host's transcript records no time for the result")
    if abs((at - reference).total_seconds()) > WINDOW_SECONDS:
        return Verdict(
            ASSERTED,
            reason=f"the host recorded that result at {run.at}, not around the report "
            f"({format_time(reference)})",
        )
    if run.cwd and cwd and not same_dir(run.cwd, cwd):
        return Verdict(ASSERTED, reason=f"the host's transcript shows it ran in {run.cwd}")
    return Verdict(OBSERVED, exit_code=run.exit_code)


def note(host: Host, verdict: Verdict) -> str | None:
    if verdict.kind == OBSERVED:
        return None
    if verdict.kind == PENDING:
        return (
            f"reported by the {host.name} hook, not yet in the host's transcript "
            f"({verdict.reason}); it counts once the transcript shows the call"
        )
    return f"reported by the {host.name} hook, not confirmed by the host's transcript: {verdict.reason}"


def same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)
