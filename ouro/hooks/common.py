"""What every host shares: the stdin contract, the reply shape, fail-open running.

- ``parse_input(text)`` reads the host's JSON object. Only the fields ouro
  needs are kept; the prompt text of ``UserPromptSubmit`` is never read into
  the result, so it cannot reach a file.
- ``Reply`` is what a handler wants to say (context for the model, a message
  for the user, a block reason); ``shape(host, event, reply)`` keeps only what
  the host accepts for that event and returns the JSON object (or ``None`` for
  silence: no stdout at all, which both hosts accept for every event).
- ``run_hook`` never raises (unless ``OURO_DEBUG=1``) and always lets the
  host continue (fail open). A hook that cannot do its job (no bundle, an
  unreadable or legacy bundle, bad stdin, an internal error) says so *visibly*,
  once per host session: one line naming what is wrong and the command that
  fixes it, as ``systemMessage`` (shown to the user) and, on the events that
  take model context, as ``additionalContext`` (so the model can tell the
  user). The same line always goes to stderr. Whether a session was already
  told is kept in ``notices.py``'s marker files (outside any bundle: there may
  be none).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ouro.bundle import Bundle, Found
from ouro.edge import SHORT, check_text
from ouro.errors import InvalidInput, OuroError
from ouro.store import jsonio

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

# Every host event starts a process: this module imports neither ``dataclasses``
# nor orjson (together ~20 ms of start-up, ``bench/onepath.py``). The input is
# parsed by ``ouro.store.jsonio`` (orjson's rules) and the reply encoded by
# ``dumps``, which writes the bytes ``orjson.dumps`` writes for these objects.

#: The host tools that run a shell command (Claude Code's ``Bash``, Codex's shell tools).
SHELL_TOOLS = frozenset(
    {"Bash", "bash", "shell", "exec_command", "local_shell", "run_shell_command"}
)
#: The events ouro handles, by their host names (both hosts use the same ones).
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")
#: Events a dry run answers (their handlers write nothing when ``Options.dry_run``).
DRY_EVENTS = frozenset({"SessionStart", "Stop"})
#: Tool events (``ouro.hooks.posttool``): a host reports a command it ran.
#: Each host installs the ones it has (``Host.tool_events``).
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure", "PreToolUse")


class Host(NamedTuple):
    """One host's hook contract, as far as ouro uses it (see docs/hooks.md)."""

    name: str  # "claude" | "codex": the CLI word and the state-file prefix
    title: str  # for people: "Claude Code" | "Codex"
    #: events whose JSON output may carry ``hookSpecificOutput.additionalContext``
    context_events: frozenset[str]
    #: events whose output the host ignores entirely (ouro prints nothing there)
    silent_events: frozenset[str]
    #: the most characters ouro injects at once on an event without a row in
    #: ``ouro.hooks.budget.BUDGETS`` (the host's own caps are there)
    context_limit: int
    #: project-relative settings file that ``ouro hook install`` edits
    settings_file: str
    #: matcher to install per event (events without one get no matcher key)
    matchers: Mapping[str, str]
    #: seconds the host may wait for each event's hook (within the host's caps)
    timeouts: Mapping[str, int]
    #: project file the operating guide block goes into (``ouro hook install --guide``)
    guide_file: str
    #: tool events this host has (installed after ``EVENTS``)
    tool_events: tuple[str, ...] = ()
    #: the host's own name for an ouro event it calls otherwise (Gemini CLI's
    #: ``BeforeAgent`` for ``UserPromptSubmit``): the config key, the command word
    #: and the stdin ``hook_event_name``; the reply's ``hookEventName`` too
    names: Mapping[str, str] = {}
    #: the config's timeout unit per second: 1 (seconds) or 1000 (milliseconds)
    timeout_scale: int = 1
    #: print a JSON object for every event, ``{}`` when there is nothing to say
    #: (a host that reads stderr as the reply when stdout is empty)
    always_json: bool = False

    @property
    def events(self) -> tuple[str, ...]:
        return EVENTS + self.tool_events

    def host_event(self, event: str) -> str:
        """The host's name for ouro event ``event``."""
        return self.names.get(event, event)

    def ouro_event(self, word: str) -> str | None:
        """The ouro event for a host's event word (its own name or ouro's), or None."""
        flat = word.replace("-", "").replace("_", "").lower()
        for event, name in self.names.items():
            if name.lower() == flat:
                return event
        return normalize_event(word)


