"""Habit definitions: ``habits/<name>.yaml`` (schedule inputs, not records).

Shape (keys camelCase, unknown keys refused so a typo fails loudly)::

    title: inbox triage            # required
    cadence: 30m                   # required: 30m | 2h | 1d | 1w | cron | @daily ...
    status: active                 # active | paused (default active)
    prompt: |                      # optional: what the agent should do, beyond the title
      read the inbox, file what matters
    agent: claude                  # claude | codex | pi | gemini | opencode
                                   # (default: ouro config habits.agent, else claude)
    run: python triage.py --quick  # optional: a scripted body instead of an agent
                                   # (a command line, no shell)
    timeout: 10m                   # seconds or 90s/10m/1h; default 10m, at most 1h
    keepTranscript: false          # keep the session folder and the host's transcript
    tools: [task_add, diary_fact]  # requested tools (optional; omitted = all)
    origin: {friendId: ari, channel: bluebubbles, key: thread-1}
    surface: {family: true, originator: true, extra: []}   # these are the defaults

``load_habits(bundle)`` reads every definition and never lets one bad file
stop the others: each problem is reported with its file, field and reason.
Reading definitions is pure.

A habit without ``run:`` is done by an agent (``ouro.habits.agents``): its
title and ``prompt:`` are the instructions. ``run:`` and ``agent:`` together
are refused (one body per habit).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput, NotFound
from ouro.habits.cadence import Cadence, CadenceError, parse_cadence
from ouro.store.bounded import read_text
from ouro.store.frontmatter import load_yaml

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
DEFAULT_TIMEOUT = 600
MAX_TIMEOUT = 3600
#: a definition file is read up to this many characters (``ouro.store.bounded``)
DEFINITION_LIMIT = 100_000
_DURATION = re.compile(r"^(\d{1,5})([smh]?)$")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}
AGENTS = ("claude", "codex", "pi", "gemini", "opencode")
#: the instructions a habit's ``prompt:`` may carry, in characters
PROMPT_LIMIT = 20_000
AgentName = Literal["claude", "codex", "pi", "gemini", "opencode"]


class _Strict(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Origin(_Strict):
    friend_id: str | None = None
    channel: str | None = None
    key: str | None = None


class ExtraRecipient(_Strict):
    """An explicit recipient; written in YAML as a name or as a mapping."""

    friend_id: str = Field(min_length=1)
    channel: str | None = None
    key: str | None = None


class SurfacePolicy(_Strict):
    family: bool = True
    originator: bool = True
    extra: list[ExtraRecipient] = Field(default_factory=list)

    @field_validator("extra", mode="before")
    @classmethod
    def _names_as_recipients(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"friendId": v} if isinstance(v, str) else v for v in value]
        return value


class HabitDefinition(_Strict):
    title: str = Field(min_length=1)
    cadence: str
    status: Literal["active", "paused"] = "active"
    run: list[str] | None = None
    prompt: str | None = Field(None, max_length=PROMPT_LIMIT)
    agent: AgentName | None = None
    keep_transcript: bool = False
    timeout: int = DEFAULT_TIMEOUT
    tools: list[str] | None = None
    origin: Origin = Field(default_factory=Origin)
    surface: SurfacePolicy = Field(default_factory=SurfacePolicy)

    @field_validator("cadence", mode="before")
    @classmethod
    def _cadence(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                parse_cadence(value)
            except CadenceError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("run", mode="before")
    @classmethod
    def _run(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = shlex.split(value)
            except ValueError as exc:
                raise ValueError(f"cannot split the command line ({exc})") from None
        if isinstance(value, list) and not value:
            raise ValueError("the body command is empty")
        return value

    @model_validator(mode="after")
    def _one_body(self) -> HabitDefinition:
        if self.run is not None and self.agent is not None:
            raise ValueError("give either run: (a scripted body) or agent: (an agent does it)")
        return self

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: Any) -> Any:
        if isinstance(value, str):
            match = _DURATION.match(value.strip())
            if not match:
                raise ValueError(f"{value!r} is not a duration (use seconds, 90s, 10m or 1h)")
            value = int(match.group(1)) * _SECONDS[match.group(2)]
        if isinstance(value, int) and not 1 <= value <= MAX_TIMEOUT:
            raise ValueError(f"{value}s is outside 1s..{MAX_TIMEOUT}s")
        return value


@dataclass(frozen=True)
class Habit:
    name: str
    path: Path
    locator: str
    definition: HabitDefinition
    cadence: Cadence
    modified_at: datetime  # anchor for a habit that never ran

    def summary(self) -> dict[str, Any]:
        d = self.definition
        return {
            "name": self.name,
            "title": d.title,
            "cadence": d.cadence,
            "cadenceKind": self.cadence.kind,
            "status": d.status,
            "run": d.run,
            "agent": d.agent,
            "prompt": d.prompt,
            "keepTranscript": d.keep_transcript,
            "timeoutSeconds": d.timeout,
            "tools": d.tools,
            "origin": d.origin.model_dump(by_alias=True, exclude_none=True),
            "surface": d.surface.model_dump(by_alias=True, exclude_none=True),
            "definitionLocator": self.locator,
        }


@dataclass(frozen=True)
class DefinitionProblem:
    file: str
    field: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "field": self.field, "reason": self.reason}

    def describe(self) -> str:
        return f"{self.file}: {self.field}: {self.reason}"


@dataclass(frozen=True)
class HabitSet:
    habits: list[Habit]
    problems: list[DefinitionProblem]

    def get(self, name: str) -> Habit:
        for habit in self.habits:
            if habit.name == name:
                return habit
        for problem in self.problems:
            if Path(problem.file).stem == name:
                raise InvalidInput(
                    f"habit {name!r} has an invalid definition: {problem.describe()}",
                    hint=f"fix {problem.file}; 'ouro habits list' shows every problem",
                )
        known = ", ".join(h.name for h in self.habits) or "none"
        raise NotFound(
            f"no habit named {name!r} (habits: {known})",
            hint="define one in habits/<name>.yaml; 'ouro habits list' shows them",
        )


def definition_files(bundle: Bundle) -> list[Path]:
    if not bundle.habits.is_dir():
        return []
    return sorted(
        p for p in bundle.habits.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()
    )


def load_habit_file(bundle: Bundle, path: Path) -> Habit | list[DefinitionProblem]:
    """One definition, or the problems that stop it from being one."""
    locator = f"habits/{path.name}"
    name = path.stem
    if not NAME.match(name):
        return [
            DefinitionProblem(
                locator,
                "(file name)",
                f"{name!r} is not a habit name (lowercase letters, digits, '-', '_'; "
                "at most 64, starting with a letter or digit)",
            )
        ]
    try:
        text = read_text(path, limit=DEFINITION_LIMIT, what=locator)
    except InvalidInput as exc:  # a device, a FIFO, too long, not UTF-8: never read whole
        return [DefinitionProblem(locator, "(file)", exc.message)]
    try:
        raw = load_yaml(text, source=locator)
    except CorruptFile as exc:
        return [DefinitionProblem(locator, "(yaml)", exc.message)]
    if not isinstance(raw, dict):
        return [DefinitionProblem(locator, "(document)", "must be a mapping of keys to values")]
    try:
        definition = HabitDefinition.model_validate(raw)
    except ValidationError as exc:
        return [
            DefinitionProblem(
                locator,
                ".".join(str(p) for p in err["loc"]) or "(document)",
                err["msg"].removeprefix("Value error, "),
            )
            for err in exc.errors()
        ]
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return Habit(name, path, locator, definition, parse_cadence(definition.cadence), modified)


def load_habits(bundle: Bundle) -> HabitSet:
    habits: list[Habit] = []
    problems: list[DefinitionProblem] = []
    seen: dict[str, str] = {}
    for path in definition_files(bundle):
        if path.stem in seen:
            problems.append(
                DefinitionProblem(
                    f"habits/{path.name}",
                    "(file name)",
                    f"habit {path.stem!r} is also defined by {seen[path.stem]}; keep one",
                )
            )
            continue
        seen[path.stem] = f"habits/{path.name}"
        loaded = load_habit_file(bundle, path)
        if isinstance(loaded, Habit):
            habits.append(loaded)
        else:
            problems.extend(loaded)
    return HabitSet(habits, problems)


def definition_locator(name: str) -> str:
    return f"habits/{name}.yaml"
