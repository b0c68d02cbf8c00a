"""``ouro hook install claude|codex|gemini``: merge ouro's hooks into a host config file.

Files: ``<project>/.claude/settings.json`` (Claude Code),
``<project>/.codex/hooks.json`` (Codex) or ``<project>/.gemini/settings.json``
(Gemini CLI: its own event names, ``Host.names``, and timeouts in
milliseconds). All hold
``{"hooks": {"<Event>": [{"matcher"?: …, "hooks": [{"type": "command", …}]}]}}``.

Rules:
- only ``hooks.<Event>`` lists are touched; every other key and every other
  hook stays as it was;
- an ouro handler is recognised by its command (``… ouro … hook <host>
  <Event>``); an existing one is updated in place (keeping keys the user
  added), duplicates are removed, a missing one is appended as a new group;
- nothing changes when the merged document equals the current one (a second
  run is a no-op, even if the file's formatting differs);
- before a write, the current file is copied to ``<file>.bak-<UTC time>``;
  the write itself is atomic; a file that is not a JSON object is refused and
  left untouched;
- commands are portable: ``ouro hook <host> <Event>`` with no bundle path in
  them (the hook finds the bundle from the host's cwd; ``--bundle`` at install
  time writes a relative ``.ouro`` pointer in the project instead), and each
  event gets the host's timeout (``Host.timeouts``, within the host's caps);
- ``reach(…)`` runs the installed SessionStart command the way the host will
  (``sh -c`` in the project folder, without the installer's ``OURO_*``
  variables) as a dry run that writes nothing, and reports what it found;
- for Codex, ``trust_changes(…)`` names the entries that were trusted and that
  this install changes (Codex then skips them until trusted again).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.hooks.common import Host
from ouro.models.clock import utc_now
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_text


@dataclass
class Plan:
    host: str
    path: Path
    before: str | None  # the file's text now (None: no file)
    after: str  # the text ouro would write
    changed: bool
    old_doc: dict[str, Any] = field(default_factory=dict)
    new_doc: dict[str, Any] = field(default_factory=dict)

    @property
    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        label = str(self.path)
        return "".join(
            difflib.unified_diff(old, new, f"{label} (now)", f"{label} (with ouro hooks)")
        )


def default_command() -> str:
    """How the host should start ouro: ``ouro`` when it is on PATH, else by path."""
    if shutil.which("ouro"):
        return "ouro"
    script = Path(sys.executable).parent / "ouro"
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m ouro.cli"


def handler_command(host: Host, event: str, *, base: str, block_on_debt: bool) -> str:
    parts = [base, "hook", host.name, host.host_event(event)]
    if event == "Stop" and block_on_debt:
        parts.append("--block-on-debt")
    return " ".join(parts)


def is_ours(handler: Any, host: Host, event: str) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    word = host.host_event(event)
    return "ouro" in command and re.search(rf"\bhook\s+{host.name}\s+{word}\b", command) is not None


def _load(path: Path, host: Host | None = None) -> tuple[str | None, dict[str, Any]]:
    if host is not None and host.name == "opencode":  # a plugin file, read as a hook config
        from ouro.hooks.opencode import read_plugin

        return read_plugin(path)
    if path.name == "ouro.ts":  # Pi: the hooks live in ouro's extension's CONFIG line
        from ouro.hooks import pi

        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None, {}
        return text, pi.parse(path, text)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    if not text.strip():
        return text, {}
    try:
        doc = jsonio.loads(text)
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            hint="fix or move the file, then rerun 'ouro hook install'; ouro left it untouched",
        ) from None
    if not isinstance(doc, dict):
        raise CorruptFile(
            f"{path}: must hold a JSON object", hint="fix the file; it was left untouched"
        )
    return text, doc


def merge(doc: dict[str, Any], host: Host, commands: dict[str, str], path: Path) -> dict[str, Any]:
    """``doc`` with ouro's handler present exactly once per event."""
    out = copy.deepcopy(doc)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CorruptFile(
            f"{path}: 'hooks' must be an object", hint="fix the file; it was left untouched"
        )
    for event in host.events:
        timeout = host.timeouts[event] * host.timeout_scale
        wanted = {"type": "command", "command": commands[event], "timeout": timeout}
        key = host.host_event(event)
        groups = hooks.setdefault(key, [])
        if not isinstance(groups, list):
            raise CorruptFile(
                f"{path}: 'hooks.{key}' must be a list",
                hint="fix the file; it was left untouched",
            )
        found = False
        emptied: list[int] = []  # groups that held only duplicate ouro handlers
        for index, entry in enumerate(groups):
            handlers = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(handlers, list):
                continue
            kept = []
            for handler in handlers:
                if not is_ours(handler, host, event):
                    kept.append(handler)
                elif not found:
                    kept.append({**handler, **wanted})
                    found = True
            if handlers and not kept:
                emptied.append(index)
            entry["hooks"] = kept
        groups[:] = [g for i, g in enumerate(groups) if i not in emptied]
        if not found:
            fresh: dict[str, Any] = {}
            if event in host.matchers:
                fresh["matcher"] = host.matchers[event]
            fresh["hooks"] = [wanted]
            groups.append(fresh)
    return out


