"""Running a habit's body -- an agent or a ``run:`` command -- bounded.

``run_body`` starts the body without a shell, in its own process group, with
stdin closed; it copies stdout and stderr into ``stdout.log`` / ``stderr.log``
of the session folder up to ``OUTPUT_LIMIT`` bytes each (the rest is read and
dropped, so a chatty body never blocks nor fills the disk); at the habit's
timeout it sends the whole group SIGTERM, then SIGKILL after ``KILL_GRACE``.
If the runner itself is interrupted the group is killed before the interrupt
propagates.

A body that exits non-zero or times out is described by the end of its stderr,
or of its stdout when stderr is empty (``output_tail``): the logs are deleted
with the session folder, so the receipt is where the reason survives. Terminal
control (a host's colours) is removed from it (``ouro.models.terminal``).

A ``run:`` command runs in the bundle root (so ``python habits/bin/check.py``
works; a first word with a ``/`` is taken relative to it); an agent runs in the
session folder (``ouro.habits.agents``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ouro.models.terminal import plain
from ouro.store.bounded import open_regular

KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of a timed-out body
OUTPUT_LIMIT = 1_000_000  # bytes of stdout (and of stderr) kept per run
_DRAIN = 5.0  # seconds to wait for the output copiers once the body has gone


@dataclass
class BodyResult:
    exit_code: int | None
    errors: list[str]
    timed_out: bool = False
    output_truncated: bool = False
    started: bool = True
    notes: list[str] = field(default_factory=list)


class _Copier(threading.Thread):
    """Copies one pipe into a file, keeping at most ``limit`` bytes."""

    def __init__(self, source: IO[bytes], target: Path, limit: int) -> None:
        super().__init__(daemon=True)
        self.source, self.target, self.limit = source, target, limit
        self.truncated = False

    def run(self) -> None:
        kept = 0
        with open(self.target, "wb") as out:
            while chunk := self.source.read(65536):
                room = self.limit - kept
                if room > 0:
                    out.write(chunk[:room])
                    kept += min(room, len(chunk))
                if len(chunk) > max(room, 0):
                    self.truncated = True
        self.source.close()


def run_body(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: int, folder: Path, what: str
) -> BodyResult:
    """Run ``argv``; ``what`` names it in errors ("the body", "the agent claude")."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills it all
        )
    except OSError as exc:
        return BodyResult(
            None, [f"cannot start {what} {argv[0]!r}: {exc.strerror or exc}"], started=False
        )
    assert proc.stdout is not None and proc.stderr is not None
    copiers = [
        _Copier(proc.stdout, folder / "stdout.log", OUTPUT_LIMIT),
        _Copier(proc.stderr, folder / "stderr.log", OUTPUT_LIMIT),
    ]
    for copier in copiers:
        copier.start()
    timed_out = False
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        timed_out = True
        code = proc.returncode
    except BaseException:
        kill_group(proc)
        raise
    finally:
        for copier in copiers:
            copier.join(_DRAIN)  # a grandchild that left the group may hold a pipe open
    truncated = any(c.truncated for c in copiers)
    notes = [f"output of {what} cut at {OUTPUT_LIMIT:,} bytes per stream"] if truncated else []
    if timed_out:  # what it said last may say why it hung (a login prompt, a retry loop)
        errors = [f"{what} timed out after {timeout}s and was killed{output_tail(folder)}"]
        return BodyResult(code, errors, timed_out=True, output_truncated=truncated, notes=notes)
    if code == 0:
        return BodyResult(0, [], output_truncated=truncated, notes=notes)
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        errors = [f"{what} was killed by signal {name}"]
    else:
        errors = [f"{what} exited with status {code}{output_tail(folder)}"]
    return BodyResult(code, errors, output_truncated=truncated, notes=notes)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # a grandchild that left the group (setsid) is not ours to chase


def output_tail(folder: Path, limit: int = 400) -> str:
    """``": <the end of stderr>"``, else of stdout, else ``""``: the reason a body gave.

    Hosts do not agree on where a failure goes: Claude Code prints "Not logged in"
    on stdout and nothing on stderr, and the logs go with the session folder. At
    most ``limit`` bytes; the receipt's writer redacts it."""
    for name in ("stderr.log", "stdout.log"):
        try:
            with open(open_regular(folder / name), "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - limit))
                data = log.read(limit)
        except OSError:
            continue
        # a cut may fall inside a character: its remains are dropped
        text = plain(data.decode("utf-8", "replace").lstrip("\ufffd")).strip()
        if text:
            return f": {text}"
    return ""
