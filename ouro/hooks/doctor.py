"""``ouro hook doctor``: check one host's install end to end, from the project.

Checks, each ``ok`` / ``problem`` / ``note`` with one line of detail and, for a
problem, the command or step that fixes it:

1. config: the host's project file exists, parses, and has ouro's handler for
   every event, each within the host's timeout caps;
2. command: the command's program resolves on the PATH the host will give it
   (the fix names that PATH and ouro's full path);
3. bundle + packet: the installed SessionStart command, run the way the host
   runs it (``install.reach``: ``sh -c`` in the project, without the
   installer's ``OURO_*`` variables, ``--dry-run``), finds a bundle and
   produces the packet. When the host cannot start the command at all, or
   the command reports no bundle, the bundle is looked for by ouro's own
   discovery from the project, so "ouro is not on the host's PATH" is never
   reported as "no bundle is reachable" (which would suggest a second
   bundle);
4. (Codex) trust: the project is trusted, each ouro entry carries a
   ``trusted_hash`` matching the entry as it is now, and the ``hooks`` feature
   is not switched off.

Doctor reads only: it writes nothing in the project, the bundle or the host's
configuration.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.hooks import install
from ouro.hooks.common import Host
from ouro.store import jsonio

CAPS = {"codex": {"SessionEnd": 3}, "claude": {"SessionEnd": 1}}


@dataclass
class Check:
    name: str
    status: str  # "ok" | "problem" | "note"
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


def diagnose(host: Host, project: Path, env: Mapping[str, str]) -> list[Check]:
    checks: list[Check] = []
    path = project / host.settings_file
    reinstall = f"ouro hook install {host.name}"
    try:
        before, doc = install._load(path, host)
    except CorruptFile as exc:
        return [Check("config", "problem", exc.message, exc.hint)]
    if before is None:
        return [
            Check("config", "problem", f"{path} does not exist", f"run '{reinstall}' in {project}")
        ]
    commands = {e: install.installed_command(doc, host, e) for e in host.events}
    missing = [e for e, c in commands.items() if c is None]
    if missing:
        checks.append(
            Check(
                "config",
                "problem",
                f"{path}: no ouro hook for {', '.join(missing)}",
                f"run '{reinstall}'",
            )
        )
    else:
        checks.append(
            Check("config", "ok", f"{path}: ouro hooks for all {len(host.events)} events")
        )
    checks.extend(_timeouts(host, doc))
    start = commands["SessionStart"]
    if start is None:
        return checks
    command = _resolvable(host, start, env)
    checks.append(command)
    if command.status != "ok":
        # The host cannot start the command, so running it says nothing about the
        # bundle: ouro's own discovery answers that, and the packet waits for the fix.
        checks.append(_bundle_here(project, env, ran=None))
        checks.append(
            Check(
                "packet",
                "problem",
                "not produced: the host cannot start the hook command (see 'command')",
                command.fix,
            )
        )
    else:
        result = install.reach(host, project, start, env)
        if result.bundle:
            checks.append(Check("bundle", "ok", f"{result.bundle} (found by {result.how})"))
        else:
            checks.append(_bundle_here(project, env, ran=result.detail))
        checks.append(
            Check(
                "packet",
                "ok" if result.ok else "problem",
                result.detail,
                None if result.ok else f"run '{start} --dry-run' in {project} to see the failure",
            )
        )
    if host.name == "codex":
        checks.extend(codex_checks(host, path, project, doc, env))
    if host.name == "gemini":
        checks.append(gemini_trust(project, env))
    return checks


def _timeouts(host: Host, doc: dict[str, Any]) -> list[Check]:
    over = []
    for event, _g, _h, _m, handler in install._ours(doc, host):
        cap = CAPS.get(host.name, {}).get(event)
        timeout = handler.get("timeout")
        if cap is not None and isinstance(timeout, int | float) and timeout > cap:
            over.append(f"{event} {timeout}s (cap {cap}s)")
    if over:
        return [
            Check(
                "timeouts",
                "problem",
                "over the host's cap: " + ", ".join(over),
                f"run 'ouro hook install {host.name}'",
            )
        ]
    return [Check("timeouts", "ok", "within the host's caps")]


def _bundle_here(project: Path, env: Mapping[str, str], *, ran: str | None) -> Check:
    """The bundle check when the hook command did not report one: ouro's own discovery
    from ``project`` with the host's environment (read-only). ``ran`` is what the command
    said when it ran; None when the host cannot start it at all."""
    from ouro.bundle import Bundle
    from ouro.errors import BundleNotFound, OuroError

    try:
        found = Bundle.discover(env=install.host_env(env), cwd=project)
    except BundleNotFound as exc:
        return Check(
            "bundle",
            "problem",
            f"no bundle reachable from {project} without OURO_BUNDLE ({exc.message})",
            f"run 'ouro init agent.ouro --link' in {project}, or 'ouro init PATH --link' "
            "for an existing bundle",
        )
    except OuroError as exc:
        return Check("bundle", "problem", f"the bundle is unusable: {exc.message}", exc.hint)
    where = f"{found.bundle.root} (found by {found.how})"
    if ran is None:
        return Check(
            "bundle",
            "ok",
            f"{where}; the hook will reach it once the host can start ouro (see 'command')",
        )
    return Check(
        "bundle",
        "problem",
        f"ouro finds {where} from {project}, but the hook command did not: {ran}",
        "check that the command the hook runs is this ouro (see 'command'), or reinstall "
        "with 'ouro hook install'",
    )


def this_ouro() -> str:
    """The full command of the ouro running now (for a --command that needs no PATH)."""
    script = Path(sys.executable).parent / "ouro"
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m ouro.cli"


def _resolvable(host: Host, command: str, env: Mapping[str, str]) -> Check:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return Check(
            "command",
            "problem",
            f"cannot parse the command {command!r}",
            f"run 'ouro hook install {host.name}'",
        )
    path = env.get("PATH") or ""
    found = shutil.which(program, path=path)
    if found:
        return Check("command", "ok", f"{program!r} resolves to {found} on PATH")
    return Check(
        "command",
        "problem",
        f"{program!r} is not on the PATH the host gives its hooks (the PATH the host was "
        f"started with: {path or '(empty)'}); the hooks cannot start ouro",
        f"start the host from a shell where '{program}' runs (activate the venv, or 'pipx "
        f"install ouro-bundle'), or reinstall the hooks with ouro's full path: 'ouro hook install "
        f"{host.name} --command {this_ouro()}'",
    )


def codex_checks(
    host: Host, path: Path, project: Path, doc: dict[str, Any], env: Mapping[str, str]
) -> list[Check]:
    from ouro.hooks import codex_trust

    try:
        config = codex_trust.load_config(env)
    except CorruptFile as exc:
        return [Check("codex trust", "problem", exc.message, exc.hint)]
    out: list[Check] = []
    feature = config.hooks_feature()
    if feature is False:
        out.append(
            Check(
                "codex hooks feature",
                "problem",
                f"{config.path}: [features] hooks = false",
                "set [features] hooks = true",
            )
        )
    trusted = config.project_trusted(project.resolve())
    if trusted:
        out.append(Check("codex project trust", "ok", f"{trusted} is trusted in {config.path}"))
    else:
        out.append(
            Check(
                "codex project trust",
                "problem",
                f"{project} is not trusted in {config.path}; Codex ignores its .codex/hooks.json",
                f"start codex in {project} and accept the trust prompt",
            )
        )
    untrusted = []
    for event, g, h, m, handler in install._ours(doc, host):
        key = codex_trust.entry_key(path.resolve(), event, g, h)
        if config.trusted_hash(key) != codex_trust.entry_hash(event, m, handler):
            untrusted.append(event)
    if untrusted:
        out.append(
            Check(
                "codex hook trust",
                "problem",
                f"not trusted (or changed since trusted): {', '.join(untrusted)}; Codex skips them",
                "open codex in the project, run /hooks and trust the ouro hooks",
            )
        )
    else:
        out.append(Check("codex hook trust", "ok", "every ouro hook entry is trusted as it is now"))
    return out


def gemini_trust(project: Path, env: Mapping[str, str]) -> Check:
    """Gemini CLI runs project hooks only in a trusted folder: its
    ``trustedFolders.json`` (``$GEMINI_CLI_TRUSTED_FOLDERS_PATH``, default
    ``~/.gemini/trustedFolders.json``), the longest rule that holds the project
    deciding (``TRUST_PARENT`` trusts the rule's parent), or
    ``GEMINI_CLI_TRUST_WORKSPACE=true``."""
    import os

    name = "gemini folder trust"
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return Check(name, "ok", "GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder")
    home = env.get("HOME") or os.path.expanduser("~")
    file = Path(
        env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or Path(home, ".gemini", "trustedFolders.json")
    )
    fix = f"start gemini in {project} and trust the folder (or set GEMINI_CLI_TRUST_WORKSPACE=true)"
    try:
        rules = jsonio.loads(file.read_bytes()[: 1 << 20])
    except FileNotFoundError:
        rules = {}
    except (OSError, jsonio.JSONDecodeError) as exc:
        return Check(name, "problem", f"{file} is unreadable ({exc}); trust unknown", fix)
    if not isinstance(rules, dict):
        return Check(name, "problem", f"{file} is not a JSON object; trust unknown", fix)
    here = os.path.realpath(project)
    best: tuple[int, str] | None = None
    for rule, level in rules.items():
        if not isinstance(rule, str) or not isinstance(level, str):
            continue
        base = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        real = os.path.realpath(base)
        if (here == real or here.startswith(real.rstrip(os.sep) + os.sep)) and (
            best is None or len(rule) > best[0]
        ):
            best = (len(rule), level)
    if best is not None and best[1] in ("TRUST_FOLDER", "TRUST_PARENT"):
        return Check(name, "ok", f"{project} is trusted in {file}")
    why = "is not trusted" if best is None else "is marked DO_NOT_TRUST"
    return Check(
        name,
        "problem",
        f"{project} {why} in {file}; Gemini CLI runs no project hooks there",
        fix,
    )


def render(host: Host, checks: list[Check]) -> str:
    mark = {"ok": "ok     ", "problem": "PROBLEM", "note": "note   "}
    lines = [f"ouro hook doctor {host.name}:"]
    for c in checks:
        lines.append(f"  {mark[c.status]} {c.name}: {c.detail}")
        if c.fix:
            lines.append(f"          fix: {c.fix}")
    bad = sum(c.status == "problem" for c in checks)
    lines.append("healthy" if not bad else f"{bad} problem(s)")
    return "\n".join(lines)
