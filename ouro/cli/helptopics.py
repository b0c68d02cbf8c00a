"""``ouro help [TOPIC]``: the concepts behind the commands, in the terminal.

``ouro help`` lists the topics and the command groups; ``ouro help TOPIC``
prints one topic; ``ouro help desk search`` (a command path) prints that
command's ``--help``. An unknown topic is a usage error (exit 2) listing the
topics. The texts are short on purpose and point to docs/ for the rest.

With ``--json`` each answer is one JSON object (``help_json``, also what
``ouro --json COMMAND --help`` prints): ``{"topics", "commands"}`` for the
listing, ``{"topic", "summary", "text"}`` for a topic, and for a command or a
group ``ouro.cli.help.command_record``; an unknown topic is the usual JSON
usage error.
"""

from __future__ import annotations

import sys
from typing import Annotated

from ouro.spec import P

TOPICS: dict[str, tuple[str, str]] = {
    "bundle": (
        "The bundle: one folder of plain files that is the agent's durable state.",
        """\
An agent's bundle is a folder of plain JSON, JSONL and Markdown, usually named
<agent>.ouro/. bundle.json marks it (layout version, agent). Files are the
truth; the search index under state/index/ is a cache you can delete.

  <name>.ouro/
    bundle.json
    arc/      live continuity: ask, next action, blockers, claims, obligations
    desk/     durable work (tracks, tasks, friction, tips) and the record
    habits/   habit definitions
    state/    machine state: the index, locks, sessions (never synced)

Which bundle a command uses: --bundle PATH (anywhere on the line), else
$OURO_BUNDLE, else a pointer file (.ouro or ouro.toml) walking up, else the
nearest bundle.json upwards, else the one *.ouro folder in the current folder. A bundle with top-level journal/, diary/ or
notes/ is the legacy layout: every command but 'ouro migrate' refuses it
(exit 3).

  ouro init ~/ada.ouro --agent ada     create one
  ouro info                            what is in it
See docs/concepts.md.""",
    ),
    "arc": (
        "Arc: what a new session needs to carry on safely after a context wipe.",
        """\
Arc answers: what am I doing, what did I promise, what is the next safe
action, what have I claimed and is it evidenced. It holds the flight recorder
(an append-only event log and the resume checkpoint latest.json), claims with
evidence, obligations and return routes, and sentinel receipts.

  ouro arc ask "fix the login bug"          the current ask
  ouro arc next "run the tests"             the next safe action
  ouro arc resume                           can I continue, and with what?
  ouro claim add "tests pass" --check "pytest -q"
  ouro claim verify <claim-id>              exit 1 when the check fails
  ouro obligation add "send notes" --to ari --due 2030-01-31
See docs/arc.md.""",
    ),
    "desk": (
        "Desk: durable work (tracks, tasks, friction, tips) and the record (diary, notes).",
        """\
Desk is the agent's durable room. Tasks live in tracks (desk/<track>/<slug>/
task.md); friction and tips record what got in the way and what helps. The
record under desk/_record/ is what the agent chooses to keep: diary facts with
provenance, daily reflections, reference notes.

The four search verbs take the same arguments: an optional QUERY (words that
must all match, "quoted phrases", prefix*; no query lists the newest first)
and --limit N, plus their own filters.

  ouro desk task add release "Ship the parser" --check "pytest -q"
  ouro desk search parser
  ouro diary write "Ari prefers short replies" --about ari
  ouro diary consult --since 2026-01-01
  ouro notes consult release
See docs/desk.md and docs/record.md.""",
    ),
    "locators": (
        "Locators: bundle-relative paths (with #id for one record) that name a file.",
        """\
A locator is a bundle-relative POSIX path, optionally with #<id> for one
record inside a JSONL file:

  desk/release/ship-the-parser/task.md
  desk/_record/diary/facts.jsonl#f-01jh2k3m4n5p6q7r8s

Every write prints the locator of what it wrote, and search results are
locators to open. Open one with any tool: cat "$OURO_BUNDLE/<locator>" (for
a #id, grep the id in the file). Locators never leave the bundle: absolute
paths, '..', empty segments and symlinks out are refused.
See docs/concepts.md.""",
    ),
    "drills": (
        "Drills: prove the recovery guarantees on a temporary copy of the bundle.",
        """\
'ouro drill [NAME]...' runs recovery drills (all by default), each on its own
temporary copy of the bundle, then records one sentinel receipt with the
results. The real bundle is only read. Exit 0 when all pass, 1 naming each
broken guarantee and where to look.

"""
        + "{drills}"
        + """

  ouro drill erase
See docs/sentinel.md.""",
    ),
    "exit-codes": (
        "Exit codes: 0 success, 1 negative outcome, 2 usage error, 3 bundle unusable.",
        """\
  0    success: the command did what was asked
  1    a negative outcome you asked about: a check failed, a verdict is
       blocked or unknown, a drill or habit failed, not found, a write
       refused (conflict, lease held, lock timeout)
  2    usage error, wherever it is detected (unknown option, bad value,
       'arc query bogus', '--limit 0')
  3    the bundle is unusable: none found, legacy layout, unreadable file
  130  interrupted

With --json the code is the same and an error object carries it as exitCode.
See docs/cli.md.""",
    ),
    "completion": (
        "Shell completion for bash, zsh and fish.",
        """\
  bash:  echo 'eval "$(ouro completion bash)"' >> ~/.bashrc
  zsh:   echo 'eval "$(ouro completion zsh)"' >> ~/.zshrc
  fish:  ouro completion fish > ~/.config/fish/completions/ouro.fish

Open a new shell; then 'ouro desk <TAB>' lists the desk commands.""",
    ),
    "config": (
        "Settings: where a value comes from and which source wins.",
        """\
Each setting is read from, lowest to highest precedence:
  global    $XDG_CONFIG_HOME/ouro/config.toml (~/.config/ouro/config.toml)
  bundle    bundle.json
  project   ouro.toml beside the project's bundle pointer (.ouro / ouro.toml)
  env       OURO_<KEY> (e.g. OURO_COLOR=never)
  command   an option on the command line
A higher source overrides a lower one.

  ouro config list --show-origin     every setting, its value and source
  ouro config get color              one value
  ouro config set color never        write it (bundle.json by default)
  ouro config set color never --global
  ouro config set dates absolute --project
See docs/cli.md.""",
    ),
}


