"""The old CLI's tool table (transitional: the new CLI replaces it).

The registry is ``ouro.registry`` and each verb's one home is its library
method (``ouro.api``). What is left here is what the click CLI
(``ouro.cli.gen``) still reads to build its commands -- the pydantic input
model (for the options), the CLI path, the renderer and the exit status --
and ``invoke``, which hands a call to the library dispatcher ``ouro.api.call``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ouro.errors import NotFound
from ouro.sentinel.drills import DRILL_NAMES

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ouro.bundle import Bundle


def load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def tool_name(cli: tuple[str, ...]) -> str:
    """The MCP tool name of a CLI path (``ouro.registry.name_of``)."""
    from ouro.registry import name_of

    return name_of(cli)


@dataclass(frozen=True)
class Tool:
    description: str
    input_model: str
    cli: tuple[str, ...]
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    #: runs a shell command (a check, a habit body): it can reach anything
    open_world: bool = False
    #: input fields taken as positional CLI arguments, in order
    args: tuple[str, ...] = ()
    #: CLI option name overrides: field -> "--flag"
    options: Mapping[str, str] = field(default_factory=dict)
    #: fields whose CLI option names a file to read ("-" = stdin): field -> "--flag"
    files: Mapping[str, str] = field(default_factory=dict)
    #: optional "module:func" turning the result dict into text for humans
    render: str | None = None
    #: optional "module:func" mapping the result dict to the CLI exit status
    exit_status: str | None = None

    @property
    def name(self) -> str:
        """The MCP tool name, derived from the CLI path (see ``tool_name``)."""
        return tool_name(self.cli)

    def model(self) -> type[BaseModel]:
        model: type[BaseModel] = load(self.input_model)
        return model


TOOLS: tuple[Tool, ...] = (
    # --- bundle ------------------------------------------------------------
    Tool(
        description="Describe the bundle: its path, agent, layout version, how many files "
        "each area holds, and the state of the search index.",
        input_model="ouro.info_input:InfoInput",
        cli=("info",),
        read_only=True,
        idempotent=True,
        render="ouro.info:render_info",
    ),
    Tool(
        description="The start-of-turn packet: ask, next safe action, the facts, notes and "
        "lessons they point at, blockers, gaps, obligations, unverified claims, Desk work and "
        "lessons, unread message counts (bodies: message_read), each with its locator, within "
        "a character budget. Writes nothing.",
        input_model="ouro.orient_tool:OrientInput",
        cli=("orient",),
        read_only=True,
        idempotent=True,
        render="ouro.orient_tool:render_orient",
    ),
    # --- arc ---------------------------------------------------------------
    Tool(
        description="Read the resume checkpoint: whether you can continue safely, the current "
        "ask and its confidence, the next safe action, blockers, owed obligations, unverified "
        "claims and recorder health. When latest.json lags the log it folds the log itself; "
        "writes nothing.",
        input_model="ouro.arc.tools_arc:ResumeInput",
        cli=("arc", "resume"),
        read_only=True,
        idempotent=True,
        render="ouro.arc.tools_arc:render_resume",
    ),
    Tool(
        description="Answer one Arc question from files: doing (ask + next action), owe (open "
        "obligations and return routes), blocked, unverified (claims not verified), "
        "since-checkpoint (events after the last safe checkpoint).",
        input_model="ouro.arc.tools_arc:QueryInput",
        cli=("arc", "query"),
        read_only=True,
        idempotent=True,
        args=("what",),
        render="ouro.cli.render:arc_query",
    ),
    Tool(
        description="Record what you are being asked to do now (the current ask), optionally "
        "with the Desk tasks/locators that carry the details. A next safe action recorded "
        "for an earlier ask is then no longer current.",
        input_model="ouro.arc.tools_arc:DeskLinkInput",
        cli=("arc", "ask"),
        read_only=False,
        args=("text",),
        options={
            "session_ref": "--session",
            "turn_id": "--turn",
            "tasks": "--task",
            "refs": "--ref",
        },
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Record the next safe action for the current ask, actions to stop before "
        "(confirm first), and the Desk tasks/locators that carry the details.",
        input_model="ouro.arc.tools_arc:NextInput",
        cli=("arc", "next"),
        read_only=False,
        args=("text",),
        options={
            "session_ref": "--session",
            "turn_id": "--turn",
            "tasks": "--task",
            "refs": "--ref",
        },
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Confirm, after a new session or a handoff, that the recorded ask (and its "
        "next safe action) is still what you are doing, without retyping it.",
        input_model="ouro.arc.tools_arc:ConfirmInput",
        cli=("arc", "confirm"),
        read_only=False,
        options={"session_ref": "--session", "turn_id": "--turn"},
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Record a blocker: why work cannot continue. Resume reports can-continue "
        "false until it is cleared.",
        input_model="ouro.arc.tools_arc:TextInput",
        cli=("arc", "blocker"),
        read_only=False,
        args=("text",),
        options={"session_ref": "--session", "turn_id": "--turn"},
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Clear one blocker by its event id, or all active blockers.",
        input_model="ouro.arc.tools_arc:UnblockInput",
        cli=("arc", "unblock"),
        read_only=False,
        idempotent=True,
        args=("blocker_id",),
        options={"session_ref": "--session", "turn_id": "--turn"},
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Record a handoff note for the next session; it is shown until a newer "
        "handoff or 'arc next', and the ask then needs confirmation ('arc confirm').",
        input_model="ouro.arc.tools_arc:TextInput",
        cli=("arc", "handoff"),
        read_only=False,
        args=("text",),
        options={"session_ref": "--session", "turn_id": "--turn"},
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Record a short flight-recorder note (an agent_note event).",
        input_model="ouro.arc.tools_arc:TextInput",
        cli=("arc", "note"),
        read_only=False,
        args=("text",),
        options={"session_ref": "--session", "turn_id": "--turn"},
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Rebuild the resume checkpoint from the whole event log and every claim "
        "and obligation file, then mark a safe checkpoint.",
        input_model="ouro.arc.tools_arc:CheckpointInput",
        cli=("arc", "checkpoint"),
        read_only=False,
        render="ouro.arc.tools_arc:render_written",
    ),
    Tool(
        description="Record a claim about files, with who asserts it and optionally the exact "
        "check command that proves it. Its status is derived from evidence, never set.",
        input_model="ouro.arc.tools_claims:ClaimAddInput",
        cli=("claim", "add"),
        read_only=False,
        args=("text",),
        render="ouro.arc.tools_claims:render_claim",
    ),
    Tool(
        description="Assert an evidence receipt for a claim: the command that ran, its exit "
        "status, a digest of its output, and the content hash of each source now. Typed-in "
        "evidence is recorded as asserted (with who asserted it) and never verifies a claim.",
        input_model="ouro.arc.tools_claims:EvidenceInput",
        cli=("claim", "evidence"),
        read_only=False,
        args=("claim_id",),
        options={"exit_code": "--exit"},
        files={"output": "--output-file"},
        render="ouro.arc.tools_claims:render_claim",
    ),
    Tool(
        description="Run a claim's declared check (a shell command) like a CI step: in the "
        "repository root, with a timeout and secrets scrubbed from the environment; records an "
        "observed-by-ouro receipt (exit status, duration, output digest, redacted tail). Exits "
        "1 when the check fails. A check not written through ouro here needs yes.",
        input_model="ouro.arc.tools_claims:VerifyInput",
        cli=("claim", "verify"),
        read_only=False,
        destructive=True,  # the check is an arbitrary shell command
        open_world=True,
        args=("claim_id",),
        render="ouro.arc.tools_claims:render_claim",
        exit_status="ouro.arc.tools_claims:verify_exit",
    ),
    Tool(
        description="Mark a claim as superseded by a replacement claim.",
        input_model="ouro.arc.tools_claims:SupersedeInput",
        cli=("claim", "supersede"),
        read_only=False,
        idempotent=True,
        args=("claim_id",),
        render="ouro.arc.tools_claims:render_claim",
    ),
    Tool(
        description="Correct a claim before it is verified: its text, the files it is about, "
        "or its check (the earlier values are kept in its history and the change is recorded "
        "as an event). A verified claim keeps its text and files; if its check changes it "
        "needs an observed run of the new check again (evidence_required).",
        input_model="ouro.arc.tools_claims:ClaimUpdateInput",
        cli=("claim", "update"),
        read_only=False,
        destructive=True,  # replaces the earlier text in place (kept in history)
        idempotent=True,
        args=("claim_id",),
        render="ouro.arc.tools_claims:render_claim",
    ),
    Tool(
        description="List claims with their status derived now (re-hashing their sources).",
        input_model="ouro.arc.tools_claims:ClaimListInput",
        cli=("claim", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:claim_list",
    ),
    Tool(
        description="Record an obligation: what is owed, to whom, by when; with --route it is "
        "a return obligation answered on CHANNEL:KEY.",
        input_model="ouro.arc.tools_claims:ObligationAddInput",
        cli=("obligation", "add"),
        read_only=False,
        args=("what",),
        render="ouro.arc.tools_claims:render_obligation",
    ),
    Tool(
        description="Close an obligation as done (or dropped).",
        input_model="ouro.arc.tools_claims:ObligationCloseInput",
        cli=("obligation", "close"),
        read_only=False,
        idempotent=True,
        args=("obligation_id",),
        render="ouro.arc.tools_claims:render_obligation",
    ),
    Tool(
        description="List obligations and return obligations with their status and routes.",
        input_model="ouro.arc.tools_claims:ObligationListInput",
        cli=("obligation", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:obligation_list",
    ),
    # --- desk --------------------------------------------------------------
    # search
    Tool(
        description="Search the Desk: tasks, tracks, iterations, friction, lessons (tips), "
        "diary facts, "
        'daily reflections and notes. Words must all match; "quoted phrases" and prefix* work. '
        "Returns locators to open, best match first. Sees every ouro write, and tasks, notes, "
        "tracks, friction, lessons and days added, removed or renamed by hand; an existing file "
        "edited by hand (in place, or anything inside a task folder) shows up after "
        "'ouro index sync', or at once while 'ouro watch' runs.",
        input_model="ouro.index.tools:DeskSearchInput",
        cli=("desk", "search"),
        read_only=True,
        idempotent=True,
        args=("query",),
        render="ouro.index.search:render",
    ),
    Tool(
        description="Consult the diary: facts and daily reflections matching a query, or the "
        "newest ones when no query is given. Superseded facts are hidden unless history is set.",
        input_model="ouro.index.tools:ConsultDiaryInput",
        cli=("diary", "consult"),
        read_only=True,
        idempotent=True,
        args=("query",),
        render="ouro.index.search:render",
    ),
    Tool(
        description="Search diary facts by their text and the entities they are about "
        "(active facts only).",
        input_model="ouro.index.tools:SearchFactsInput",
        cli=("facts", "search"),
        read_only=True,
        idempotent=True,
        args=("query",),
        render="ouro.index.search:render",
    ),
    Tool(
        description="Consult the record's notes: find reference notes by words in their title, "
        "tags and body.",
        input_model="ouro.index.tools:ConsultNotesInput",
        cli=("notes", "consult"),
        read_only=True,
        idempotent=True,
        args=("query",),
        render="ouro.index.search:render",
    ),
    Tool(
        description="Create a Desk track (a folder desk/<name>/ with track.md) to group tasks; adding an existing track returns it unchanged.",
        input_model="ouro.desk.api:TrackAddInput",
        cli=("desk", "track", "add"),
        read_only=False,
        idempotent=True,
        args=("name",),
        render="ouro.cli.render:track_written",
    ),
    Tool(
        description="Add a task to a track: writes desk/<track>/<slug>/task.md with status open, priority, acceptance text and a check command.",
        input_model="ouro.desk.api:TaskAddInput",
        cli=("desk", "task", "add"),
        read_only=False,
        args=("track", "title"),
        files={"body": "--body-file"},
        render="ouro.cli.render:task_written",
    ),
    Tool(
        description="Update a task's status, priority, title, acceptance, check, files or body; status changes are recorded in the task's history. While another agent holds a live lease the update is refused (take_over takes it). Done needs a passing observed run of the task's check newer than any change to its files, or unverified with a reason.",
        input_model="ouro.desk.api:TaskUpdateInput",
        cli=("desk", "task", "update"),
        read_only=False,
        destructive=True,  # replaces the earlier text in place
        idempotent=True,
        args=("task",),
        files={"body": "--body-file"},
        render="ouro.cli.render:task_written",
    ),
    Tool(
        description="List tasks (optionally one track or one status), most urgent first, with their locators and lease holders.",
        input_model="ouro.desk.api:TaskListInput",
        cli=("desk", "task", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:task_list",
    ),
    Tool(
        description="Show one task: its front matter, body, lease history and iteration locators.",
        input_model="ouro.desk.api:TaskShowInput",
        cli=("desk", "task", "show"),
        read_only=True,
        idempotent=True,
        args=("task",),
        render="ouro.cli.render:task_show",
    ),
    Tool(
        description="Take a task with a lease (default 30m; agent defaults to the bundle's agent): exactly one agent holds it; the holder renews; a live lease held by another is refused naming holder and expiry unless take_over; every takeover is recorded.",
        input_model="ouro.desk.api:TaskTakeInput",
        cli=("desk", "task", "take"),
        read_only=False,
        args=("task",),
        render="ouro.cli.render:task_written",
    ),
    Tool(
        description="Release a task's lease (only its holder may) so others can take it.",
        input_model="ouro.desk.api:TaskReleaseInput",
        cli=("desk", "task", "release"),
        read_only=False,
        args=("task",),
        render="ouro.cli.render:task_written",
    ),
    Tool(
        description="Ready work: open tasks whose blockedBy tasks are all done and that no live lease holds, most urgent (priority 0) first, then oldest; optionally one track. Also lists open tasks still waiting and on what. Writes nothing.",
        input_model="ouro.desk.api:ReadyInput",
        cli=("desk", "ready"),
        read_only=True,
        idempotent=True,
        render="ouro.desk.render:render_ready",
    ),
    Tool(
        description="Take advisory locks on the files or folders you are changing (all or none): another agent's live lock on an overlapping path (equal, or a folder holding it) is a conflict naming holder, reason and expiry; your own are renewed; expired locks are swept. Locks end at their ttl.",
        input_model="ouro.locks.api:LockTakeInput",
        cli=("lock", "take"),
        read_only=False,
        args=("paths",),
        render="ouro.locks.api:render_locks",
    ),
    Tool(
        description="Release your path locks (the named paths, or all of yours); another agent's live lock is refused.",
        input_model="ouro.locks.api:LockReleaseInput",
        cli=("lock", "release"),
        read_only=False,
        idempotent=True,
        args=("paths",),
        render="ouro.locks.api:render_locks",
    ),
    Tool(
        description="List live path locks (optionally those overlapping one path): path, holder, reason, expiry. Expired locks are ignored. Writes nothing.",
        input_model="ouro.locks.api:LockListInput",
        cli=("lock", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.locks.api:render_locks",
    ),
    Tool(
        description="Send a typed message (question, answer, status, handoff, blocker; optionally about a task) to another agent: appended to the inbox of the peer's bundle (ouro message peer). The text is redacted and size-limited; a peer that cannot be reached leaves it queued with the reason (retried by every send and by 'ouro message retry'), never lost.",
        input_model="ouro.messages.api:MessageSendInput",
        cli=("message", "send"),
        read_only=False,
        args=("agent", "text"),
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="Reply to a message in your inbox: sent to its sender (kind answer by default), linked by replyTo, and the message is marked read.",
        input_model="ouro.messages.api:MessageReplyInput",
        cli=("message", "reply"),
        read_only=False,
        args=("message_id", "text"),
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="Read your unread messages (or one by id) and mark them read.",
        input_model="ouro.messages.api:MessageReadInput",
        cli=("message", "read"),
        read_only=False,
        args=("message_id",),
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="List the messages in your inbox (read and unread) and your queued outgoing messages with the reason each is queued. Writes nothing.",
        input_model="ouro.messages.api:MessageListInput",
        cli=("message", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="Say where a peer agent's bundle is on this machine, so messages to it are delivered to its inbox.",
        input_model="ouro.messages.api:MessagePeerInput",
        cli=("message", "peer"),
        read_only=False,
        args=("agent", "bundle"),
        idempotent=True,
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="Try every queued outgoing message again.",
        input_model="ouro.messages.api:MessageRetryInput",
        cli=("message", "retry"),
        read_only=False,
        render="ouro.messages.api:render_message",
    ),
    Tool(
        description="Run a task's declared check (a shell command) like a CI step: in the repository root, with a timeout and secrets scrubbed from the environment; records an observed-by-ouro receipt in the task's history (exit status, duration, output digest, redacted tail) that 'status done' requires. Exits 1 when the check fails. A check not written through ouro here needs yes.",
        input_model="ouro.desk.api:TaskVerifyInput",
        cli=("desk", "task", "verify"),
        read_only=False,
        destructive=True,  # the check is an arbitrary shell command
        open_world=True,
        args=("task",),
        render="ouro.desk.render:render_task_verify",
        exit_status="ouro.desk.render:task_verify_exit",
    ),
    Tool(
        description="Record an iteration of work on a task as <task>/iterations/NNN.md.",
        input_model="ouro.desk.api:IterationAddInput",
        cli=("desk", "iteration", "add"),
        read_only=False,
        args=("task", "text"),
        render="ouro.cli.render:iteration_written",
    ),
    Tool(
        description="File a friction entry (something that got in the way) under desk/_friction/.",
        input_model="ouro.desk.api:FrictionAddInput",
        cli=("desk", "friction", "add"),
        read_only=False,
        args=("title",),
        files={"body": "--body-file"},
        render="ouro.cli.render:friction_written",
    ),
    Tool(
        description="List friction entries, newest first.",
        input_model="ouro.desk.api:FrictionListInput",
        cli=("desk", "friction", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:friction_list",
    ),
    Tool(
        description="Write a lesson (a tip: short advice learned for later sessions) under desk/_meta/tips/ (same title updates it); the packet lists the newest.",
        input_model="ouro.desk.api:TipAddInput",
        cli=("desk", "tip", "add"),
        read_only=False,
        destructive=True,  # replaces the earlier text in place
        idempotent=True,
        args=("title",),
        options={"tags": "--tag"},
        files={"body": "--body-file"},
        render="ouro.cli.render:tip_written",
    ),
    Tool(
        description="List tips, optionally only those with a tag.",
        input_model="ouro.desk.api:TipListInput",
        cli=("desk", "tip", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:tip_list",
    ),
    Tool(
        description="Feature tracks, tasks, notes and lessons in desk/_meta/featured.md so orientation shows them first (or remove them with --remove).",
        input_model="ouro.desk.api:FeatureInput",
        cli=("desk", "feature"),
        read_only=False,
        idempotent=True,
        options={"tracks": "--track", "tasks": "--task", "notes": "--note", "lessons": "--lesson"},
        render="ouro.cli.render:feature_written",
    ),
    Tool(
        description="Write a diary entry (a fact) to desk/_record/diary/facts.jsonl with provenance; exact duplicates are returned, near-duplicates refused unless forced, --supersedes corrects an earlier fact.",
        input_model="ouro.desk.record_inputs:DiaryWriteInput",
        cli=("diary", "write"),
        read_only=False,
        args=("text",),
        options={"about": "--about"},
        render="ouro.cli.render:fact_written",
    ),
    Tool(
        description="Append a daily reflection to desk/_record/diary/daily/YYYY-MM-DD.md.",
        input_model="ouro.desk.record_inputs:DiaryReflectInput",
        cli=("diary", "reflect"),
        read_only=False,
        args=("text",),
        render="ouro.cli.render:reflection_written",
    ),
    Tool(
        description="Write a reference note to desk/_record/notes/<slug>.md (same title updates it) and refresh the notes manifest.",
        input_model="ouro.desk.record_inputs:NotesWriteInput",
        cli=("notes", "write"),
        read_only=False,
        destructive=True,  # replaces the earlier text in place
        idempotent=True,
        args=("title",),
        options={"tags": "--tag"},
        files={"body": "--body-file"},
        render="ouro.cli.render:note_written",
    ),
    Tool(
        description="Take a secret out of a record for good: rewrite the file (or one JSONL "
        "record, 'file.jsonl#id') atomically with every occurrence of --match replaced by "
        "[redacted:manual], keep no copy (the search index is dropped for rebuild), and record "
        "an Arc event naming where, never what.",
        input_model="ouro.arc.scrub:RedactInput",
        cli=("record", "redact"),
        read_only=False,
        destructive=True,
        idempotent=False,
        args=("locator",),
        render="ouro.arc.scrub:render_redacted",
    ),
    # --- sentinel ----------------------------------------------------------
    Tool(
        description="Run the recovery gauntlet (current ask, next safe action, stale guard, "
        "obligations, return routes, blockers, Desk record, source provenance), run the "
        "bundle's declared readiness checks and keep their results (the provider lane), read "
        "the sync state, add the outside signals you pass (provider lane, sense), and write one "
        "sentinel receipt: verdict ready|watch|blocked, score, recovery anchor.",
        input_model="ouro.sentinel.api:RefreshInput",
        cli=("sentinel", "refresh"),
        read_only=False,
        options={"signals": "--signal"},
        render="ouro.sentinel.api:render_refresh",
        exit_status="ouro.cli.exits:sentinel_exit",
    ),
    Tool(
        description="Read the latest sentinel receipt: verdict, recovery anchor (latest ready "
        "receipt or the current blocker), failing checks and signals with repair commands. "
        "Writes nothing.",
        input_model="ouro.sentinel.api:StatusInput",
        cli=("sentinel", "status"),
        read_only=True,
        idempotent=True,
        render="ouro.sentinel.api:render_sentinel_status",
        exit_status="ouro.cli.exits:sentinel_exit",
    ),
    Tool(
        # the drill names come from the one catalog the validator and the runner read
        description="Run recovery drills ("
        + ", ".join(DRILL_NAMES)
        + "), each on a temporary copy of the bundle, then record one sentinel receipt with "
        "the results. Fails (exit 1) naming each broken guarantee and where to look.",
        input_model="ouro.sentinel.api:DrillInput",
        cli=("drill",),
        read_only=False,
        args=("names",),
        render="ouro.sentinel.api:render_drill",
        exit_status="ouro.cli.exits:drill_exit",
    ),
    # --- habits ------------------------------------------------------------
    Tool(
        description="List the bundle's habits (habits/<name>.yaml) with cadence, status, whether each is due and its last run; invalid definitions are listed with file, field and reason.",
        input_model="ouro.habits.api:HabitListInput",
        cli=("habits", "list"),
        read_only=True,
        idempotent=True,
        render="ouro.cli.render:habit_list",
    ),
    Tool(
        description="Run a habit now in a private session (trigger manual or poke): the body gets the orientation packet, its outcome is derived from what it changed, and a receipt is written to arc/flight-recorder/habit-receipts/.",
        input_model="ouro.habits.api:HabitRunInput",
        cli=("habits", "run"),
        read_only=False,
        destructive=True,  # the habit body is an arbitrary command
        open_world=True,
        args=("name",),
        render="ouro.habits.api:render_receipt",
        exit_status="ouro.cli.exits:habit_exit",
    ),
    Tool(
        description="From inside a habit session, send a message to family, the habit's originator or an allowed recipient, for a concrete reason; checked against the session's permission envelope, delivered by the channel's sense or queued in arc/outbox/, and recorded in the run's receipt.",
        input_model="ouro.habits.surface:SurfaceInput",
        cli=("surface",),
        read_only=False,
        args=("text",),
        render="ouro.habits.surface:render_surface",
    ),
)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def get(name: str) -> Tool:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise NotFound(
            f"no tool named {name!r}", hint="known tools: " + ", ".join(sorted(_BY_NAME))
        ) from None


#: old input field names -> the library's (``--session`` / ``--turn``)
_RENAMED = {"session_ref": "session", "turn_id": "turn"}


def invoke(name: str, bundle: Bundle, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Call the tool ``name`` through the library (``ouro.api.call``): validation,
    the habit-session tool policy and the warnings all happen there."""
    from ouro.api import call

    get(name)
    return call(name, bundle, {_RENAMED.get(k, k): v for k, v in arguments.items()})
