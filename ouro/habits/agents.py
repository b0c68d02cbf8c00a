"""A habit done by an agent: the prompt it gets and how each host is launched.

A habit without ``run:`` is done by an agent (``agent:`` in the habit, else
``ouro config habits.agent``, else ``claude``), started headless in the private
session folder ``state/sessions/<sessionId>/`` the way each host runs
non-interactively. Its executable is ``ouro config habits.command.<agent>``,
else the name on ``PATH``.

The prompt (``build_prompt``) carries the habit's instructions (title and
``prompt:``), the main line's orientation packet (Arc resume + Desk
orientation, ``orient.md`` of the session) and the operating guide.

The agent reaches ouro through ``ouro mcp --session <id>`` -- a stdio MCP server
that serves only the session's granted tools and gates every call by the
session's policy file (``ouro.mcp``) -- and through the ``ouro`` CLI with the
session's environment. How each host is given that server, with no prompt and
no file outside the session folder:

=========  ==================================================================
claude     ``claude -p PROMPT --mcp-config <session>/mcp.json
           --strict-mcp-config --allowedTools mcp__ouro,Bash(ouro:*)
           --setting-sources user``; ``--no-session-persistence`` unless the
           transcript is kept; ``ENABLE_TOOL_SEARCH=false`` (the session's
           tools are loaded up front)
codex      ``codex exec --skip-git-repo-check -C <session> --sandbox
           workspace-write --add-dir <bundle> -c
           mcp_servers.ouro.command=… -c mcp_servers.ouro.args=[…] -c
           mcp_servers.ouro.env={…} -c project_root_markers=[] PROMPT``;
           ``--ephemeral`` unless kept
gemini     ``gemini -p PROMPT --allowed-mcp-server-names ouro`` with
           ``<session>/.gemini/settings.json`` (the project settings there)
opencode   ``opencode run PROMPT`` with ``<session>/opencode.json``, named by
           ``OPENCODE_CONFIG``; ``OPENCODE_DISABLE_PROJECT_CONFIG=1``
pi         ``pi -p PROMPT`` (``--no-session`` unless kept); Pi has no MCP
           client, so it reaches ouro through the CLI only (the session's
           environment, gated by ``ouro.api.call``)
=========  ==================================================================

The host's own login and model settings (``~/.claude``, ``$CODEX_HOME``, …) are
the user's and are used as they are. The project's host config is not: the
session folder lies inside the project, and a host that walks up from it
(Codex and OpenCode to the git root) would load the project's hooks -- ouro's
own -- into the private session. Each launch keeps them out (docs/habits.md);
ouro's hooks also do nothing in a habit session (``ouro.hooks.stdio``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ouro.bundle import Bundle
from ouro.habits.definition import AGENTS, Habit
from ouro.habits.receipt import ToolPolicy
from ouro.store.atomic import atomic_write_text

MCP_NAME = "ouro"
DEFAULT_AGENT = "claude"
#: variables the MCP server is given besides the session's own (hosts such as
#: Codex start MCP servers with a filtered environment)
_PASSED = ("PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "XDG_CONFIG_HOME")


@dataclass
class Launch:
    agent: str
    argv: list[str]
    #: whether ouro's MCP server is wired into the host (Pi: CLI only)
    mcp: bool
    #: files written into the session folder for the host
    files: list[str] = field(default_factory=list)
    #: variables set for the host on top of the session's environment
    env: dict[str, str] = field(default_factory=dict)


def agent_for(bundle: Bundle, habit: Habit) -> str:
    """The agent that does ``habit``: its own, else the bundle's setting, else claude."""
    if habit.definition.agent:
        return habit.definition.agent
    from ouro import config

    chosen = config.lookup("habits.agent", bundle.root) or DEFAULT_AGENT
    return chosen if chosen in AGENTS else DEFAULT_AGENT


def executable(bundle: Bundle, agent: str, env: Mapping[str, str]) -> str | None:
    """The host's executable: configured, else found on the session's PATH."""
    from ouro import config

    configured = config.lookup(f"habits.command.{agent}", bundle.root)
    if configured:
        return (
            configured if os.sep in configured else shutil.which(configured, path=env.get("PATH"))
        )
    return shutil.which(agent, path=env.get("PATH"))


def mcp_command(bundle: Bundle, session_id: str) -> list[str]:
    """This very ouro, serving the session: ``python -m ouro.cli mcp --session ID``."""
    return [
        sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root),
        "mcp", "--session", session_id,
    ]  # fmt: skip


def mcp_env(env: Mapping[str, str]) -> dict[str, str]:
    out = {k: env[k] for k in _PASSED if k in env}
    out.update({k: v for k, v in env.items() if k.startswith("OURO_") and k != "OURO_DEBUG"})
    return out