class HookInput(NamedTuple):
    """The fields ouro reads from the host's stdin object."""

    event: str | None
    session_id: str | None
    cwd: str | None
    source: str | None = None  # SessionStart: startup|resume|clear|compact
    trigger: str | None = None  # PreCompact: manual|auto
    reason: str | None = None  # SessionEnd
    turn_id: str | None = None  # Codex supplies one per turn
    model: str | None = None
    stop_hook_active: bool = False
    #: PostToolUse / PostToolUseFailure only: the raw tool fields, read by
    #: ``ouro.hooks.posttool`` (which keeps a digest and a redacted tail of any
    #: output, never the output)
    tool: Mapping[str, Any] | None = None
    #: the host's session transcript as the payload names it; read only when it
    #: is the host's own file (``ouro.hooks.transcript.trusted_path``)
    transcript_path: str | None = None


class Reply:
    """What a handler wants to say; handlers fill it in as they go."""

    __slots__ = ("block_reason", "context", "system_message", "warnings")

    def __init__(
        self,
        context: str | None = None,  # for the model (additionalContext)
        system_message: str | None = None,  # for the user
        block_reason: str | None = None,  # Stop only: keep the agent working
        warnings: list[str] | None = None,  # one line each, to stderr
    ) -> None:
        self.context = context
        self.system_message = system_message
        self.block_reason = block_reason
        self.warnings: list[str] = [] if warnings is None else warnings

    def _fields(self) -> tuple[Any, ...]:
        return (self.context, self.system_message, self.block_reason, self.warnings)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reply) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return (
            f"Reply(context={self.context!r}, system_message={self.system_message!r}, "
            f"block_reason={self.block_reason!r}, warnings={self.warnings!r})"
        )


class Outcome:
    """What one hook run prints: stdout (the host JSON, or nothing) and stderr lines."""

    __slots__ = ("stderr", "stdout")

    def __init__(self, stdout: str = "", stderr: list[str] | None = None) -> None:
        self.stdout = stdout
        self.stderr: list[str] = [] if stderr is None else stderr


