"""Human text for results, and the exit status of outcomes, by CLI path.

``RENDERERS[path]`` names the function (``"module:function"``) that turns a
command's result dict into text for people; a path without one (and every
path under ``--verbose``) prints the full record (``ouro.cli.output.render_full``).
``--json`` prints the dict itself. ``EXITS[path]`` names the function mapping
the result to the exit status of its outcome (``ouro.cli.exits``); a path
without one exits 0. Renderers live here, in the CLI, never in a domain package.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str, ...]

_R = "ouro.cli.render.records:"
_ARC = "ouro.cli.render.arc:"
_DESK = "ouro.cli.render.desk:"
_OPS = "ouro.cli.render.ops:"

RENDERERS: dict[Path, str] = {
    # --- bundle
    ("info",): _OPS + "info",
    ("orient",): _OPS + "orient",
    ("init",): "ouro.cli.core:render_init",
    # --- arc
    ("arc", "resume"): _ARC + "resume",
    ("arc", "query"): _R + "arc_query",
    **{
        ("arc", verb): _ARC + "written"
        for verb in (
            "ask",
            "next",
            "confirm",
            "blocker",
            "unblock",
            "handoff",
            "note",
            "checkpoint",
        )
    },
    **{
        ("claim", verb): _ARC + "claim"
        for verb in ("add", "evidence", "verify", "supersede", "update")
    },
    ("claim", "list"): _R + "claim_list",
    ("obligation", "add"): _ARC + "obligation",
    ("obligation", "close"): _ARC + "obligation",
    ("obligation", "list"): _R + "obligation_list",
    ("record", "redact"): _ARC + "redacted",
    # --- desk
    ("desk", "search"): _OPS + "search",
    ("diary", "search"): _OPS + "search",
    ("diary", "consult"): _OPS + "search",
    ("facts", "search"): _OPS + "search",
    ("notes", "search"): _OPS + "search",
    ("notes", "consult"): _OPS + "search",
    ("desk", "track", "add"): _R + "track_written",
    **{
        ("desk", "task", verb): _R + "task_written" for verb in ("add", "update", "take", "release")
    },
    ("desk", "task", "list"): _R + "task_list",
    ("desk", "task", "show"): _R + "task_show",
    ("desk", "task", "verify"): _DESK + "task_verify",
    ("desk", "ready"): _DESK + "ready",
    ("desk", "iteration", "add"): _R + "iteration_written",
    ("desk", "friction", "add"): _R + "friction_written",
    ("desk", "friction", "list"): _R + "friction_list",
    ("desk", "tip", "add"): _R + "tip_written",
    ("desk", "tip", "list"): _R + "tip_list",
    ("desk", "feature"): _R + "feature_written",
    ("diary", "write"): _R + "fact_written",
    ("diary", "reflect"): _R + "reflection_written",
    ("notes", "write"): _R + "note_written",
    # --- talk
    **{("lock", verb): _OPS + "locks" for verb in ("take", "release", "list")},
    **{
        ("message", verb): _OPS + "message"
        for verb in ("send", "reply", "read", "list", "peer", "retry")
    },
    # --- sentinel, habits
    ("sentinel", "refresh"): _OPS + "sentinel_refresh",
    ("sentinel", "status"): _OPS + "sentinel_status",
    ("drill",): _OPS + "drill",
    ("habits", "list"): _R + "habit_list",
    ("habits", "run"): _OPS + "habit_receipt",
    ("habits", "show"): "ouro.cli.habits:render_show",
    ("habits", "due"): "ouro.cli.habits:render_due",
    ("habits", "last"): _OPS + "habit_last",
    ("habits", "tick"): "ouro.cli.habits:render_tick",
    ("habits", "install"): "ouro.cli.habits:render_install",
    ("surface",): _OPS + "surface",
    ("surface", "list"): _OPS + "surface_list",
    ("surface", "ack"): _OPS + "surface_ack",
    # --- the other commands
    ("hook", "install"): "ouro.cli.hook:render_install",
    ("hook", "doctor"): "ouro.cli.hook:render_doctor",
    ("hook", "plugin"): "ouro.cli.hook:render_plugin",
    ("guide",): "ouro.cli.hook:render_guide",
    ("index", "sync"): "ouro.cli.index:render_report",
    ("index", "rebuild"): "ouro.cli.index:render_report",
    ("index", "status"): _OPS + "index_status",
    ("sync",): "ouro.cli.render.sync:sync",
    ("sync", "init"): "ouro.cli.render.sync:init",
    ("sync", "clone"): "ouro.cli.render.sync:clone",
    ("sync", "status"): "ouro.cli.render.sync:status",
    ("sync", "resolve"): "ouro.cli.render.sync:resolved",
    ("sync", "habit"): "ouro.cli.render.sync:habit",
    ("migrate",): "ouro.cli.render.migrate:summary",
    ("config", "set"): "ouro.cli.config:render_written",
    ("config", "unset"): "ouro.cli.config:render_written",
    ("workbench", "build"): "ouro.cli.workbench:render_build",
}

_EXITS = "ouro.cli.exits:"

EXITS: dict[Path, str] = {
    ("claim", "verify"): _EXITS + "verify_exit",
    ("desk", "task", "verify"): _EXITS + "task_verify_exit",
    ("sentinel", "refresh"): _EXITS + "sentinel_exit",
    ("sentinel", "status"): _EXITS + "sentinel_exit",
    ("drill",): _EXITS + "drill_exit",
    ("habits", "run"): _EXITS + "habit_exit",
    ("habits", "tick"): "ouro.cli.habits:tick_exit",
    ("hook", "doctor"): "ouro.cli.hook:doctor_exit",
}


def text(path: Path, result: Any) -> str:
    """``result`` as the command at ``path`` prints it for people."""
    ref = RENDERERS.get(path)
    if ref is None:
        from ouro.cli.output import render_full

        return render_full(result)
    return str(load(ref)(result))


def load(ref: str) -> Any:
    """The function named by ``"module:function"``."""
    import importlib

    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)
