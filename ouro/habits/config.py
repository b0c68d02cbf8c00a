"""The habit settings a bundle may carry in ``bundle.json`` (all optional)::

    "habits": {"deniedTools": ["desk_delete"], "familyChannel": "bluebubbles"},
    "senses": {"bluebubbles": "bb-send --to {recipient} --text {text}"}

- ``habits.deniedTools``: tools no habit session may call, whatever it requests;
- ``habits.familyChannel``: the channel the ``family`` return route uses;
- ``senses``: channel -> command template used to deliver a surfaced message.
  The template is split like a shell command line, then ``{recipient}``,
  ``{text}``, ``{reason}``, ``{channel}``, ``{key}``, ``{habit}`` and
  ``{runId}`` are substituted inside each argument; it runs without a shell.

A malformed value is ignored with a warning (never a crash): the settings
narrow or route messaging, so "ignored" is stated in the run's envelope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ouro.bundle import Bundle
from ouro.store import jsonio
from ouro.store.bounded import file_bytes


@dataclass(frozen=True)
class HabitsConfig:
    denied_tools: frozenset[str] = frozenset()
    family_channel: str | None = None
    senses: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def read_config(bundle: Bundle) -> HabitsConfig:
    warnings: list[str] = []
    try:
        meta = jsonio.loads(file_bytes(bundle.meta_path))
    except (OSError, jsonio.JSONDecodeError) as exc:
        return HabitsConfig(warnings=(f"bundle.json unreadable; habit settings ignored ({exc})",))
    if not isinstance(meta, dict):
        return HabitsConfig(warnings=("bundle.json is not an object; habit settings ignored",))
    section = meta.get("habits", {})
    if not isinstance(section, dict):
        warnings.append("bundle.json habits: not an object; ignored")
        section = {}
    denied = section.get("deniedTools", [])
    if not (isinstance(denied, list) and all(isinstance(t, str) for t in denied)):
        warnings.append("bundle.json habits.deniedTools: not a list of tool names; ignored")
        denied = []
    family = section.get("familyChannel")
    if family is not None and not isinstance(family, str):
        warnings.append("bundle.json habits.familyChannel: not a string; ignored")
        family = None
    senses = meta.get("senses", {})
    if not (
        isinstance(senses, dict)
        and all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in senses.items())
    ):
        warnings.append("bundle.json senses: not a map of channel -> command; ignored")
        senses = {}
    return HabitsConfig(frozenset(denied), family or None, dict(senses), tuple(warnings))
