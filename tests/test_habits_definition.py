"""Habit definitions: shape, defaults, and problems named by file, field and reason."""

from __future__ import annotations

import pytest

from ouro.bundle import Bundle
from ouro.errors import InvalidInput, NotFound
from ouro.habits.config import read_config
from ouro.habits.definition import load_habits
from ouro.habits.policy import permission_envelope, tool_policy
from tests.conftest import run_ouro

SEED_EXAMPLE = """\
title: inbox triage
cadence: 30m
status: active
run: triage --quick "two words"
origin:
  friendId: ari
  channel: bluebubbles
  key: session-or-thread
surface:
  family: true
  originator: true
  extra: []
"""


def write(bundle: Bundle, name: str, text: str) -> None:
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / name).write_text(text, encoding="utf-8")


def test_the_seed_example_loads(bundle: Bundle) -> None:
    write(bundle, "triage.yaml", SEED_EXAMPLE)
    habits = load_habits(bundle)
    assert habits.problems == []
    [habit] = habits.habits
    d = habit.definition
    assert (habit.name, d.title, d.cadence, d.status) == ("triage", "inbox triage", "30m", "active")
    assert d.run == ["triage", "--quick", "two words"]
    assert d.timeout == 600 and d.tools is None
    assert (d.origin.friend_id, d.origin.channel, d.origin.key) == (
        "ari",
        "bluebubbles",
        "session-or-thread",
    )


def test_surface_defaults_when_omitted(bundle: Bundle) -> None:
    write(bundle, "min.yaml", "title: m\ncadence: '@daily'\nrun: [echo, hi]\ntimeout: 90s\n")
    [habit] = load_habits(bundle).habits
    assert (habit.definition.surface.family, habit.definition.surface.originator) == (True, True)
    assert habit.definition.surface.extra == []
    assert habit.definition.timeout == 90
    envelope = permission_envelope(habit, read_config(bundle), [], [])
    assert [(r.kind, r.status) for r in envelope.return_routes] == [
        ("family", "allowed"),
        ("originator", "unresolved"),
    ]
    assert envelope.can_message_outward is True


BAD = [
    ("a.yaml", "cadence: 30m\nrun: x\n", "title", "Field required"),
    (
        "b.yaml",
        "title: b\ncadence: '*/0 * * * *'\nrun: x\n",
        "cadence",
        "minute: step '0' must be a positive number",
    ),
    (
        "c.yaml",
        "title: c\ncadence: 1h\nrun: x\nstatus: sleeping\n",
        "status",
        "Input should be 'active' or 'paused'",
    ),
    (
        "d.yaml",
        "title: d\ncadence: 1h\nrun: 'x \"unclosed'\n",
        "run",
        "cannot split the command line (No closing quotation)",
    ),
    (
        "e.yaml",
        "title: e\ncadence: 1h\nrun: x\ntimeout: 2h\n",
        "timeout",
        "7200s is outside 1s..3600s",
    ),
    (
        "f.yaml",
        "title: f\ncadence: 1h\nrun: x\ntimeout: soon\n",
        "timeout",
        "'soon' is not a duration (use seconds, 90s, 10m or 1h)",
    ),
    (
        "g.yaml",
        "title: g\ncadence: 1h\nrun: x\ncadense: 2h\n",
        "cadense",
        "Extra inputs are not permitted",
    ),
    (
        "h.yaml",
        "title: h\ncadence: 1h\nrun: x\nsurface: {extra: [{channel: sms}]}\n",
        "surface.extra.0.friendId",
        "Field required",
    ),
    ("i.yaml", "title: [unclosed\n", "(yaml)", "habits/i.yaml:2: invalid YAML"),
    ("j.yaml", "- just\n- a list\n", "(document)", "must be a mapping of keys to values"),
    (
        "Bad Name.yaml",
        "title: x\ncadence: 1h\nrun: x\n",
        "(file name)",
        "'Bad Name' is not a habit name",
    ),
    ("k.yaml", "title: k\ncadence: 1h\nrun: []\n", "run", "the body command is empty"),
]


@pytest.mark.parametrize(("file", "text", "field", "reason"), BAD)
def test_invalid_definitions_name_file_field_and_reason(
    bundle: Bundle, file: str, text: str, field: str, reason: str
) -> None:
    write(bundle, file, text)
    write(bundle, "fine.yaml", "title: fine\ncadence: 1h\nrun: x\n")
    habits = load_habits(bundle)
    assert [h.name for h in habits.habits] == ["fine"]  # one bad habit never stops the others
    assert habits.problems, file
    problem = habits.problems[0]
    assert (problem.file, problem.field) == (f"habits/{file}", field)
    assert reason in problem.reason