def build_prompt(
    habit: Habit, session_id: str, orient_text: str, policy: ToolPolicy, *, mcp: bool
) -> str:
    from ouro.guide import render

    d = habit.definition
    instructions = d.title.strip()
    if d.prompt and d.prompt.strip():
        instructions += "\n\n" + d.prompt.strip()
    granted = ", ".join(policy.granted_tools) or "none"
    reach = (
        f"ouro's tools are on the MCP server {MCP_NAME!r} (granted here: {granted}); "
        "the `ouro` CLI works too (this session's environment is set)."
        if mcp
        else f"Use the `ouro` CLI (this session's environment is set; granted tools: {granted})."
    )
    return "\n".join(
        [
            f"You are running the habit {habit.name!r} ({habit.locator}) in a private ouro "
            f"session, {session_id}. Nobody is watching this session and its transcript "
            "is thrown away: what matters must be written through ouro before you stop.",
            "",
            "## What to do",
            instructions,
            "",
            "## How to work",
            f"- {reach}",
            "- Learned facts: diary_write; work: the Desk task tools; what you found or "
            "could not do: a handoff (arc_handoff). Everything you write carries this "
            "session and the habit; your ask, next action and handoff stay in this habit's "
            "own lane and never replace the main line's.",
            "- To reach a person (family, the habit's originator): surface, with a concrete "
            "reason (needed_input, status, answer, blocked). Without a reason, do not.",
            "- A tool that is denied here is refused; do not work around it.",
            "",
            "## Where the main line stands (its orientation packet)",
            orient_text.rstrip(),
            "",
            "## Operating guide",
            render(mcp=mcp).rstrip(),
            "",
        ]
    )


def launch(
    agent: str,
    exe: str,
    prompt: str,
    *,
    bundle: Bundle,
    folder: Path,
    session_id: str,
    env: Mapping[str, str],
    keep_transcript: bool,
) -> Launch:
    """The command line (and the config files, written into ``folder``) for ``agent``."""
    server = mcp_command(bundle, session_id)
    server_env = mcp_env(env)
    if agent == "claude":
        config = {
            "mcpServers": {
                MCP_NAME: {
                    "type": "stdio",
                    "command": server[0],
                    "args": server[1:],
                    "env": server_env,
                }
            }
        }
        path = folder / "mcp.json"
        atomic_write_text(path, json.dumps(config, indent=2))
        argv = [
            exe, "-p", prompt, "--mcp-config", str(path), "--strict-mcp-config",
            # the MCP server is the gate: every ouro tool reaches it and it refuses what
            # the session may not use; the CLI is allowed for ouro only
            "--allowedTools", f"mcp__{MCP_NAME},Bash(ouro:*)",
            "--output-format", "text",
            # the user's settings (login, model) only: no project or local settings file,
            # so none of a project's hooks, plugins or permissions reach the session
            "--setting-sources", "user",
        ]  # fmt: skip
        if not keep_transcript:
            argv.append("--no-session-persistence")
        # the session's few tools are loaded up front rather than found through
        # Claude Code's tool search (one round trip less, and the prompt names them)
        return Launch(agent, argv, True, ["mcp.json"], {"ENABLE_TOOL_SEARCH": "false"})
    if agent == "codex":
        argv = [
            exe, "exec", "--skip-git-repo-check", "-C", str(folder),
            # its shell may write the session folder and the bundle (the ouro CLI), no more
            "--sandbox", "workspace-write", "--add-dir", str(bundle.root),
            "-c", f"mcp_servers.{MCP_NAME}.command={json.dumps(server[0])}",
            "-c", f"mcp_servers.{MCP_NAME}.args={_toml_array(server[1:])}",
            "-c", f"mcp_servers.{MCP_NAME}.env={_toml_table(server_env)}",
            # wait for the server before the first turn, and fail loudly if it cannot start
            "-c", f"mcp_servers.{MCP_NAME}.required=true",
            # the session folder is the project root: Codex walks up from it to the root
            # (by default the nearest .git: the project's) for .codex/ (config, hooks) and
            # AGENTS.md; with no marker none of the project's is loaded
            "-c", "project_root_markers=[]",
        ]  # fmt: skip
        if not keep_transcript:
            argv.append("--ephemeral")
        return Launch(agent, [*argv, prompt], True)
    if agent == "gemini":
        settings = folder / ".gemini" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        entry = {"command": server[0], "args": server[1:], "env": server_env, "trust": True}
        atomic_write_text(settings, json.dumps({"mcpServers": {MCP_NAME: entry}}, indent=2))
        argv = [exe, "-p", prompt, "--allowed-mcp-server-names", MCP_NAME]
        return Launch(agent, argv, True, [".gemini/settings.json"])
    if agent == "opencode":
        entry = {"type": "local", "command": server, "environment": server_env, "enabled": True}
        doc = {"$schema": "https://opencode.ai/config.json", "mcp": {MCP_NAME: entry}}
        path = folder / "opencode.json"
        atomic_write_text(path, json.dumps(doc, indent=2))
        # OpenCode walks up from the session folder to the project's git root for
        # opencode.json, .opencode/ (plugins: ouro's own) and AGENTS.md: none of the
        # project's is loaded; the session's file is named instead
        isolate = {"OPENCODE_DISABLE_PROJECT_CONFIG": "1", "OPENCODE_CONFIG": str(path)}
        return Launch(agent, [exe, "run", prompt], True, ["opencode.json"], isolate)
    argv = [exe, "-p", prompt]  # pi
    if not keep_transcript:
        argv.append("--no-session")
    return Launch(agent, argv, False)


def _toml_array(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _toml_table(values: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in values.items()) + "}"
