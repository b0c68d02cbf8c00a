"""The registry is data: one row per verb that an agent can call as a tool.

A row says where the verb sits in the CLI (``path``), which library method does
it (``target``, ``"module:Qualname"``), and its hints. Everything else comes
from the method itself: its docstring is the tool's description and its
signature (``ouro.spec``) the input spec, from which the validator, the MCP
``inputSchema`` and the CLI arguments are all derived. Nothing generated is
checked in and no option table is kept by hand.

The naming rule is mechanical: a tool's MCP name is its CLI path joined by
``_`` (``-`` inside a word becomes ``_``): ``ouro claim add`` is ``claim_add``.
The seed's names are the rule's only exceptions, declared once in
``SEED_NAMES`` (``ouro diary consult`` is ``consult_diary``).

Importing this module imports no verb: a target is loaded on first use
(``method``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ouro.errors import NotFound

if TYPE_CHECKING:
    from collections.abc import Callable


class Tool:
    """One row. A plain class (read-only by convention): a dataclass would import
    ``dataclasses`` and ``inspect``, a NamedTuple compile its annotations, on every
    cold CLI start, which costs more than most commands' work."""

    __slots__ = (
        "agent",
        "default",
        "destructive",
        "idempotent",
        "open_world",
        "path",
        "read_only",
        "target",
    )

    def __init__(
        self,
        path: tuple[str, ...],
        target: str,
        *,
        read_only: bool,
        destructive: bool = False,
        idempotent: bool = False,
        open_world: bool = False,
        default: bool = False,
        agent: bool = True,
    ) -> None:
        #: the CLI path: ``("diary", "write")`` is ``ouro diary write``
        self.path = path
        #: the library method, ``"module:Qualname"`` (``"ouro.api.record:Diary.write"``)
        self.target = target
        self.read_only = read_only
        self.destructive = destructive
        self.idempotent = idempotent
        #: runs a shell command (a check, a habit body): it can reach anything
        self.open_world = open_world
        #: served by the default ``ouro mcp`` tool set
        self.default = default
        #: exposed as a tool at all (``ouro mcp --tools all``)
        self.agent = agent

    def __repr__(self) -> str:
        return f"Tool({self.path!r}, {self.target!r})"

    @property
    def name(self) -> str:
        return name_of(self)

    def method(self) -> Callable[..., dict[str, Any]]:
        """The target, unbound (``Diary.write``): read its spec and docstring with
        ``ouro.spec``; call it on a bundle with ``ouro.api.call``."""
        import importlib

        module, _, qualname = self.target.partition(":")
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
        method: Callable[..., dict[str, Any]] = found
        return method

    def description(self) -> str:
        from ouro.spec import description

        return description(self.method())


#: the seed's tool names: the only exceptions to the naming rule
SEED_NAMES: dict[tuple[str, ...], str] = {
    ("diary", "consult"): "consult_diary",
    ("facts", "search"): "search_facts",
    ("notes", "consult"): "consult_notes",
}


def name_of(tool: Tool | tuple[str, ...]) -> str:
    """The MCP name: the CLI path joined by ``_`` unless the seed names it."""
    path = tool.path if isinstance(tool, Tool) else tool
    return SEED_NAMES.get(path) or "_".join(path).replace("-", "_")