def test_a_name_defined_twice_is_a_problem(bundle: Bundle) -> None:
    write(bundle, "twin.yaml", "title: a\ncadence: 1h\nrun: x\n")
    write(bundle, "twin.yml", "title: b\ncadence: 1h\nrun: x\n")
    habits = load_habits(bundle)
    assert [h.definition.title for h in habits.habits] == ["a"]
    assert habits.problems[0].reason == "habit 'twin' is also defined by habits/twin.yaml; keep one"


def test_get_names_the_problem_or_the_known_habits(bundle: Bundle) -> None:
    write(bundle, "ok.yaml", "title: ok\ncadence: 1h\nrun: x\n")
    write(bundle, "bad.yaml", "title: bad\ncadence: 1h\nagent: cursor\n")
    habits = load_habits(bundle)
    with pytest.raises(
        InvalidInput,
        match=r"habit 'bad' has an invalid definition: habits/bad.yaml: agent: Input should be",
    ):
        habits.get("bad")
    with pytest.raises(NotFound, match=r"no habit named 'nope' \(habits: ok\)"):
        habits.get("nope")


def test_tool_policy_requested_granted_denied(bundle: Bundle) -> None:
    write(
        bundle,
        "p.yaml",
        "title: p\ncadence: 1h\nrun: x\ntools: [diary_write, habits_run, surface, arc_note]\n",
    )
    meta = bundle.meta_path.read_text().replace("{", '{"habits": {"deniedTools": ["arc_note"]},', 1)
    bundle.meta_path.write_text(meta)
    [habit] = load_habits(bundle).habits
    policy, reasons, warnings = tool_policy(habit, read_config(bundle))
    assert policy.requested_tools == ["diary_write", "habits_run", "surface", "arc_note"]
    assert policy.granted_tools == ["diary_write", "surface"]
    assert {"habits_run", "arc_note", "info"} <= set(policy.denied_tools)
    assert reasons["habits_run"] == "habits do not start habits"
    assert reasons["arc_note"] == "denied to every habit by bundle.json habits.deniedTools"
    assert reasons["info"] == "not in the tools: list of habits/p.yaml"
    assert warnings == []


def test_list_cli_shows_habits_and_problems(bundle: Bundle) -> None:
    write(bundle, "ok.yaml", "title: the ok habit\ncadence: 2h\nrun: x\nstatus: paused\n")
    write(bundle, "bad.yaml", "title: bad\ncadence: 2h\nrun: x\ntimeout: 0\n")
    out = run_ouro("habits", "list", bundle=bundle, check=True).stdout
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "CADENCE", "STATUS", "LAST", "RUN", "TITLE"],
        ["ok", "2h", "paused", "never", "the", "ok", "habit"],
        ["invalid:", "habits/bad.yaml:", "timeout:", "0s", "is", "outside", "1s..3600s"],
    ]


#: the seed's minimal habit shape (002_*, "Habit Surfacing"), exactly as written there
SEED_MINIMAL = """\
title: inbox triage
cadence: 30m
status: active
origin:
  friendId: ari
  channel: bluebubbles
  key: session-or-thread
surface:
  family: true
  originator: true
  extra: []
"""


def test_the_seeds_minimal_habit_is_valid_and_done_by_the_default_agent(bundle: Bundle) -> None:
    from ouro.habits.agents import agent_for

    write(bundle, "inbox-triage.yaml", SEED_MINIMAL)
    loaded = load_habits(bundle)
    assert loaded.problems == []
    [habit] = loaded.habits
    assert habit.definition.run is None and habit.definition.agent is None
    assert habit.definition.origin.friend_id == "ari"
    assert agent_for(bundle, habit) == "claude"  # the built-in default
    run_ouro("config", "set", "habits.agent", "codex", bundle=bundle, check=True)
    assert agent_for(bundle, habit) == "codex"  # the bundle's default
    write(bundle, "own.yaml", "title: own\ncadence: 1h\nagent: gemini\nprompt: look around\n")
    own = load_habits(bundle).get("own")
    assert agent_for(bundle, own) == "gemini" and own.definition.prompt == "look around"


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("title: t\ncadence: 1h\nrun: x\nagent: codex\n", "(document)", "either run:"),
        ("title: t\ncadence: 1h\nagent: cursor\n", "agent", "Input should be"),
        ("title: t\ncadence: 1h\nkeepTranscript: maybe\n", "keepTranscript", "boolean"),
    ],
)
def test_agent_fields_are_checked(bundle: Bundle, text: str, field: str, reason: str) -> None:
    write(bundle, "t.yaml", text)
    [problem] = load_habits(bundle).problems
    assert problem.field == field and reason in problem.reason, problem
