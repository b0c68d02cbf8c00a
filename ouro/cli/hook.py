"""``ouro hook claude|codex|gemini|pi|opencode EVENT``, ``ouro hook install HOST``,
``ouro hook doctor``, ``ouro hook plugin HOST DIR``, ``ouro guide``.

The host commands are what Claude Code, Codex and Gemini CLI run: host JSON on stdin,
host JSON (or nothing) on stdout, a one-line reason on stderr when something
failed, and exit 0 every time (see ``ouro.hooks``). ``install`` merges the
hook config into a project and checks it as the host will run it (see
``ouro.hooks.install``); ``doctor`` checks an install end to end
(``ouro.hooks.doctor``); ``plugin`` writes a host plugin folder
(``ouro.hooks.plugin``); ``ouro guide`` prints the operating guide
(``ouro.guide``). Hosts kill slow hooks: the host commands import only what
``ouro.hooks.stdio.run_stdio`` needs.
"""

from __future__ import annotations

from pathlib import Path

from ouro.spec import P

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Annotated, Any

if TYPE_CHECKING:
    from ouro.hooks.common import Host

HOSTS = ("claude", "codex", "gemini", "pi", "opencode")
_EVENT = (
    "The host's hook event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, "
    "PreCompact, Stop or SessionEnd."
)
_GEMINI_EVENT = (
    "The host's hook event: SessionStart, BeforeAgent, BeforeTool, AfterTool, PreCompress, "
    "AfterAgent or SessionEnd (ouro's names work too)."
)
_BLOCK = "Stop: keep the agent working while claims are unverified or obligations due."
_DRY = (
    "Answer as the hook would but write nothing; name the bundle on stderr "
    "(what 'ouro hook install' and 'ouro hook doctor' run)."
)


def _run_host(host: str, event: str, block_on_debt: bool, dry_run: bool) -> int:
    from ouro.cli.common import bundle_option
    from ouro.hooks.stdio import run_stdio

    run_stdio(host, event, bundle=bundle_option(), block_on_debt=block_on_debt, dry_run=dry_run)
    return 0


def claude(
    event: Annotated[str, P(_EVENT)],
    *,
    block_on_debt: Annotated[bool, P(_BLOCK)] = False,
    dry_run: Annotated[bool, P(_DRY)] = False,
) -> int:
    """Run as a Claude Code hook for EVENT: the host's JSON on stdin, the host's JSON (or
    nothing) on stdout, a one-line reason on stderr when something failed, exit 0 always."""
    return _run_host("claude", event, block_on_debt, dry_run)


def codex(
    event: Annotated[str, P(_EVENT)],
    *,
    block_on_debt: Annotated[bool, P(_BLOCK)] = False,
    dry_run: Annotated[bool, P(_DRY)] = False,
) -> int:
    """Run as a Codex hook for EVENT: the host's JSON on stdin, the host's JSON (or
    nothing) on stdout, a one-line reason on stderr when something failed, exit 0 always."""
    return _run_host("codex", event, block_on_debt, dry_run)


def pi(
    event: Annotated[str, P(_EVENT)],
    *,
    block_on_debt: Annotated[bool, P(_BLOCK)] = False,
    dry_run: Annotated[bool, P(_DRY)] = False,
) -> int:
    """Run as ouro's Pi extension's hook for EVENT: Pi's event JSON (as the extension
    pipes it) or the shared hook JSON on stdin, the shared hook JSON (or nothing) on
    stdout, a one-line reason on stderr when something failed, exit 0 always."""
    return _run_host("pi", event, block_on_debt, dry_run)


def opencode(
    event: Annotated[str, P(_EVENT)],
    *,
    block_on_debt: Annotated[bool, P(_BLOCK)] = False,
    dry_run: Annotated[bool, P(_DRY)] = False,
) -> int:
    """Run as an OpenCode hook for EVENT (what ouro's OpenCode plugin runs): the plugin's
    JSON on stdin, the reply JSON (or nothing) on stdout, a one-line reason on stderr when
    something failed, exit 0 always."""
    return _run_host("opencode", event, block_on_debt, dry_run)


