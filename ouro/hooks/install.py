"""``ouro hook install claude|codex``: merge ouro's hooks into a host config file.

Files: ``<project>/.claude/settings.json`` (Claude Code) or
``<project>/.codex/hooks.json`` (Codex). Both hold
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
  left untouched.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.hooks.common import EVENTS, Host
from ouro.models.clock import utc_now
from ouro.store.atomic import atomic_write_text

#: Seconds the host waits before killing the hook (ouro aims far below these).
TIMEOUTS = {
    "SessionStart": 30,
    "UserPromptSubmit": 10,
    "PreCompact": 30,
    "Stop": 10,
    "SessionEnd": 10,
}


@dataclass
class Plan:
    host: str
    path: Path
    before: str | None  # the file's text now (None: no file)
    after: str  # the text ouro would write
    changed: bool

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


def handler_command(
    host: Host, event: str, *, base: str, bundle: str | None, block_on_debt: bool
) -> str:
    parts = [base, "hook", host.name, event]
    if bundle:
        parts += ["--bundle", shlex.quote(bundle)]
    if event == "Stop" and block_on_debt:
        parts.append("--block-on-debt")
    return " ".join(parts)


def is_ours(handler: Any, host: Host, event: str) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    return (
        "ouro" in command and re.search(rf"\bhook\s+{host.name}\s+{event}\b", command) is not None
    )


def _load(path: Path) -> tuple[str | None, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    if not text.strip():
        return text, {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
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
    for event in EVENTS:
        wanted = {"type": "command", "command": commands[event], "timeout": TIMEOUTS[event]}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise CorruptFile(
                f"{path}: 'hooks.{event}' must be a list",
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
    bundle: str | None = None,
    block_on_debt: bool = False,
) -> Plan:
    path = project / host.settings_file
    before, doc = _load(path)
    base = base or default_command()
    commands = {
        e: handler_command(host, e, base=base, bundle=bundle, block_on_debt=block_on_debt)
        for e in EVENTS
    }
    merged = merge(doc, host, commands, path)
    changed = merged != doc
    after = json.dumps(merged, indent=2, ensure_ascii=False) + "\n" if changed else before or ""
    return Plan(host=host.name, path=path, before=before, after=after, changed=changed)


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
