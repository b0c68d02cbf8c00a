"""Tool policy and permission envelope of a habit session; the tool gate.

Tool policy (requested vs granted vs denied):

- ``requested``: the habit's ``tools:`` list, or ``None`` when omitted;
- ``granted``: the requested tools (every registered tool when omitted) minus
  those ``bundle.json`` ``habits.deniedTools`` lists, minus ``habits_run``
  (habits do not start habits);
- ``denied``: every other registered tool, each with the reason it is denied.

The runner passes the policy to the body as ``OURO_GRANTED_TOOLS`` and
``OURO_DENIED_TOOLS`` (comma-separated) and writes it with the reasons to
``state/sessions/<id>/policy.json``. ``ouro.api.call`` calls ``enforce``
whenever those variables are set, so every ouro tool call inside the session
(CLI or MCP) is checked in one place; a refusal raises ``ToolDenied`` naming
the reason and is appended to the session's ``tool-refusals.jsonl`` so the
run's receipt lists it under ``toolPolicy.refusedCalls``.

``session_policy`` reads a live session's ``policy.json`` back: it is what
``ouro mcp --session ID`` serves (the granted tools, plus the denied ones the
habit asked for, listed as denied), and the server gates each call by it --
the file the runner wrote, not variables an agent could drop.

Permission envelope: who the session may surface to (family, the habit's
originator, its explicit extra recipients — the seed's defaults), and whether
it can message outward at all. It is an allowed-recipient set, not a policy
engine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, NotFound, ToolDenied
from ouro.habits.config import HabitsConfig
from ouro.habits.definition import Habit
from ouro.habits.receipt import PermissionEnvelope, ReturnRoute, ToolPolicy
from ouro.lane import ENV_HABIT, ENV_SESSION, runner_session
from ouro.models.clock import utc_now_iso
from ouro.models.ids import is_id
from ouro.store import jsonio
from ouro.store.bounded import file_bytes
from ouro.store.jsonl import append_jsonl

ENV_GRANTED = "OURO_GRANTED_TOOLS"
ENV_DENIED = "OURO_DENIED_TOOLS"
ALWAYS_DENIED = {"habits_run": "habits do not start habits"}
REFUSALS_FILE = "tool-refusals.jsonl"
POLICY_FILE = "policy.json"


def registered_tools() -> list[str]:
    from ouro.registry import TOOLS  # plain data: imports no verb

    return [tool.name for tool in TOOLS if tool.agent]


def tool_policy(habit: Habit, config: HabitsConfig) -> tuple[ToolPolicy, dict[str, str], list[str]]:
    """(policy, reason per denied tool, warnings). Outward messaging is settled
    by the envelope (``policy_and_envelope``)."""
    known = registered_tools()
    requested = habit.definition.tools
    warnings = [
        f"requested tool {name!r} is not a registered tool; ignored"
        for name in (requested or [])
        if name not in known
    ]
    candidates = known if requested is None else [t for t in known if t in requested]
    reasons: dict[str, str] = {}
    for name in known:
        if name in ALWAYS_DENIED:
            reasons[name] = ALWAYS_DENIED[name]
        elif name in config.denied_tools:
            reasons[name] = "denied to every habit by bundle.json habits.deniedTools"
        elif name not in candidates:
            reasons[name] = f"not in the tools: list of {habit.locator}"
    granted = [t for t in candidates if t not in reasons]
    denied = [t for t in known if t in reasons]
    policy = ToolPolicy(
        requested_tools=None if requested is None else list(requested),
        granted_tools=granted,
        denied_tools=denied,
        outward_messaging_allowed=False,
    )
    return policy, reasons, warnings


def permission_envelope(
    habit: Habit, config: HabitsConfig, denied_tools: list[str], warnings: list[str]
) -> PermissionEnvelope:
    d = habit.definition
    routes: list[ReturnRoute] = []
    if d.surface.family:
        routes.append(
            ReturnRoute(
                kind="family", recipient="family", status="allowed", channel=config.family_channel
            )
        )
    if d.surface.originator:
        origin = d.origin
        if origin.friend_id:
            routes.append(
                ReturnRoute(
                    kind="originator",
                    recipient=origin.friend_id,
                    status="allowed",
                    friend_id=origin.friend_id,
                    channel=origin.channel,
                    key=origin.key,
                )
            )
        else:
            routes.append(
                ReturnRoute(
                    kind="originator",
                    recipient="originator",
                    status="unresolved",
                    reason=f"{habit.locator} has no origin.friendId",
                )
            )
    for extra in d.surface.extra:
        routes.append(
            ReturnRoute(
                kind="extra",
                recipient=extra.friend_id,
                status="allowed",
                friend_id=extra.friend_id,
                channel=extra.channel,
                key=extra.key,
            )
        )
    notes = list(warnings) + list(config.warnings)
    notes += [f"return route {r.recipient!r}: {r.reason}" for r in routes if r.reason]
    can_message = any(r.status == "allowed" for r in routes)
    if can_message and "surface" in denied_tools:
        notes.append("the surface tool is denied, so no route can be used")
    return PermissionEnvelope(
        can_message_outward=can_message and "surface" not in denied_tools,
        return_routes=routes,
        denied_tools=denied_tools,
        warnings=notes,
    )


def policy_and_envelope(
    habit: Habit, config: HabitsConfig
) -> tuple[ToolPolicy, dict[str, str], PermissionEnvelope]:
    """The tool policy (with reasons) and the permission envelope of a run."""
    policy, reasons, warnings = tool_policy(habit, config)
    envelope = permission_envelope(habit, config, policy.denied_tools, warnings)
    policy.outward_messaging_allowed = envelope.can_message_outward
    return policy, reasons, envelope


def session_dir(bundle: Bundle, session_id: str) -> Path | None:
    """``state/sessions/<id>/`` for a well-formed session id (never a path escape)."""
    if not is_id(session_id, "hs"):
        return None
    return bundle.state / "sessions" / session_id


def enforce(name: str, bundle: Bundle, env: Mapping[str, str] | None = None) -> None:
    """Refuse ``name`` when the current habit session's policy denies it."""
    env = os.environ if env is None else env
    denied = _split(env.get(ENV_DENIED))
    granted_raw = env.get(ENV_GRANTED)
    granted = None if granted_raw is None else _split(granted_raw)
    if name not in denied and (granted is None or name in granted):
        return
    session_id = env.get(ENV_SESSION, "")
    habit = env.get(ENV_HABIT, "?")
    reason = _reason(bundle, session_id, name)
    _record_refusal(bundle, session_id, name, reason)
    raise ToolDenied(
        f"tool {name} is denied in habit session {session_id or '?'} (habit {habit}): {reason}",
        hint=f"granted here: {', '.join(sorted(granted or [])) or 'none'}; to use {name}, "
        f"add it to the tools: list in habits/{habit}.yaml (unless bundle.json denies it)",
    )


