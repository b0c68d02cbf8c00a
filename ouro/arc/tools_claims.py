"""Text renderings of the claim and obligation verbs (``ouro.api.arc``), and their
old CLI input models.

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro.arc.claim_status import Authority, Status
from ouro.models.base import NonBlank, ToolInput


class ClaimAddInput(ToolInput):
    text: NonBlank = Field(min_length=1, description="what you claim is true")
    about: list[str] = Field(
        default_factory=list,
        description="a file the claim is about: a bundle locator or a repo-relative path",
    )
    authority: Authority = Field("agent", description="who asserts it")
    check: str | None = Field(
        None,
        description="the command that proves it; only an observed run of exactly this command "
        "(ouro claim verify, or the host seeing it run) can verify the claim",
    )
    repo: str | None = Field(
        None,
        description="repository folder for this claim's paths and check (default: bundle.json "
        "repoRoot, else the bundle's parent folder); relative to the bundle folder",
    )


class EvidenceInput(ToolInput):
    claim_id: str = Field(description="the claim (cl-…)")
    command: NonBlank = Field(min_length=1, description="the command that ran")
    exit_code: int = Field(description="its exit status")
    output: str | None = Field(None, description="its output; only a digest is kept")
    source: list[str] = Field(
        default_factory=list, description="a file the evidence is about (default: the claim's)"
    )
    authority: Authority = Field("command", description="what kind of source reported it")
    by: str | None = Field(None, description="who asserts it (default: the bundle's agent)")


class VerifyInput(ToolInput):
    claim_id: str = Field(description="the claim (cl-…)")
    timeout: float = Field(300.0, gt=0, description="seconds before the check is stopped")
    yes: bool = Field(
        False,
        description="run a check that was not written through ouro here (read it first)",
    )


class SupersedeInput(ToolInput):
    claim_id: str = Field(description="the claim being replaced")
    by: str = Field(description="the replacement claim")


class ClaimUpdateInput(ToolInput):
    claim_id: str = Field(description="the claim (cl-…)")
    text: str | None = Field(None, description="the corrected claim text")
    about: list[str] | None = Field(
        None, description="the files the claim is about (replaces the list)"
    )
    check: str | None = Field(
        None,
        description="the corrected check command; earlier receipts then no longer count",
    )


class ClaimListInput(ToolInput):
    status: Status | None = Field(None, description="only claims with this derived status")


class ObligationAddInput(ToolInput):
    what: NonBlank = Field(min_length=1, description="what is owed")
    to: NonBlank = Field(min_length=1, description="who it is owed to")
    due: str | None = Field(None, description="due date, YYYY-MM-DD")
    route: str | None = Field(None, description="CHANNEL:KEY to answer back on (a return)")
    desk: str | None = Field(None, description="the Desk locator with the details")


class ObligationCloseInput(ToolInput):
    obligation_id: str = Field(description="the obligation (ob-…)")
    dropped: bool = Field(False, description="dropped rather than done")


class ObligationListInput(ToolInput):
    status: Literal["open", "done", "dropped"] | None = Field(None, description="filter")


# --- renderings -------------------------------------------------------------


def render_claim(c: dict[str, Any]) -> str:
    from ouro.cli.output import status

    lines = [f"{c['id']} [{status(c['status'])}] {c['text']}", f"  why: {c['statusReason']}"]
    if c.get("check"):
        lines.append(f"  check: {c['check']}")
    evidence = c.get("evidence") or []
    if evidence:
        e = evidence[-1]
        who = f" by {e['by']}" if e.get("by") else ""
        lines.append(
            f"  latest evidence: {e.get('provenance', 'asserted')}{who}: "
            f"{e['command']!r} exited {e['exitCode']} at {e['recordedAt']}"
        )
    run = c.get("run")
    if run:
        timed = " (timed out)" if run.get("timedOut") else ""
        lines.append(
            f"  ran in {run['cwd']}: exit {run['exitCode']}{timed}, {run['durationMs']} ms, "
            f"output {run['outputDigest']}"
        )
        if run.get("tail"):
            lines.append("  output tail (redacted):")
            lines.extend("    " + line for line in run["tail"].splitlines())
    lines.append(f"  at: {c['locator']}")
    return "\n".join(lines)


def verify_exit(c: dict[str, Any]) -> int:
    """``claim verify`` exits 1 when the check it ran failed."""
    run = c.get("run") or {}
    return 0 if run.get("exitCode") == 0 else 1


def _ob_line(o: dict[str, Any]) -> str:
    due = f" due {o['due']}" if o.get("due") else ""
    route = f" via {o['route']['channel']}:{o['route']['key']}" if o.get("route") else ""
    return f"{o['id']} [{o['status']}] {o['what']} → {o['owedTo']}{due}{route}  ({o['locator']})"


def render_obligation(o: dict[str, Any]) -> str:
    return _ob_line(o)
