"""Running a drill: a temporary copy of the bundle, a probe, a result.

Each drill starts from a copy of the bundle as it was (without
``state/index``, ``state/locks`` and ``state/sessions``, which are rebuildable
or private, and without a symlink leading outside or a special file, which are
never read), so the real bundle is only ever read. The drills of one run share
one ``Scratch``: the bundle is copied once, and before each later drill the
copy is put back as it was -- every entry whose ``lstat`` differs from the one
taken after the copy (type, mode, inode, size, mtime, ctime: any write,
``chmod``, ``utime`` or replacement moves the ctime or the inode) is removed,
and whatever is missing is copied again from the bundle. Creating files is the
expensive part of a copy (on a year's bundle, 15,000 files: ~11 s here), and a
drill changes a handful. If the bundle itself changed since the copy, the
scratch copies it whole again rather than mix two moments. The copy is deleted
after the run. A drill reports through a ``Probe``: each expectation is one
check with what was expected, what was seen, and where to look when it failed.

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
import stat
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
from ouro.store.stamp import RACY_NS

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


Sig = tuple[int, int, int, int, int, int]


def _sig(st: os.stat_result) -> Sig:
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)


class Scratch:
    """A copy of ``bundle`` that ``fresh()`` hands out as it was at the copy."""

    def __init__(self, bundle: Bundle) -> None:
        self.source = bundle.root
        self.inside = Inside(bundle.root)
        self.base: Path | None = None  # made by the first ``fresh()``
        self.root = bundle.root  # (the copy's root once made)
        #: relative name -> (the source's sig when copied, the copy's sig)
        self.entries: dict[str, tuple[Sig, Sig]] = {}

    def close(self) -> None:
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fresh(self) -> Bundle:
        """The copy, as the bundle was when it was copied (copied now the first time)."""
        try:
            kept = self.base is not None and self._put_back()
        except OSError:
            kept = False
        if not kept:
            self.close()
            self.base = Path(tempfile.mkdtemp(prefix="ouro-drill-"))
            self.root = self.base / self.source.name
            self.entries.clear()
            self._copy("")
        # a drill's first write must move the stamp of whatever it touches
        time.sleep(RACY_NS / 1e9)
        return Bundle(self.root)

    def _copy(self, rel: str) -> None:
        """Copy the source's ``rel`` (a folder with what it holds) into the copy."""
        src = os.path.join(self.source, rel) if rel else str(self.source)
        dst = os.path.join(self.root, rel) if rel else str(self.root)
        st = os.lstat(src)
        if rel in SKIP:
            return
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(dst)
            with os.scandir(src) as it:
                names = sorted(entry.name for entry in it)
            for name in names:
                self._copy(f"{rel}/{name}" if rel else name)
            shutil.copystat(src, dst, follow_symlinks=False)
        elif stat.S_ISLNK(st.st_mode):
            # a symlink leading outside is never read, so the copy goes without
            # it (kept, a drill's write through it would be refused as an escape)
            if not self.inside.path(src):
                return
            os.symlink(os.readlink(src), dst)
            shutil.copystat(src, dst, follow_symlinks=False)
        elif stat.S_ISREG(st.st_mode):
            shutil.copy2(src, dst)
        else:  # a FIFO or a device: never read, never waited on
            return
        if rel:
            self.entries[rel] = (_sig(st), _sig(os.lstat(dst)))

    def _put_back(self) -> bool:
        """Undo a drill's changes to the copy; False when the source moved since."""
        if not os.path.isdir(self.root):
            return False
        seen: dict[str, Sig] = {}
        self._walk("", seen)
        folders = set()  # folders whose entries changed: their times are put back
        # what the drill made or changed goes, children before their folder
        for rel in sorted(seen, reverse=True):
            have = seen[rel]
            known = self.entries.get(rel)
            if known is not None and known[1] == have:
                continue
            if known is not None and stat.S_ISDIR(have[0]) and stat.S_ISDIR(known[1][0]):
                folders.add(rel)  # its entries are put back one by one
                continue
            path = os.path.join(self.root, rel)
            if stat.S_ISDIR(have[0]):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            del seen[rel]
            folders.add(os.path.dirname(rel))
        for rel, (was, _) in sorted(self.entries.items()):  # a folder before what it holds
            if rel in seen:
                continue
            try:
                moved = _sig(os.lstat(os.path.join(self.source, rel))) != was
            except OSError:
                moved = True
            if moved:
                return False
            self._copy_one(rel, was)
            folders.add(os.path.dirname(rel))
        for rel in sorted(folders, reverse=True):
            if rel and rel not in self.entries:
                continue  # a folder the drill made: gone
            src, dst = os.path.join(self.source, rel), os.path.join(self.root, rel)
            shutil.copystat(src, dst, follow_symlinks=False)
            if rel:
                self.entries[rel] = (self.entries[rel][0], _sig(os.lstat(dst)))
        return True

    def _copy_one(self, rel: str, was: Sig) -> None:
        src = os.path.join(self.source, rel)
        dst = os.path.join(self.root, rel)
        if stat.S_ISDIR(was[0]):
            os.mkdir(dst)
            shutil.copystat(src, dst, follow_symlinks=False)
        elif stat.S_ISLNK(was[0]):
            os.symlink(os.readlink(src), dst)
            shutil.copystat(src, dst, follow_symlinks=False)
        else:
            shutil.copy2(src, dst)
        self.entries[rel] = (was, _sig(os.lstat(dst)))

    def _walk(self, rel: str, seen: dict[str, Sig]) -> None:
        folder = os.path.join(self.root, rel) if rel else str(self.root)
        known = self.entries.get(rel)
        if (
            rel
            and known is not None
            and stat.S_IMODE(known[1][0]) != stat.S_IMODE(os.lstat(folder).st_mode)
        ):
            os.chmod(folder, stat.S_IMODE(known[1][0]))  # a drill shut it: open it again
        with os.scandir(folder) as it:
            entries = list(it)
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            seen[child] = _sig(st)
            if stat.S_ISDIR(st.st_mode):
                self._walk(child, seen)


@contextmanager
def drill_copy(bundle: Bundle) -> Iterator[Bundle]:
    """A throwaway copy of ``bundle`` (deleted on exit)."""
    with Scratch(bundle) as scratch:
        yield scratch.fresh()


def run_one(name: str, drill: Drill, bundle: Bundle, scratch: Scratch) -> dict[str, Any]:
    """Run one drill on ``scratch``'s fresh copy of ``bundle``."""
    probe = Probe()
    started = time.perf_counter()
    crash: str | None = None
    try:
        drill(scratch.fresh(), probe)
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