def gemini(
    event: Annotated[str, P(_GEMINI_EVENT)],
    *,
    block_on_debt: Annotated[bool, P(_BLOCK)] = False,
    dry_run: Annotated[bool, P(_DRY)] = False,
) -> int:
    """Run as a Gemini CLI hook for EVENT: the host's JSON on stdin, a JSON object on
    stdout (always: Gemini reads stderr when stdout is empty), a one-line reason on
    stderr when something failed, exit 0 always."""
    return _run_host("gemini", event, block_on_debt, dry_run)


def install(
    host: Annotated[str, P("The host: claude, codex, gemini, pi or opencode.", choices=HOSTS)],
    *,
    project: Annotated[
        str,
        P(
            "Project folder whose host config to edit (the folder you start the host in; default: here)."
        ),
    ] = ".",
    dry_run: Annotated[bool, P("Show the change; write nothing.")] = False,
    block_on_debt: Annotated[bool, P("Install the Stop hook in blocking mode.")] = False,
    command: Annotated[
        str | None, P("How the host starts ouro (default: 'ouro' if on PATH).")
    ] = None,
    guide: Annotated[
        bool,
        P(
            "Also put the operating guide in the project's CLAUDE.md (claude), AGENTS.md "
            "(codex, pi) or GEMINI.md (gemini) between markers ('ouro guide --remove --file FILE' takes it out)."
        ),
    ] = False,
) -> dict[str, Any]:
    """Merge ouro's hooks into HOST's project config (.claude/settings.json,
    .codex/hooks.json, .gemini/settings.json, Pi's extension .pi/extensions/ouro.ts or OpenCode's plugin .opencode/plugin/ouro.js), then check that the host will reach ouro and a bundle. With the
    global --bundle, also write a .ouro pointer in the project naming that bundle by a
    relative path (the hook commands themselves never hold a path)."""
    import os

    from ouro.cli.common import bundle_option
    from ouro.hooks import install as installing

    spec = host_named(host)
    folder = Path(project).absolute()
    pointer = _pointer(folder, bundle_option(), dry_run)
    plan = installing.plan(spec, folder, base=command, block_on_debt=block_on_debt)
    lost = installing.trust_changes(plan, spec, os.environ)
    backup = None if dry_run else installing.apply(plan)
    guide_written = None
    if guide:
        from ouro import guide as guide_mod

        target = folder / spec.guide_file
        guide_written = str(target) if not dry_run and guide_mod.write_block(target) else None
    started = installing.installed_command(plan.new_doc, spec, "SessionStart") or ""
    reached = installing.reach(spec, folder, started, os.environ)
    return {
        "host": host,
        "project": str(folder),
        "path": str(plan.path),
        "changed": plan.changed,
        "written": plan.changed and not dry_run,
        "dryRun": dry_run,
        "backup": str(backup) if backup else None,
        "diff": plan.diff,
        "pointer": pointer,
        "guideWritten": guide_written,
        "reach": {
            "ok": reached.ok,
            "command": reached.command,
            "bundle": reached.bundle,
            "how": reached.how,
            "detail": reached.detail,
        },
        "trustLost": lost,
        "next": _next_steps(host, folder, reached.ok, reached.how, reached.bundle),
    }


def _pointer(project: Path, bundle: str | None, dry_run: bool) -> dict[str, object] | None:
    """Point the project at ``bundle`` with a relative ``.ouro`` file (not in the commands)."""
    if not bundle:
        return None
    from ouro.bundle import Bundle, pointer_text, write_pointer

    target = Bundle.open(Path(bundle).expanduser().absolute())
    if dry_run:
        return {
            "path": str(project / ".ouro"),
            "written": False,
            "names": pointer_text(project, target.root).strip(),
        }
    path, written = write_pointer(project, target.root)
    return {
        "path": str(path),
        "written": written,
        "names": path.read_text(encoding="utf-8").strip(),
    }


