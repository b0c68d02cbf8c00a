"""Running a drill: a temporary copy of the bundle, a probe, a result.

Each drill gets its own copy (``shutil.copytree`` of the bundle without
``state/index``, ``state/locks`` and ``state/sessions``, which are rebuildable
or private), so the real bundle is only ever read. The copy is deleted after
the drill. A drill reports through a ``Probe``: each expectation is one check
with what was expected, what was seen, and where to look when it failed.

Crash drills run a real child process (``python -m ouro.drills.child``)
that performs a real write, announces the point it reached on stdout and then
waits on stdin; the drill SIGKILLs it there. If the drill itself dies, the
child sees stdin close and exits, so no child outlives its drill.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.store.guard import Inside

SKIP = ("state/index", "state/locks", "state/sessions")
CHILD_TIMEOUT = 60.0


class DrillAborted(Exception):
    """The drill could not set up its scenario (not a verdict on the bundle)."""


@dataclass
class Probe:
    checks: list[dict[str, Any]] = field(default_factory=list)

    def expect(self, ok: bool, what: str, seen: str = "", look_at: str | None = None) -> bool:
        entry: dict[str, Any] = {"what": what, "ok": bool(ok)}
        if seen:
            entry["seen"] = seen
        if look_at and not ok:
            entry["lookAt"] = look_at
        self.checks.append(entry)
        return bool(ok)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if not c["ok"]]


Drill = Callable[[Bundle, Probe], None]


@contextmanager
def drill_copy(bundle: Bundle) -> Iterator[Bundle]:
    """A throwaway copy of ``bundle`` (deleted on exit)."""
    base = Path(tempfile.mkdtemp(prefix="ouro-drill-"))
    try:
        root = base / bundle.root.name

        inside = Inside(bundle.root)

        def ignore(folder: str, names: list[str]) -> set[str]:
            rel = Path(folder).relative_to(bundle.root).as_posix()
            skip = {n for n in names if (n if rel == "." else f"{rel}/{n}") in SKIP}
            # a symlink leading outside is never read, so the copy goes without it
            # (kept, a drill's write through it would be refused as an escape)
            return skip | {
                n
                for n in names
                if os.path.islink(os.path.join(folder, n))
                and not inside.path(os.path.join(folder, n))
            }

        shutil.copytree(bundle.root, root, symlinks=True, ignore=ignore)
        yield Bundle(root)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_one(name: str, drill: Drill, bundle: Bundle) -> dict[str, Any]:
    probe = Probe()
    started = time.perf_counter()
    crash: str | None = None
    with drill_copy(bundle) as copy:
        try:
            drill(copy, probe)
        except DrillAborted as exc:
            crash = f"could not run: {exc}"
        except Exception as exc:  # a drill reports a crash as its failure, never hides it
            crash = f"crashed: {type(exc).__name__}: {exc}"
    failed = probe.failed
    if crash:
        status = "fail"
        detail = crash
    elif not probe.checks:
        status, detail = "fail", "the drill checked nothing"
    elif failed:
        status = "fail"
        detail = "; ".join(
            c["what"] + (f" (saw {c['seen']})" if "seen" in c else "") for c in failed
        )
    else:
        status, detail = "pass", f"{len(probe.checks)} check(s) held"
    look_at = sorted({c["lookAt"] for c in failed if "lookAt" in c})
    # Drill output is a render surface too: what a drill saw never shows a secret.
    result: dict[str, Any] = redact_obj(
        {
            "name": name,
            "status": status,
            "detail": detail[:2000],
            "checks": probe.checks,
            "lookAt": look_at,
            "durationMs": round((time.perf_counter() - started) * 1000, 1),
        },
        bundle_literals(bundle),
    )
    return result


def kill_child_at(args: list[str], reached: str, *, timeout: float = CHILD_TIMEOUT) -> None:
    """Run a drill child; SIGKILL it as soon as it prints ``reached``."""
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ouro.drills.child", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
        if line != reached:
            proc.kill()
            proc.wait()
            err = proc.stderr.read().decode("utf-8", "replace").strip()
            raise DrillAborted(
                f"child did not reach {reached!r} (said {line!r}; stderr: {err[-400:]})"
            )
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.returncode != -signal.SIGKILL:
            raise DrillAborted(f"child exited {proc.returncode} before it could be killed")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