def dumps(payload: dict[str, Any]) -> str:
    """``payload`` as compact JSON, non-ASCII kept as is: the text ``orjson.dumps``
    gives for objects of strings, booleans, small integers, lists and objects."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


PATH_LIMIT = 4096  # PATH_MAX: the host's cwd
_STRING_FIELDS = {
    "hook_event_name": "event",
    "session_id": "session_id",
    "cwd": "cwd",
    "source": "source",
    "trigger": "trigger",
    "reason": "reason",
    "turn_id": "turn_id",
    "model": "model",
}


def parse_input(text: str) -> HookInput:
    """The hook input, or ``InvalidInput`` naming what is wrong with it."""
    if not text.strip():
        raise InvalidInput("hook stdin is empty", hint="the host must pipe its hook JSON to stdin")
    try:
        data = jsonio.loads(text)
    except jsonio.JSONDecodeError as exc:
        raise InvalidInput(
            f"hook stdin is not JSON ({exc})", hint="check the host hook config"
        ) from None
    if not isinstance(data, dict):
        raise InvalidInput("hook stdin must be a JSON object", hint="check the host hook config")
    values: dict[str, Any] = {}
    for key, attr in _STRING_FIELDS.items():
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"hook stdin field {key!r} must be a string, got {value!r:.40}")
        if value is not None:
            check_text(value, f"hook stdin field {key!r}", PATH_LIMIT if key == "cwd" else SHORT)
        values[attr] = value or None
    active = data.get("stop_hook_active", False)
    if not isinstance(active, bool):
        raise InvalidInput(
            f"hook stdin field 'stop_hook_active' must be true/false, got {active!r}"
        )
    tool = None
    if values.get("event") in TOOL_EVENTS or "tool_name" in data:
        tool = {
            k: data.get(k)
            for k in (
                "tool_name",
                "tool_input",
                "tool_response",
                "error",
                "is_interrupt",
                "tool_use_id",
            )
        }
    path = data.get("transcript_path")
    transcript = (
        path
        if isinstance(path, str) and 0 < len(path) <= PATH_LIMIT and "\x00" not in path
        else None
    )
    return HookInput(**values, stop_hook_active=active, tool=tool, transcript_path=transcript)


def shell_command(tool: Mapping[str, Any] | None) -> str | None:
    """The shell command a tool event reports, as the host sent it (an argv
    joined by spaces), or None when it is no shell tool or names no command."""
    if not tool or tool.get("tool_name") not in SHELL_TOOLS:
        return None
    tool_input = tool.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list):  # an argv
        command = " ".join(str(part) for part in command)
    if not isinstance(command, str) or not command.strip():
        return None
    return command


def normalize_event(word: str) -> str | None:
    """``SessionStart`` from any casing or ``session-start`` / ``session_start``."""
    flat = word.replace("-", "").replace("_", "").lower()
    for name in EVENTS + TOOL_EVENTS:
        if name.lower() == flat:
            return name
    return None


def locate_bundle(explicit: str | None, env: Mapping[str, str], inp: HookInput) -> Found:
    """Discovery (``Bundle.discover``) from the host's ``cwd``, not the process's."""
    cwd = Path(inp.cwd) if inp.cwd else None
    if cwd is not None and not cwd.is_absolute():
        cwd = Path.cwd() / cwd
    return Bundle.discover(explicit, env=env, cwd=cwd)


def shape(host: Host, event: str, reply: Reply) -> dict[str, Any] | None:
    """The JSON object to print for this host and event, or ``None`` for silence."""
    if event in host.silent_events:
        return {} if host.always_json else None
    out: dict[str, Any] = {}
    if event == "Stop" and reply.block_reason:
        out["decision"] = "block"
        out["reason"] = reply.block_reason
    if reply.system_message:
        out["systemMessage"] = reply.system_message
    if reply.context and event in host.context_events:
        from ouro.hooks.budget import cut, for_host

        out["hookSpecificOutput"] = {
            "hookEventName": host.host_event(event),
            # a guard: the packet builder already fitted it (ouro.hooks.packet)
            "additionalContext": cut(reply.context, for_host(host.name, event, host.context_limit)),
        }
    return out or ({} if host.always_json else None)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a line break, saying it was cut."""
    if len(text) <= limit:
        return text
    note = "\n[… cut to fit the hook budget; run 'ouro orient' for the whole packet]"
    room = max(0, limit - len(note))
    head = text[:room]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head + note


Handler = Callable[[Bundle, Host, HookInput, "Options"], Reply]


class Options(NamedTuple):
    block_on_debt: bool = False
    budget: int = 2500
    #: compute the reply but write nothing (``ouro hook doctor`` / install checks)
    dry_run: bool = False
    #: the hook's environment (inherited from the host): where the host keeps
    #: its transcripts (``ouro.hooks.transcript.host_folder``); None: ``os.environ``
    env: Mapping[str, str] | None = None


def one_line(text: str) -> str:
    return " ".join(text.split())


def describe(exc: OuroError) -> str:
    return one_line(exc.message + (f" (hint: {exc.hint})" if exc.hint else ""))