def _next_steps(
    host: str, project: Path, reached: bool, how: str | None, bundle: str | None
) -> list[str]:
    steps = []
    if not reached:
        steps.append(f"fix what the check says, then run 'ouro hook doctor {host}'")
    elif how == "the *.ouro folder here" and bundle:
        steps.append(
            f"optional: 'ouro init {Path(bundle).name} --link' writes a .ouro pointer, so hooks "
            "and ouro commands also find the bundle when started from a subfolder"
        )
    if host == "codex":
        steps += [
            f"trust the project: start 'codex' in {project} and accept the trust prompt "
            "(Codex ignores .codex/hooks.json in an untrusted project)",
            "trust the hooks: in Codex run /hooks and trust the five ouro entries "
            "(re-do this after any re-install that changes them)",
            "hooks are on by default in current Codex; if you turned them off, set "
            "[features] hooks = true in ~/.codex/config.toml",
        ]
    elif host == "gemini":
        steps += [
            f"trust the folder: start 'gemini' in {project} and accept the trust prompt "
            "(Gemini CLI runs no project hooks in an untrusted folder)",
            "start a new 'gemini' session in the project (the first one lists the new "
            "project hooks once; /hooks shows them)",
        ]
    elif host == "pi":
        steps.append(
            "start a new 'pi' session in the project (project extensions load at start; "
            "/reload loads them again)"
        )
    elif host == "opencode":
        steps.append(
            "start 'opencode' in the project (it loads .opencode/plugin/*.js at start); for the "
            "ouro MCP tools as well, use 'ouro hook plugin opencode DIR' instead"
        )
    else:
        steps.append(
            "start a new 'claude' session in the project (hooks load at start; /hooks shows them)"
        )
    steps.append(f"check it any time: ouro hook doctor {host}")
    return steps


def render_install(r: dict[str, Any]) -> str:
    lines = []
    if not r["changed"]:
        lines.append(f"{r['path']}: ouro hooks already installed; nothing to change")
    else:
        lines.append(str(r["diff"]).rstrip("\n"))
    if r["changed"] and r["dryRun"]:
        lines.append(f"dry run: {r['path']} not written")
    elif r["changed"]:
        lines.append(f"wrote {r['path']}")
        if r["backup"]:
            lines.append(f"backup of the previous file: {r['backup']}")
    if r["pointer"]:
        p = r["pointer"]
        verb = "wrote" if p["written"] else ("would write" if r["dryRun"] else "kept")
        lines.append(f"{verb} the pointer {p['path']} -> {p['names']}")
    if r["guideWritten"]:
        lines.append(f"added the operating guide to {r['guideWritten']}")
    for event in r["trustLost"]:
        lines.append(
            f"warning: Codex had trusted the {event} entry; this change drops that trust and "
            "Codex skips the hook until you trust it again in /hooks"
        )
    reach = r["reach"]
    project = Path(r["path"])
    for _part in Path(host_named(r["host"]).settings_file).parts:
        project = project.parent
    if str(reach["command"]).startswith("/"):
        lines.append(
            "note: 'ouro' is not on PATH, so the hooks start it by its full path, which is "
            "specific to this machine; put ouro on PATH and re-install for a shareable config"
        )
    if reach["ok"]:
        lines.append(
            f"checked as the host will run it (from {project}, without "
            f"OURO_* variables): bundle {reach['bundle']} (found by {reach['how']}); "
            f"{reach['detail']}"
        )
    else:
        lines.append(
            f"warning: as the host will run it (from {project}, without "
            f"OURO_* variables) the hook does not work: {reach['detail']}"
        )
    lines.append("next:")
    lines.extend(f"  - {step}" for step in r["next"])
    return "\n".join(lines)


