"""The command tree: every CLI path and what runs it, declared once.

- agent tools come from the registry (``ouro.registry.TOOLS``): the path, and
  the library method whose signature is the command's input spec;
- ``COMMANDS`` below are the other commands (init, hook, index, sync, ...):
  a library method that is not an agent tool (``ouro.api.<module>:<Namespace>.<verb>``,
  called as ``b.<namespace>.<verb>`` on the bundle the run names), or else a
  plain function in a front-end module of this package, with its inputs
  declared the same way (``Annotated[..., P(...)]``, ``ouro.spec``).

Both kinds are parsed by the one builder (``ouro.cli.parse``) from
``spec_of(function)``. Nothing here is imported for a command but its own.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ouro.registry import Tool

Path = tuple[str, ...]

#: Non-tool commands by CLI path: "module:function" of this package.
COMMANDS: dict[Path, str] = {
    ("init",): "ouro.cli.core:init",
    ("demo",): "ouro.cli.core:demo",
    ("mcp",): "ouro.cli.mcp:mcp",
    ("migrate",): "ouro.cli.migrate:migrate",
    ("hook", "claude"): "ouro.cli.hook:claude",
    ("hook", "codex"): "ouro.cli.hook:codex",
    ("hook", "gemini"): "ouro.cli.hook:gemini",
    ("hook", "pi"): "ouro.cli.hook:pi",
    ("hook", "opencode"): "ouro.cli.hook:opencode",
    ("hook", "install"): "ouro.cli.hook:install",
    ("hook", "doctor"): "ouro.cli.hook:doctor",
    ("hook", "plugin"): "ouro.cli.hook:plugin",
    ("guide",): "ouro.cli.hook:guide",
    ("index", "sync"): "ouro.api.index:Index.sync",
    ("index", "rebuild"): "ouro.api.index:Index.rebuild",
    ("index", "status"): "ouro.api.index:Index.status",
    ("watch",): "ouro.cli.watch:watch",
    ("diary", "rebuild-entities"): "ouro.cli.desk:rebuild_entities",
    ("notes", "rebuild-manifest"): "ouro.cli.desk:rebuild_manifest",
    ("habits", "show"): "ouro.cli.habits:show",
    ("habits", "due"): "ouro.cli.habits:due",
    ("habits", "last"): "ouro.cli.habits:last",
    ("habits", "tick"): "ouro.cli.habits:tick",
    ("habits", "install"): "ouro.cli.habits:install",
    ("sync",): "ouro.api.sync:Sync.run",
    ("sync", "init"): "ouro.cli.sync:init",
    ("sync", "clone"): "ouro.cli.sync:clone",
    ("sync", "status"): "ouro.api.sync:Sync.status",
    ("sync", "resolve"): "ouro.api.sync:Sync.resolve",
    ("sync", "habit"): "ouro.api.sync:Sync.habit",
    ("workbench",): "ouro.cli.workbench:serve",
    ("workbench", "build"): "ouro.cli.workbench:build",
    ("help",): "ouro.cli.helptopics:help_command",
    ("completion",): "ouro.cli.completion:completion",
    ("config", "get"): "ouro.cli.config:get",
    ("config", "set"): "ouro.cli.config:set_",
    ("config", "list"): "ouro.cli.config:list_",
    ("config", "unset"): "ouro.cli.config:unset",
}

#: Help for command groups (the first sentence is the group's summary).
GROUP_HELP: dict[Path, str] = {
    (): "ouro: a durable place to stand for an AI agent. Arc keeps what is live "
    "(the ask, next action, blockers, claims, obligations); Desk keeps durable work "
    "(tracks, tasks, friction, tips) and the record (diary facts, reflections, notes). "
    "Everything is plain files in one bundle folder.\n\n"
    "--bundle and --json work anywhere on the line. Exit codes: 0 success, 1 a negative "
    "outcome you asked about, 2 usage error, 3 bundle unusable. "
    "Run 'ouro help' for the concepts, 'ouro COMMAND --help' for one command.",
    ("arc",): "Arc flight recorder: record the ask, next action, blockers and handoffs; resume. "
    "Arc is live continuity: what a new session needs to carry on safely.",
    ("claim",): "Claims with evidence: record one, attach receipts, verify, list. A claim's "
    "status is derived from its evidence, never set by hand.",
    ("obligation",): "Obligations and return routes: add, close, list. What is owed, to "
    "whom, by when.",
    ("config",): "Settings with a visible precedence: get, set, list. Command line > "
    "environment (OURO_*) > project > bundle (bundle.json) > global "
    "($XDG_CONFIG_HOME/ouro/config.toml).",
    ("desk",): "The Desk: durable work in tracks and tasks, friction, tips, and search over "
    "all of it. Files under desk/ are the truth; the search index is a cache.",
    ("desk", "track"): "Tracks: folders that group related tasks.",
    ("desk", "task"): "Tasks: add, list, show, update, and hold one with a lease.",
    ("desk", "iteration"): "Iterations: numbered records of rounds of work on a task.",
    ("desk", "friction"): "Friction: things that got in the way, filed so they get fixed.",
    ("desk", "tip"): "Tips: short advice for later sessions, by tag.",
    ("diary",): "The diary: atomic facts with provenance and daily reflections. Write, "
    "search, rebuild its entity list.",
    ("facts",): "Diary facts only: search them by text and by the entities they are about.",
    ("record",): "The record's own maintenance: take a secret out of a record file for good.",
    ("notes",): "Reference notes in the record: write, search, rebuild the manifest.",
    ("hook",): "Host lifecycle hooks for Claude Code and Codex: run one, or install them.",
    ("index",): "The search index under state/index/: sync, rebuild, status. A cache of the "
    "files, rebuildable at any time.",
    ("sentinel",): "Context-loss sentinel: refresh a recovery receipt, read its status.",
    ("lock",): "Advisory path locks: announce the files you are changing, see who holds what. "
    "Nothing is blocked; overlapping takes by another agent are refused naming the holder.",
    ("message",): "Messages between agents' bundles: send, reply, read, list; peers; retry "
    "what is queued. Typed (question, answer, status, handoff, blocker) and redacted.",
    ("surface",): "Surface a message from a habit session to the main line (ouro surface TEXT), "
    "list what waits (surface list) and acknowledge it (surface ack ID).",
    ("habits",): "Habits: scheduled private sessions that leave Arc run receipts.",
    ("sync",): "Sync the bundle through git: commit, fetch, merge (losing nothing), push.",
    ("workbench",): "A read-only web view of the bundle: serve it, or build it as static pages.",
}


def load(ref: str) -> Any:
    """The attribute named by ``"module:qual.name"``."""
    module, _, qualname = ref.partition(":")
    # ``__import__`` and ``sys.modules`` are ``importlib.import_module`` for an
    # absolute name, without importing ``importlib`` (and ``warnings``) at start-up
    __import__(module)
    found: Any = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


class Entry:
    """One runnable path: an agent tool (``tool`` set) or a front-end command.
    (A plain class: ``dataclasses`` costs a cold start more than the command.)"""

    __slots__ = ("path", "target", "tool")

    def __init__(self, path: Path, target: str, tool: Tool | None = None) -> None:
        self.path = path
        self.target = target
        self.tool = tool

    def __repr__(self) -> str:
        return f"Entry({self.path!r}, {self.target!r})"

    @property
    def library(self) -> bool:
        """A library method (``ouro.api``), not a front-end function."""
        return self.target.startswith("ouro.api")

    def function(self) -> Callable[..., Any]:
        """The function whose signature is the input spec (a library method, or
        the front-end command function)."""
        fn: Callable[..., Any] = load(self.target)
        return fn


def _tools() -> dict[Path, Tool]:
    from ouro.registry import TOOLS

    return {tool.path: tool for tool in TOOLS}


def entries() -> dict[Path, Entry]:
    """Every runnable path (tools and commands)."""
    table = {path: Entry(path, target) for path, target in COMMANDS.items()}
    for path, tool in _tools().items():
        table[path] = Entry(path, tool.target, tool)
    return table


def _longest(table: dict[Path, Entry], words: list[str]) -> tuple[Path, Entry | None, list[str]]:
    prefixes = {p[:n] for p in table for n in range(1, len(p) + 1)}
    path: Path = ()
    i = 0
    while i < len(words) and (*path, words[i]) in prefixes:
        path = (*path, words[i])
        i += 1
    return path, table.get(path), words[i:]


def resolve(words: list[str]) -> tuple[Path, Entry | None, list[str]]:
    """The longest known path at the start of ``words``: (path, its entry or
    None for a group, the words after it).

    A non-tool command is found without importing the registry (a hook run
    pays for nothing else): no tool path starts with a command's path, which
    ``tests/test_registry.py`` checks."""
    found = _longest({p: Entry(p, t) for p, t in COMMANDS.items()}, words)
    if found[1] is not None:
        return found
    return _longest(entries(), words)


def children(prefix: Path) -> list[str]:
    """The names one level below ``prefix``, sorted."""
    n = len(prefix)
    return sorted({p[n] for p in entries() if len(p) > n and p[:n] == prefix})


def is_group(path: Path) -> bool:
    return bool(children(path))