def run_hook(
    host: Host,
    event_word: str,
    stdin_text: str,
    *,
    bundle_path: str | None,
    env: Mapping[str, str] | None = None,
    options: Options | None = None,
    handlers: Mapping[str, Handler],
    unreadable: OuroError | None = None,
) -> Outcome:
    """Run one hook; never raises unless ``OURO_DEBUG=1``. Fails open.

    ``unreadable``: why the host's stdin could not be read or translated (too
    long, not UTF-8); the hook fails with that reason instead of parsing."""
    env = os.environ if env is None else env
    options = options or Options()
    prefix = f"ouro hook {host.name} {event_word}"
    outcome = Outcome()
    event = host.ouro_event(event_word)
    if event is None:
        known = ", ".join(host.host_event(e) for e in host.events)
        outcome.stderr.append(f"{prefix}: unknown event; ouro handles {known}")
        return outcome
    inp: HookInput | None = None
    try:
        if unreadable is not None:
            raise unreadable
        inp = parse_input(stdin_text)
        if inp.event is not None and host.ouro_event(inp.event) != event:
            raise InvalidInput(
                f"stdin says hook_event_name={inp.event!r} but the command is for "
                f"{host.host_event(event)}",
                hint=f"run 'ouro hook install {host.name}' to rewrite the hook config",
            )
        if inp.event is not None:
            inp = inp._replace(event=event)  # handlers read ouro's event names
        found = locate_bundle(bundle_path, env, inp)
        if options.dry_run:
            outcome.stderr.append(f"{prefix}: bundle {found.bundle.root} (found by {found.how})")
        if options.dry_run and event not in DRY_EVENTS:
            reply = Reply(warnings=[f"dry run: {event} is not simulated (it only writes)"])
        else:
            if options.env is None:
                options = options._replace(env=env)
            confirmed = [] if options.dry_run else _confirm_pending(found.bundle, host, inp, env)
            reply = handlers[event](found.bundle, host, inp, options)
            reply.warnings[:0] = confirmed
    except OuroError as exc:
        if inp is None and unreadable is None:  # told once per session, if its id is valid
            inp = _session_only(stdin_text)
        return _failed(outcome, host, event, inp, describe(exc), env, options, prefix)
    except OSError as exc:
        return _failed(outcome, host, event, inp, one_line(str(exc)), env, options, prefix)
    except Exception as exc:  # fail open for the host, but say what broke
        if env.get("OURO_DEBUG") == "1":
            raise
        reason = (
            f"internal error {type(exc).__name__}: {one_line(str(exc))} "
            f"(rerun with OURO_DEBUG=1 for the traceback)"
        )
        return _failed(outcome, host, event, inp, reason, env, options, prefix)
    outcome.stderr.extend(f"{prefix}: {one_line(w)}" for w in reply.warnings)
    payload = shape(host, event, reply)
    if payload is not None:
        outcome.stdout = dumps(payload) + "\n"
    return outcome


def _session_only(text: str) -> HookInput | None:
    """The input with only its ``session_id``, when that alone is valid (another field
    failed ``parse_input``): the failure notice is still shown once per session."""
    try:
        data = jsonio.loads(text)
    except jsonio.JSONDecodeError:
        return None
    session = data.get("session_id") if isinstance(data, dict) else None
    if not isinstance(session, str) or not session:
        return None
    try:
        check_text(session, "hook stdin field 'session_id'", SHORT)
    except InvalidInput:
        return None
    return HookInput(event=None, session_id=session, cwd=None)


def _confirm_pending(
    bundle: Bundle, host: Host, inp: HookInput, env: Mapping[str, str]
) -> list[str]:
    """Host receipts of this session still waiting for the host's transcript:
    checked again at every later hook event (a stat when there are none)."""
    from ouro.hooks import receipts

    if not receipts.has_pending(bundle, host.name, inp.session_id):
        return []
    from ouro.hooks.pending import confirm_pending

    return confirm_pending(bundle, host, inp, env)


#: The most characters a failure notice takes (it is one line, for people and the model).
NOTICE_LIMIT = 400


def notice_text(host: Host, reason: str) -> str:
    """The one line a session sees when ouro's hooks cannot do their job."""
    tail = (
        ". The ouro hooks recorded and injected nothing; check the install with "
        f"'ouro hook doctor {host.name}'."
    )
    room = NOTICE_LIMIT - len("ouro: ") - len(tail)
    if len(reason) > room:
        reason = reason[: room - 1] + "…"  # the fix command at the end always stays
    return f"ouro: {reason}{tail}"


def _failed(
    outcome: Outcome,
    host: Host,
    event: str,
    inp: HookInput | None,
    reason: str,
    env: Mapping[str, str],
    options: Options,
    prefix: str,
) -> Outcome:
    """Fail open, visibly: stderr always; the notice once per host session."""
    from ouro.hooks import notices

    outcome.stderr.append(f"{prefix}: nothing injected: {reason}")
    if event in host.silent_events:
        if host.always_json:
            outcome.stdout = "{}\n"
        return outcome  # the host shows nothing from this event
    session = inp.session_id if inp else None
    if not options.dry_run and not notices.first_time(host.name, session, env):
        if host.always_json:
            outcome.stdout = "{}\n"
        return outcome
    text = notice_text(host, reason)
    payload = shape(host, event, Reply(context=text, system_message=text))
    if payload is not None:
        outcome.stdout = dumps(payload) + "\n"
    return outcome