def doctor(
    host: Annotated[
        str | None, P("The host to check (default: every host configured here).", choices=HOSTS)
    ] = None,
    *,
    project: Annotated[str, P("Project folder the host is started in (default: here).")] = ".",
) -> dict[str, Any]:
    """Check an install end to end: config, command on PATH, bundle reachable from the
    project, a dry SessionStart packet, and (Codex) project and hook trust. Exit 1 on a
    problem. Writes nothing. Without HOST: every host configured in the project."""
    import os

    from ouro.hooks import doctor as doctoring

    folder = Path(project).absolute()
    names = (
        [host]
        if host
        else [h for h in HOSTS if (folder / host_named(h).settings_file).exists()] or list(HOSTS)
    )
    reports = []
    for name in names:
        checks = doctoring.diagnose(host_named(name), folder, os.environ)
        reports.append(
            {
                "host": name,
                "checks": [c.to_json() for c in checks],
                "healthy": all(c.status != "problem" for c in checks),
            }
        )
    return {
        "project": str(folder),
        "hosts": reports,
        "healthy": all(r["healthy"] for r in reports),
    }


def doctor_exit(result: dict[str, Any]) -> int:
    """``hook doctor``: 1 when any host has a problem."""
    return 0 if result["healthy"] else 1


def render_doctor(r: dict[str, Any]) -> str:
    from ouro.hooks import doctor

    blocks = []
    for report in r["hosts"]:
        checks = [
            doctor.Check(c["check"], c["status"], c["detail"], c["fix"]) for c in report["checks"]
        ]
        blocks.append(doctor.render(host_named(report["host"]), checks))
    return "\n".join(blocks)


def guide(
    *,
    file: Annotated[
        str | None,
        P("Put the guide into this file (CLAUDE.md, AGENTS.md) between markers; idempotent."),
    ] = None,
    remove: Annotated[bool, P("With --file: take the guide block out again.")] = False,
) -> dict[str, Any]:
    """Print the operating guide: when to record the ask, the next action, claims, diary
    entries and handoffs (the text agents get over MCP and at session start)."""
    from ouro import guide as guiding
    from ouro.cli.parse import UsageError

    if remove and file is None:
        raise UsageError("--remove needs --file FILE", hint="see 'ouro guide --help'")
    path = Path(file) if file is not None else None
    changed = None
    if path is not None:
        changed = guiding.remove_block(path) if remove else guiding.write_block(path)
    return {
        "version": guiding.GUIDE_VERSION,
        "text": guiding.render(),
        "file": str(path) if path else None,
        "changed": changed,
        "removed": remove,
    }


def render_guide(r: dict[str, Any]) -> str:
    if r["file"] is None:
        return str(r["text"]).rstrip("\n")
    verb = (
        ("removed the guide from" if r["removed"] else "wrote the guide to")
        if r["changed"]
        else "nothing to change in"
    )
    return f"{verb} {r['file']}"


def plugin(
    host: Annotated[str, P("The host: claude or codex.", choices=HOSTS)],
    folder: Annotated[
        str, P("Folder to write the plugin into: new, empty, or a plugin ouro wrote before.")
    ],
    *,
    command: Annotated[
        str, P("How the host starts ouro, a shell command (default: 'ouro', on the host's PATH).")
    ] = "ouro",
) -> dict[str, Any]:
    """Write a ready plugin for HOST into FOLDER: the hooks for every event ouro handles,
    the MCP server entry ('ouro mcp') and the operating guide, in the host's plugin
    form. Writes only inside FOLDER (never through a symbolic link), each file
    atomically, and prints the host's install command."""
    from ouro.hooks import plugin as plugins

    written = plugins.write(host, Path(folder), command=command)
    return {
        "host": host,
        "folder": str(written.folder),
        "files": [str(p.relative_to(written.folder)) for p in written.files],
        "install": written.install,
    }


def render_plugin(r: dict[str, Any]) -> str:
    lines = [f"wrote the {r['host']} plugin in {r['folder']}:"]
    lines.extend(f"  {name}" for name in r["files"])
    lines.append("install it:")
    lines.extend(f"  {line}" for line in r["install"])
    return "\n".join(lines)


def host_named(name: str) -> Host:
    from ouro.hooks.stdio import host_named as named

    return named(name)
