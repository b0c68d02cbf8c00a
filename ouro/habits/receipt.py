"""Habit run receipts: ``arc/flight-recorder/habit-receipts/<runId>.json``.

One version-2 receipt per run, written once (atomic replace) by the run that
holds the habit's lock, after the body has finished, timed out or crashed.
The model below is the contract; ``docs/schemas/habit-run-receipt.schema.json``
is generated from it (``python -m ouro.habits.schema``) and a test fails when
the two drift. Optional members (``friendId``, ``rawStatus``, ...) are left
out of the file when absent; required-but-nullable ones (``nextRunAt``,
``requestedTools``, ``exitCode``) are written as ``null``.

Beyond the seed's field list, a receipt carries ``habitTitle``, ``exitCode``,
``durationMs``, ``sessionKept``, in ``toolPolicy``, ``refusedCalls`` (each
tool call the session refused), ``body`` (agent | run), ``agent`` (which host,
its executable, whether ouro's MCP server was wired, whether the transcript was
kept), ``timedOut``, ``outputTruncated`` and ``lane`` (the session's own Arc
lane: its ask, next action, handoff, blockers) — all useful to a reader
reconstructing the run without the session scratch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, NotFound
from ouro.models.base import describe_validation
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.guard import names_inside, outside

RECEIPTS_DIR = "arc/flight-recorder/habit-receipts"

Trigger = Literal["cron", "launchd", "poke", "overdue", "manual"]
Outcome = Literal[
    "no_change", "wrote_arc", "updated_desk", "wrote_record", "surfaced", "blocked", "error"
]
RouteKind = Literal["family", "originator", "extra"]
SurfaceReason = Literal["needed_input", "status", "answer", "blocked", "other"]
SurfaceResult = Literal[
    "sent", "delivered", "delivered_now", "queued", "deferred", "blocked", "failed", "unavailable"
]
RefKind = Literal["arc", "desk_task", "desk_record", "claim", "surface", "none"]


class _Part(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ReturnRoute(_Part):
    kind: RouteKind
    recipient: str
    status: Literal["allowed", "unresolved"]
    friend_id: str | None = None
    channel: str | None = None
    key: str | None = None
    reason: str | None = None


class PermissionEnvelope(_Part):
    schema_version: Literal[1] = 1
    can_message_outward: bool
    return_routes: list[ReturnRoute]
    denied_tools: list[str]
    warnings: list[str]


class RefusedCall(_Part):
    tool: str
    at: str
    reason: str


class ToolPolicy(_Part):
    requested_tools: list[str] | None
    granted_tools: list[str]
    denied_tools: list[str]
    outward_messaging_allowed: bool
    refused_calls: list[RefusedCall] = Field(default_factory=list)


class ProducedRef(_Part):
    kind: RefKind
    locator: str


class SurfaceAttempt(_Part):
    recipient: str
    channel: str
    reason: SurfaceReason
    result: SurfaceResult
    raw_status: str | None = None
    route_kind: RouteKind | None = None
    error: str | None = None


class AgentRun(_Part):
    """The agent that did a habit with no ``run:`` (``ouro.habits.agents``)."""

    name: str
    executable: str | None
    #: whether ouro's MCP server (``ouro mcp --session``) was wired into the host
    mcp: bool
    transcript_kept: bool


class LaneSummary(_Part):
    """The session's own Arc lane: what it recorded as its ask, next action,
    handoff and blockers (events whose ``sessionRef`` is the session)."""

    events: int
    ask: str | None
    next: str | None
    handoff: str | None
    blockers: list[str]


class HabitRunReceipt(_Part):
    """What one habit run did: enough to reconstruct it after the scratch is gone."""

    schema_version: Literal[2] = 2
    run_id: str
    session_id: str
    habit_name: str
    habit_title: str
    trigger: Trigger
    started_at: str
    ended_at: str
    duration_ms: int = Field(ge=0)
    outcome: Outcome
    exit_code: int | None
    definition_locator: str
    session_locator: str
    session_kept: bool
    pending_locator: str
    runtime_state_locator: str
    receipt_locator: str
    next_run_at: str | None
    permission_envelope: PermissionEnvelope
    tool_policy: ToolPolicy
    produced_refs: list[ProducedRef]
    surface_attempts: list[SurfaceAttempt]
    errors: list[str]
    #: ``agent`` when an agent did the habit, ``run`` for a scripted body
    body: Literal["agent", "run"] = "run"
    agent: AgentRun | None = None
    timed_out: bool = False
    output_truncated: bool = False
    lane: LaneSummary | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = drop_optional_nones(self.model_dump(mode="json", by_alias=True))
        return data


#: Members that are optional in the seed's receipt: absent rather than null.
_OPTIONAL = frozenset({"friendId", "channel", "key", "reason", "rawStatus", "routeKind", "error"})


def drop_optional_nones(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: drop_optional_nones(v) for k, v in obj.items() if not (v is None and k in _OPTIONAL)
        }
    if isinstance(obj, list):
        return [drop_optional_nones(v) for v in obj]
    return obj


def receipt_schema() -> dict[str, Any]:
    """The JSON Schema published at docs/schemas/habit-run-receipt.schema.json."""
    schema = HabitRunReceipt.model_json_schema(by_alias=True)
    # a version is never left out of a written receipt or envelope
    for part in (schema, schema["$defs"]["PermissionEnvelope"]):
        part["required"] = ["schemaVersion", *part["required"]]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://ouro.dev/schemas/habit-run-receipt.schema.json"
    return schema


def receipt_locator(run_id: str) -> str:
    return f"{RECEIPTS_DIR}/{run_id}.json"


def receipts_dir(bundle: Bundle) -> Path:
    return bundle.root / RECEIPTS_DIR


def write_receipt(bundle: Bundle, receipt: HabitRunReceipt, data: dict[str, Any]) -> None:
    """Write the (already redacted) receipt dict ``data`` for ``receipt``."""
    atomic_write_json(bundle.path(receipt.receipt_locator), data)


def parse_receipt(data: Any, source: str) -> HabitRunReceipt:
    from pydantic import ValidationError

    try:
        return HabitRunReceipt.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation(exc, source), hint="fix the named field") from None


def read_receipt(bundle: Bundle, locator: str) -> HabitRunReceipt:
    path = bundle.path(locator)
    try:
        data = jsonio.loads(file_bytes(path))
    except FileNotFoundError:
        raise NotFound(
            f"habit receipt {locator} is missing",
            hint="list the receipts in arc/flight-recorder/habit-receipts/",
        ) from None
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(
            f"{locator}: not valid JSON ({exc})", hint="restore it from git; ouro left it as is"
        ) from None
    try:
        return parse_receipt(data, locator)
    except InvalidInput as exc:
        raise CorruptFile(exc.message, hint="restore it from git; ouro left it as is") from None


def latest_receipt_for(
    bundle: Bundle, name: str, *, after: str | None = None
) -> tuple[HabitRunReceipt | None, list[str]]:
    """The newest readable receipt of habit ``name`` (run ids sort by time),
    considering only runs newer than run id ``after`` when given.

    Returns (receipt or None, problems met on the way). Pure.
    """
    folder = receipts_dir(bundle)
    if not folder.is_dir():
        return None, []
    problems: list[str] = []
    skipped: list[str] = []  # behind a symlink leading outside the bundle: never opened
    listed = names_inside(folder, lambda n: n.endswith(".json"), skipped)
    problems += [outside(rel) for rel in skipped]
    for path in [folder / n for n in reversed(listed)]:
        if after is not None and path.stem <= after:
            break
        locator = f"{RECEIPTS_DIR}/{path.name}"
        try:
            receipt = read_receipt(bundle, locator)
        except (CorruptFile, NotFound) as exc:
            problems.append(exc.message)
            continue
        if receipt.habit_name == name:
            return receipt, problems
    return None, problems
