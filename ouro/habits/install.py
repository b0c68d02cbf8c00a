"""Scheduler wiring: the entry that calls ``ouro habits tick`` every minute.

``install_entry(bundle, scheduler, write=False)`` returns what to install and,
with ``write=True``, installs it for the current user only:

- ``cron``: one crontab line, marked with ``# ouro-habits <bundle>``. Writing
  reads ``crontab -l``, drops any earlier line with that marker, appends the new
  one and loads the result with ``crontab -``; unchanged when already present.
- ``launchd``: a LaunchAgent plist in ``~/Library/LaunchAgents/`` (run every
  60 s); load it with the ``launchctl`` command printed.
- ``systemd``: a user service + timer (every minute) in
  ``~/.config/systemd/user/``; enable with the ``systemctl --user`` command printed.

The entry runs this Python with ``-m ouro.cli`` (no reliance on ``PATH`` inside
the scheduler) and passes ``--trigger cron`` (cron, systemd) or
``--trigger launchd``. Its stderr goes to ``state/habits/tick-errors.log``:
the receipts are the record, this log only catches a tick that could not run.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal
from xml.sax.saxutils import escape

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.store.atomic import atomic_write_text

Scheduler = Literal["cron", "launchd", "systemd"]


def _slug(bundle: Bundle) -> str:
    digest = hashlib.sha256(str(bundle.root).encode()).hexdigest()[:8]
    stem = "".join(c if c.isalnum() else "-" for c in bundle.root.name.lower()).strip("-")
    return f"{stem or 'bundle'}-{digest}"


def tick_argv(bundle: Bundle, trigger: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ouro.cli",
        "--bundle",
        str(bundle.root),
        "habits",
        "tick",
        "--trigger",
        trigger,
    ]


def _error_log(bundle: Bundle) -> Path:
    return bundle.state / "habits" / "tick-errors.log"


def cron_marker(bundle: Bundle) -> str:
    return f"# ouro-habits {bundle.root}"


def cron_line(bundle: Bundle) -> str:
    command = " ".join(shlex.quote(a) for a in tick_argv(bundle, "cron"))
    log = shlex.quote(str(_error_log(bundle)))
    return f"* * * * * {command} >/dev/null 2>>{log} {cron_marker(bundle)}"


def launchd_plist(bundle: Bundle) -> tuple[str, str]:
    label = f"dev.ouro.habits.{_slug(bundle)}"
    args = "\n".join(f"    <string>{escape(a)}</string>" for a in tick_argv(bundle, "launchd"))
    text = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{label}</string>
  <key>ProgramArguments</key>
  <array>
{args}
  </array>
  <key>StartInterval</key>
  <integer>60</integer>
  <key>StandardOutPath</key>
  <string>/dev/null</string>
  <key>StandardErrorPath</key>
  <string>{escape(str(_error_log(bundle)))}</string>
</dict>
</plist>
"""
    return label, text


def systemd_units(bundle: Bundle) -> tuple[str, str, str]:
    name = f"ouro-habits-{_slug(bundle)}"
    command = " ".join(shlex.quote(a) for a in tick_argv(bundle, "cron"))
    service = f"""[Unit]
Description=ouro habits tick for {bundle.root}

[Service]
Type=oneshot
ExecStart={command}
StandardOutput=null
StandardError=append:{_error_log(bundle)}
"""
    timer = f"""[Unit]
Description=ouro habits tick every minute for {bundle.root}

[Timer]
OnCalendar=*-*-* *:*:00
AccuracySec=1s

[Install]
WantedBy=timers.target
"""
    return name, service, timer


def _crontab(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["crontab", *args], input=stdin, capture_output=True, text=True, timeout=30
        )
    except FileNotFoundError:
        raise OuroError(
            "crontab is not installed on this machine",
            hint="install cron, or use 'ouro habits install launchd|systemd'",
        ) from None


def _write_cron(bundle: Bundle, line: str) -> bool:
    current = _crontab(["-l"])
    # "crontab -l" exits 1 with "no crontab for USER" when there is none yet
    existing = current.stdout if current.returncode == 0 else ""
    if current.returncode != 0 and "no crontab" not in current.stderr.lower():
        raise OuroError(
            f"crontab -l failed: {current.stderr.strip()}",
            hint="fix crontab access, or install the printed line by hand",
        )
    lines = existing.splitlines()
    if line in lines:
        return False
    marker = cron_marker(bundle)
    kept = [ln for ln in lines if not ln.rstrip().endswith(marker)]
    loaded = _crontab(["-"], "\n".join([*kept, line]) + "\n")
    if loaded.returncode != 0:
        raise OuroError(
            f"crontab - refused the new table: {loaded.stderr.strip()}",
            hint="install the printed line by hand with 'crontab -e'",
        )
    return True


def _write_file(path: Path, text: str) -> bool:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    atomic_write_text(path, text)
    return True


def install_entry(bundle: Bundle, scheduler: Scheduler, *, write: bool = False) -> dict[str, Any]:
    home = Path.home()
    result: dict[str, Any] = {"scheduler": scheduler, "written": write, "changed": False}
    if scheduler == "cron":
        line = cron_line(bundle)
        result.update({"entry": line, "files": []})
        if write:
            result["changed"] = _write_cron(bundle, line)
        result["next"] = (
            "crontab -l  (to see it)"
            if write
            else "rerun with --write, or 'crontab -e' and add the line"
        )
    elif scheduler == "launchd":
        label, text = launchd_plist(bundle)
        path = home / "Library" / "LaunchAgents" / f"{label}.plist"
        result.update({"entry": text, "files": [str(path)]})
        if write:
            result["changed"] = _write_file(path, text)
        result["next"] = f"launchctl bootstrap gui/$(id -u) {shlex.quote(str(path))}"
    else:
        name, service, timer = systemd_units(bundle)
        folder = home / ".config" / "systemd" / "user"
        paths = [folder / f"{name}.service", folder / f"{name}.timer"]
        result.update({"entry": service + "\n" + timer, "files": [str(p) for p in paths]})
        if write:
            changed = [_write_file(p, t) for p, t in zip(paths, (service, timer), strict=True)]
            result["changed"] = any(changed)
        result["next"] = (
            f"systemctl --user daemon-reload && systemctl --user enable --now {name}.timer"
        )
    return result