def _split(text: str | None) -> set[str]:
    return {part.strip() for part in (text or "").split(",") if part.strip()}


def _reason(bundle: Bundle, session_id: str, name: str) -> str:
    folder = session_dir(bundle, session_id)
    if folder is not None:
        try:
            data = jsonio.loads(file_bytes(folder / POLICY_FILE))
            reason = data.get("reasons", {}).get(name)
            if isinstance(reason, str):
                return reason
        except (OSError, jsonio.JSONDecodeError, AttributeError):
            pass  # the generic reason below still says why
    return "not granted to this habit session"


def _record_refusal(bundle: Bundle, session_id: str, name: str, reason: str) -> None:
    folder = session_dir(bundle, session_id)
    if folder is None or not folder.is_dir():
        return  # not a live habit session of this bundle: nothing to attach it to
    append_jsonl(folder / REFUSALS_FILE, [{"tool": name, "at": utc_now_iso(), "reason": reason}])


def refuse_inside_habit(what: str, env: Mapping[str, str] | None = None) -> None:
    """Habits do not start habits: refuse ``what`` inside a habit session."""
    inside = runner_session(env)
    if inside is not None:
        raise ToolDenied(
            f"{what} refused inside habit session {inside[0]} (habit {inside[1]}): "
            "habits do not start habits",
            hint="let the scheduler run 'ouro habits tick'; a habit body writes to Arc or Desk",
        )


@dataclass(frozen=True)
class SessionPolicy:
    """The tool policy of one live habit session, as its runner wrote it
    (``state/sessions/<id>/policy.json``): what ``ouro mcp --session ID`` serves."""

    session_id: str
    habit: str
    granted: tuple[str, ...]
    denied: tuple[str, ...]
    reasons: dict[str, str]

    @property
    def shown_denied(self) -> tuple[str, ...]:
        """Denied tools the server still lists (marked denied, refused when called):
        the ones the habit asked for or every habit is denied, never the many it
        simply did not ask for."""
        return tuple(
            name
            for name in self.denied
            if not self.reasons.get(name, "").startswith("not in the tools: list")
        )

    def env(self) -> dict[str, str]:
        """The variables that make this process write for the session (``ouro.lane``)
        and gate every call by its policy (``enforce``)."""
        return {
            ENV_SESSION: self.session_id,
            ENV_HABIT: self.habit,
            ENV_GRANTED: ",".join(self.granted),
            ENV_DENIED: ",".join(self.denied),
        }


def session_policy(bundle: Bundle, session_id: str) -> SessionPolicy:
    """The policy of the live session ``session_id``; refused when there is none."""
    folder = session_dir(bundle, session_id)
    if folder is None:
        raise InvalidInput(
            f"session: {session_id!r} is not a habit session id (hs-…)",
            hint="'ouro habits run NAME' starts a session and passes its id",
        )
    try:
        data = jsonio.loads(file_bytes(folder / POLICY_FILE))
        meta = jsonio.loads(file_bytes(folder / "session.json"))
    except (OSError, jsonio.JSONDecodeError) as exc:
        raise NotFound(
            f"habit session {session_id} is not live in this bundle ({exc})",
            hint="a session exists only while its habit runs; 'ouro habits last NAME'",
        ) from None
    reasons = data.get("reasons") if isinstance(data, dict) else None
    return SessionPolicy(
        session_id=session_id,
        habit=str(meta.get("habitName", "?")) if isinstance(meta, dict) else "?",
        granted=tuple(str(t) for t in data.get("grantedTools", [])),
        denied=tuple(str(t) for t in data.get("deniedTools", [])),
        reasons={str(k): str(v) for k, v in (reasons or {}).items()},
    )