def plan(
    host: Host,
    project: Path,
    *,
    base: str | None = None,
    block_on_debt: bool = False,
) -> Plan:
    path = project / host.settings_file
    before, doc = _load(path, host)
    base = base or default_command()
    commands = commands_for(host, base=base, block_on_debt=block_on_debt)
    merged = merge(doc, host, commands, path)
    changed = merged != doc
    after = json.dumps(merged, indent=2, ensure_ascii=False) + "\n" if changed else before or ""
    if host.name == "pi":  # the file is the shim with the hooks in its CONFIG line
        from ouro.hooks import pi

        after = pi.render(merged)
        changed = after != before
    elif host.name == "opencode":  # the plugin itself, starting ouro with ``base``
        from ouro.hooks.opencode import render_plugin

        after = render_plugin(base)
        changed = after != before
    return Plan(
        host=host.name,
        path=path,
        before=before,
        after=after,
        changed=changed,
        old_doc=doc,
        new_doc=merged,
    )


def commands_for(host: Host, *, base: str, block_on_debt: bool = False) -> dict[str, str]:
    """Each event's ouro command, started with ``base``."""
    return {
        e: handler_command(host, e, base=base, block_on_debt=block_on_debt) for e in host.events
    }


def installed_command(doc: dict[str, Any], host: Host, event: str) -> str | None:
    """The command of ouro's handler for ``event`` in a host config document."""
    for _e, _g, _h, _m, handler in _ours(doc, host):
        if _e == host.host_event(event):
            command = handler.get("command")
            return command if isinstance(command, str) else None
    return None


def _ours(
    doc: dict[str, Any], host: Host
) -> list[tuple[str, int, int, str | None, dict[str, Any]]]:
    from ouro.hooks.codex_trust import ouro_entries

    return ouro_entries(
        doc, lambda handler, key: is_ours(handler, host, host.ouro_event(key) or key)
    )


def trust_changes(p: Plan, host: Host, env: Mapping[str, str]) -> list[str]:
    """Codex entries trusted now that this plan changes (they lose their trust)."""
    from ouro.hooks import codex_trust

    if host.name != "codex" or not p.changed:
        return []
    config = codex_trust.load_config(env)
    new = {
        codex_trust.entry_key(p.path, e, g, h): codex_trust.entry_hash(e, m, handler)
        for e, g, h, m, handler in _ours(p.new_doc, host)
    }
    lost = []
    for e, g, h, m, handler in _ours(p.old_doc, host):
        key = codex_trust.entry_key(p.path, e, g, h)
        old_hash = codex_trust.entry_hash(e, m, handler)
        if config.trusted_hash(key) == old_hash and new.get(key) != old_hash:
            lost.append(e)
    return lost


@dataclass
class Reach:
    ok: bool  # the command ran and a bundle answered with a packet
    command: str
    bundle: str | None
    how: str | None
    detail: str  # one line: what happened


def host_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a host gives its hooks, as far as ouro can know: the user's,
    without the installer's own ouro variables."""
    return {k: v for k, v in env.items() if not k.startswith("OURO_")}


def reach(host: Host, project: Path, command: str, env: Mapping[str, str]) -> Reach:
    """Run ``command --dry-run`` as the host would run SessionStart from ``project``."""
    import subprocess

    stdin = json.dumps(
        {
            "session_id": "ouro-install-check",
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", f"{command} --dry-run"],
            cwd=project,
            env=host_env(env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=host.timeouts["SessionStart"],
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Reach(False, command, None, None, f"could not run it: {exc}")
    found = re.search(r": bundle (.+) \(found by (.+)\)$", proc.stderr, re.MULTILINE)
    bundle, how = (found.group(1), found.group(2)) if found else (None, None)
    try:
        out = jsonio.loads(proc.stdout) if proc.stdout.strip() else {}
    except jsonio.JSONDecodeError:
        out = {}
    context = (out.get("hookSpecificOutput") or {}).get("additionalContext") or ""
    if proc.returncode != 0 or not isinstance(context, str):
        last = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return Reach(False, command, bundle, how, f"the command failed: {last[0]}")
    if bundle and context.startswith("# orient"):
        first = context.splitlines()[0]
        return Reach(True, command, bundle, how, f"a dry SessionStart gave the packet ({first!r})")
    reason = out.get("systemMessage") or (proc.stderr.strip().splitlines() or ["no output"])[0]
    return Reach(False, command, bundle, how, str(reason))


def apply(p: Plan) -> Path | None:
    """Write the plan (backing the old file up first); returns the backup path."""
    if not p.changed:
        return None
    backup = None
    if p.before is not None:
        stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
        backup = p.path.with_name(f"{p.path.name}.bak-{stamp}")
        n = 1
        while backup.exists():
            n += 1
            backup = p.path.with_name(f"{p.path.name}.bak-{stamp}-{n}")
        shutil.copy2(p.path, backup)
    atomic_write_text(p.path, p.after)
    return backup