# fmt: off
TOOLS: tuple[Tool, ...] = (
    Tool(("info",), "ouro.api:Bundle.info", read_only=True, idempotent=True, default=True),
    Tool(("orient",), "ouro.api:Bundle.orient", read_only=True, idempotent=True, default=True),
    Tool(("arc", "resume"), "ouro.api.arc:Arc.resume", read_only=True, idempotent=True, default=True),
    Tool(("arc", "query"), "ouro.api.arc:Arc.query", read_only=True, idempotent=True),
    Tool(("arc", "ask"), "ouro.api.arc:Arc.ask", read_only=False, default=True),
    Tool(("arc", "next"), "ouro.api.arc:Arc.next", read_only=False, default=True),
    Tool(("arc", "confirm"), "ouro.api.arc:Arc.confirm", read_only=False, default=True),
    Tool(("arc", "blocker"), "ouro.api.arc:Arc.blocker", read_only=False, default=True),
    Tool(("arc", "unblock"), "ouro.api.arc:Arc.unblock", read_only=False, idempotent=True, default=True),
    Tool(("arc", "handoff"), "ouro.api.arc:Arc.handoff", read_only=False, default=True),
    Tool(("arc", "note"), "ouro.api.arc:Arc.note", read_only=False),
    Tool(("arc", "checkpoint"), "ouro.api.arc:Arc.checkpoint", read_only=False),
    Tool(("claim", "add"), "ouro.api.arc:Claim.add", read_only=False, default=True),
    Tool(("claim", "evidence"), "ouro.api.arc:Claim.evidence", read_only=False),
    Tool(("claim", "verify"), "ouro.api.arc:Claim.verify", read_only=False, destructive=True, open_world=True, default=True),
    Tool(("claim", "supersede"), "ouro.api.arc:Claim.supersede", read_only=False, idempotent=True),
    Tool(("claim", "update"), "ouro.api.arc:Claim.update", read_only=False, destructive=True, idempotent=True),
    Tool(("claim", "list"), "ouro.api.arc:Claim.list", read_only=True, idempotent=True),
    Tool(("obligation", "add"), "ouro.api.arc:Obligation.add", read_only=False, default=True),
    Tool(("obligation", "close"), "ouro.api.arc:Obligation.close", read_only=False, idempotent=True, default=True),
    Tool(("obligation", "list"), "ouro.api.arc:Obligation.list", read_only=True, idempotent=True),
    Tool(("desk", "search"), "ouro.api.desk:Desk.search", read_only=True, idempotent=True, default=True),
    Tool(("diary", "consult"), "ouro.api.record:Diary.consult", read_only=True, idempotent=True, default=True),
    Tool(("facts", "search"), "ouro.api.record:Facts.search", read_only=True, idempotent=True, default=True),
    Tool(("notes", "consult"), "ouro.api.record:Notes.consult", read_only=True, idempotent=True, default=True),
    Tool(("desk", "track", "add"), "ouro.api.desk:Track.add", read_only=False, idempotent=True),
    Tool(("desk", "task", "add"), "ouro.api.desk:Task.add", read_only=False, default=True),
    Tool(("desk", "task", "update"), "ouro.api.desk:Task.update", read_only=False, destructive=True, idempotent=True),
    Tool(("desk", "task", "list"), "ouro.api.desk:Task.list", read_only=True, idempotent=True, default=True),
    Tool(("desk", "task", "show"), "ouro.api.desk:Task.show", read_only=True, idempotent=True),
    Tool(("desk", "task", "take"), "ouro.api.desk:Task.take", read_only=False),
    Tool(("desk", "task", "release"), "ouro.api.desk:Task.release", read_only=False),
    Tool(("desk", "ready"), "ouro.api.desk:Desk.ready", read_only=True, idempotent=True),
    Tool(("lock", "take"), "ouro.api.talk:Lock.take", read_only=False),
    Tool(("lock", "release"), "ouro.api.talk:Lock.release", read_only=False, idempotent=True),
    Tool(("lock", "list"), "ouro.api.talk:Lock.list", read_only=True, idempotent=True),
    Tool(("message", "send"), "ouro.api.talk:Message.send", read_only=False),
    Tool(("message", "reply"), "ouro.api.talk:Message.reply", read_only=False),
    Tool(("message", "read"), "ouro.api.talk:Message.read", read_only=False),
    Tool(("message", "list"), "ouro.api.talk:Message.list", read_only=True, idempotent=True),
    Tool(("message", "peer"), "ouro.api.talk:Message.peer", read_only=False, idempotent=True),
    Tool(("message", "retry"), "ouro.api.talk:Message.retry", read_only=False),
    Tool(("desk", "task", "verify"), "ouro.api.desk:Task.verify", read_only=False, destructive=True, open_world=True),
    Tool(("desk", "iteration", "add"), "ouro.api.desk:Iteration.add", read_only=False),
    Tool(("desk", "friction", "add"), "ouro.api.desk:Friction.add", read_only=False),
    Tool(("desk", "friction", "list"), "ouro.api.desk:Friction.list", read_only=True, idempotent=True),
    Tool(("desk", "tip", "add"), "ouro.api.desk:Tip.add", read_only=False, destructive=True, idempotent=True),
    Tool(("desk", "tip", "list"), "ouro.api.desk:Tip.list", read_only=True, idempotent=True),
    Tool(("desk", "feature"), "ouro.api.desk:Desk.feature", read_only=False, idempotent=True),
    Tool(("diary", "write"), "ouro.api.record:Diary.write", read_only=False, default=True),
    Tool(("diary", "reflect"), "ouro.api.record:Diary.reflect", read_only=False),
    Tool(("notes", "write"), "ouro.api.record:Notes.write", read_only=False, destructive=True, idempotent=True, default=True),
    Tool(("record", "redact"), "ouro.api.record:Record.redact", read_only=False, destructive=True),
    Tool(("sentinel", "refresh"), "ouro.api.sentinel:Sentinel.refresh", read_only=False),
    Tool(("sentinel", "status"), "ouro.api.sentinel:Sentinel.status", read_only=True, idempotent=True),
    Tool(("drill",), "ouro.api:Bundle.drill", read_only=False),
    Tool(("habits", "list"), "ouro.api.habits:Habits.list", read_only=True, idempotent=True),
    Tool(("habits", "run"), "ouro.api.habits:Habits.run", read_only=False, destructive=True, open_world=True),
    Tool(("surface",), "ouro.api.habits:Surface.__call__", read_only=False),
    Tool(("surface", "list"), "ouro.api.habits:Surface.list", read_only=True, idempotent=True),
    Tool(("surface", "ack"), "ouro.api.habits:Surface.ack", read_only=False, idempotent=True),
)
# fmt: on

_BY_NAME = {name_of(tool): tool for tool in TOOLS}
_BY_PATH = {tool.path: tool for tool in TOOLS}


def find(name_or_path: str | tuple[str, ...]) -> Tool:
    """The tool by its MCP name (``"consult_diary"``), its CLI path
    (``("diary", "consult")``) or that path as words (``"diary consult"``)."""
    if isinstance(name_or_path, tuple):
        found = _BY_PATH.get(name_or_path)
    else:
        found = _BY_NAME.get(name_or_path) or _BY_PATH.get(tuple(name_or_path.split()))
    if found is None:
        shown = " ".join(name_or_path) if isinstance(name_or_path, tuple) else name_or_path
        raise NotFound(
            f"no tool named {shown!r}", hint="known tools: " + ", ".join(sorted(_BY_NAME))
        )
    return found