def _topic(name: str) -> tuple[str, str]:
    summary, body = TOPICS[name]
    if "{drills}" in body:
        from ouro.drills import help_lines

        body = body.replace("{drills}", "\n".join(help_lines()))
    return summary, body


def help_json(topic: list[str], *, command: bool = False) -> int:
    """``ouro --json help [TOPIC | COMMAND]``: the same answers as one JSON object;
    ``command``: ``topic`` is a command path (``--json desk --help`` is the group)."""
    from ouro.cli import tree
    from ouro.cli.help import command_record, summary
    from ouro.cli.output import emit

    if not topic:
        result: dict[str, object] = {
            "topics": [{"name": name, "summary": text} for name, (text, _) in TOPICS.items()],
            "commands": [{"name": name, "summary": summary((name,))} for name in tree.children(())],
        }
    elif len(topic) == 1 and topic[0] in TOPICS and not command:
        text, body = _topic(topic[0])
        result = {"topic": topic[0], "summary": text, "text": body}
    else:
        result = command_record(_command(topic))
    emit(result, json_mode=True)
    return 0


def _command(topic: list[str]) -> tuple[str, ...]:
    """The command path ``topic`` names; a usage error (exit 2) when it names none."""
    from ouro.cli import tree

    path, _entry, rest = tree.resolve(list(topic))
    if rest or not path:
        from ouro.cli.parse import UsageError

        raise UsageError(
            f"no help topic or command {' '.join(topic)!r}; topics: " + ", ".join(TOPICS),
            usage="Usage: ouro help [TOPIC]...",
            hint="see 'ouro help --help'",
        )
    return path


def help_command(
    topic: Annotated[list[str], P("A topic, or a command path (e.g. desk search).")] = [],  # noqa: B006
) -> int:
    """Explain a concept (bundle, arc, desk, locators, drills, exit-codes, completion,
    config), or a command: 'ouro help desk search' is 'ouro desk search --help'."""
    from ouro.cli import tree
    from ouro.cli.common import wants_json
    from ouro.cli.help import group_help, summary

    if wants_json():
        return help_json(topic)
    if not topic:
        width = max(len(name) for name in TOPICS)
        lines = ["Topics (ouro help TOPIC):"]
        lines += [f"  {name:<{width}}  {text}" for name, (text, _) in TOPICS.items()]
        lines += ["", "Commands (ouro COMMAND --help, or ouro help COMMAND):"]
        lines += [f"  {name:<{width}}  {summary((name,))}" for name in tree.children(())]
        sys.stdout.write("\n".join(lines) + "\n")
        return 0
    if len(topic) == 1 and topic[0] in TOPICS:
        text, body = _topic(topic[0])
        sys.stdout.write(f"{text}\n\n{body}\n")
        return 0
    path = _command(topic)
    entry = tree.entries().get(path)
    if entry is None:
        sys.stdout.write(group_help(path) + "\n")
        return 0
    from ouro.cli.run import parser_of

    sys.stdout.write(parser_of(entry)[0].format_help())
    return 0
