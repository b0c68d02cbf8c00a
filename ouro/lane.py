"""Which lane a write belongs to: the main line, or a habit's private session.

A habit run (``ouro.habits.runner``) starts its body -- an agent or a ``run:``
command -- with ``OURO_SESSION_ID=hs-…`` and opens ``state/sessions/<id>/``
with its ``session.json``. While that folder is live, every write made in that
environment belongs to the habit's lane: Arc events carry the session as
``sessionRef`` and the habit in ``meta.habit`` (the resume fold keeps them out
of the main line's ask, next action and handoff), diary facts carry
``provenance.origin = "habit:<name>"`` and ``provenance.sessionRef``.

The habit's name is read from the session's own ``session.json`` (written by
the runner), never from a variable the body could change. A session id that is
malformed, or names no live session of this bundle, is no lane: the write is
the main line's, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ouro.models.ids import is_id
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ouro.tuples import NamedTuple

ENV_SESSION = "OURO_SESSION_ID"
ENV_HABIT = "OURO_HABIT"
SESSIONS = "state/sessions"


class HabitLane(NamedTuple):  # not a dataclass: orient imports this, and stays light
    session_id: str
    habit: str

    @property
    def origin(self) -> str:
        """How a record names where it came from: ``habit:<name>``."""
        return f"habit:{self.habit}"


def is_habit_session(ref: object) -> bool:
    """Does this ``sessionRef`` name a habit's private session (``hs-…``)?"""
    return isinstance(ref, str) and ref.startswith("hs-")


def runner_session(env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(session id, habit) when a habit's runner started this process, else None.

    Read from the variables alone (``OURO_SESSION_ID`` and ``OURO_HABIT``, both set
    by ``ouro.habits.session.body_env``), without a file: the cheap checks use it --
    habits do not start habits, and ouro's own host hooks do nothing inside a habit's
    session (``ouro.hooks.stdio``). Which lane a write belongs to is ``habit_lane``.
    """
    env = os.environ if env is None else env
    session_id, habit = env.get(ENV_SESSION), env.get(ENV_HABIT)
    return (session_id, habit) if session_id and habit else None


def habit_lane(root: Path, env: Mapping[str, str] | None = None) -> HabitLane | None:
    """The habit session this process writes for, or None (the main line)."""
    env = os.environ if env is None else env
    session_id = env.get(ENV_SESSION, "")
    if not session_id or not is_id(session_id, "hs"):
        return None
    try:
        meta = jsonio.loads(file_bytes(root / SESSIONS / session_id / "session.json"))
    except (OSError, jsonio.JSONDecodeError):
        return None
    habit = meta.get("habitName") if isinstance(meta, dict) else None
    if not isinstance(habit, str) or not habit:
        return None
    return HabitLane(session_id, habit)
