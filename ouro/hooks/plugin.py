"""``ouro hook plugin <host> DIR``: write a ready plugin (extension, package) for a host.

A plugin bundles what ``ouro hook install`` puts in a project, in the form the
host installs third-party tools: the hook commands for every event ouro
handles, the MCP server entry (``ouro mcp``) and the operating guide
(``ouro.guide``). Each host module ``ouro.hooks.<host>`` that has a plugin
form defines::

    PLUGIN_INSTALL: tuple[str, ...]  # install commands, "{dir}" = the folder
    def write_plugin(folder: Path, *, command: str) -> list[Path]: ...

``write_plugin`` writes its files with ``put`` / ``put_json`` (atomic, inside
``folder`` only) and returns them; ``command`` is how the host starts ouro
(``ouro`` by default). A host without a plugin form defines
``PLUGIN_NONE = "<why, and what to run instead>"`` and no ``write_plugin``.

The folder rules are here, once (``prepare``): the folder may be missing
(it is made), empty, or a plugin ouro wrote before (it holds ``MARKER``, which
names the host and the files); anything else — a symbolic link, a file, a
folder holding other things, a previous plugin for another host — is refused
before anything is written. Writes never follow a symbolic link out of the
folder.
"""

from __future__ import annotations

import importlib
import json
import shlex
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from ouro.errors import InvalidInput
from ouro.hooks.common import Host
from ouro.store.atomic import atomic_write_text

#: The file that marks a folder as a plugin ouro wrote (host + files).
MARKER = ".ouro-plugin.json"
#: The name every plugin carries (the host shows it; MCP tools are prefixed by it).
NAME = "ouro"
HOMEPAGE = "https://pypi.org/project/ouro-bundle/"
DESCRIPTION = (
    "ouro: a durable place to stand for an AI agent. Orientation at session start, "
    "changes on later prompts, a checkpoint before compaction, debt at stop, and the "
    "ouro MCP tools."
)


class Plugin(NamedTuple):
    host: str
    folder: Path
    files: list[Path]
    install: list[str]  # the host's commands that install the folder


def module_for(host: str) -> ModuleType:
    """``ouro.hooks.<host>`` (the host's contract and its plugin writer)."""
    from ouro.hooks.stdio import host_named

    spec = host_named(host)  # raises ValueError for an unknown host
    return importlib.import_module(f"ouro.hooks.{spec.name}")


def write(host: str, folder: Path, *, command: str = "ouro") -> Plugin:
    """Write host ``host``'s plugin into ``folder``; see the module docstring."""
    module = module_for(host)
    writer = getattr(module, "write_plugin", None)
    if writer is None:
        why = getattr(module, "PLUGIN_NONE", f"{host} has no plugin form")
        raise InvalidInput(
            f"no plugin for {host}: {why}", hint=f"run 'ouro hook install {host}' instead"
        )
    if not command.strip():
        raise InvalidInput("--command must not be blank", hint="the default is 'ouro'")
    folder = prepare(folder, host)
    files: list[Path] = list(writer(folder, command=command))
    files.append(
        put_json(
            folder,
            MARKER,
            {"host": host, "files": sorted(str(p.relative_to(folder)) for p in files)},
        )
    )
    lines = getattr(module, "PLUGIN_INSTALL", ())
    install = [line.format(dir=shlex.quote(str(folder))) for line in lines]
    return Plugin(host, folder, files, install)


def prepare(folder: Path, host: str) -> Path:
    """``folder`` made absolute and checked (or made) as a place to write ``host``'s plugin."""
    folder = folder.expanduser()
    folder = folder if folder.is_absolute() else Path.cwd() / folder
    if folder.is_symlink():
        raise InvalidInput(
            f"{folder} is a symbolic link; ouro writes a plugin only into a real folder",
            hint="name the folder the link points to, or a new folder",
        )
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder} is a file, not a folder", hint="name a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        previous = _previous_host(folder)
        if previous is None:
            raise InvalidInput(
                f"{folder} holds other things and is not a plugin ouro wrote",
                hint="name a new or empty folder (ouro writes only there)",
            )
        if previous != host:
            raise InvalidInput(
                f"{folder} holds ouro's {previous} plugin, not a {host} one",
                hint="name another folder for the " + host + " plugin",
            )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _previous_host(folder: Path) -> str | None:
    marker = folder / MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        doc = json.loads(marker.read_text(encoding="utf-8")[:65536])
    except (OSError, ValueError):
        return None
    host = doc.get("host") if isinstance(doc, dict) else None
    return host if isinstance(host, str) else None


def put(folder: Path, relative: str, text: str) -> Path:
    """Write ``text`` to ``folder/relative`` atomically, never through a symbolic link."""
    parts = Path(relative).parts
    if Path(relative).is_absolute() or ".." in parts or not parts:
        raise ValueError(f"plugin file {relative!r} must stay inside the folder")
    here = folder
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            raise InvalidInput(
                f"{here} is not a plain folder; ouro will not write through it",
                hint="remove it or name a new folder",
            )
        here.mkdir(exist_ok=True)
    path = folder / relative
    if path.is_symlink():
        raise InvalidInput(
            f"{path} is a symbolic link; ouro will not write through it",
            hint="remove it or name a new folder",
        )
    atomic_write_text(path, text)
    return path


def put_json(folder: Path, relative: str, doc: Any) -> Path:
    return put(folder, relative, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def hook_commands(host: Host, command: str) -> dict[str, str]:
    """The command the host runs per event, as ``ouro hook install`` writes it."""
    from ouro.hooks.install import handler_command

    return {e: handler_command(host, e, base=command, block_on_debt=False) for e in host.events}


def hooks_config(host: Host, command: str) -> dict[str, Any]:
    """``{"hooks": {Event: [{matcher?, hooks: [{type, command, timeout}]}]}}``: the
    document ``ouro hook install`` merges into a project, for every event ouro installs."""
    from ouro.hooks.install import merge

    return merge({}, host, hook_commands(host, command), Path(host.settings_file))


def mcp_server(command: str) -> dict[str, Any]:
    """The MCP server entry: ``{"command": …, "args": [… "mcp"]}`` (stdio)."""
    words = shlex.split(command)
    return {"command": words[0], "args": [*words[1:], "mcp"]}


def guide_text() -> str:
    from ouro import guide

    return guide.render()
