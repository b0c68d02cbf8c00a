"""Advisory exclusive locks between processes (``fcntl.flock``).

The lock file holds the holder's pid and purpose so a timeout can name who
holds it. The file is never deleted: deleting a flock'd file would let two
processes lock two different inodes under one name.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from ouro.errors import LockTimeout


class FileLock:
    """``with FileLock(path, timeout=10, purpose="diary write"):`` ..."""

    def __init__(self, path: Path, *, timeout: float = 10.0, purpose: str = "") -> None:
        self.path = path
        self.timeout = timeout
        self.purpose = purpose
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise LockTimeout(
                        f"could not lock {self.path} within {self.timeout:g}s; held by {holder}",
                        hint="wait for that process to finish and retry; if the pid is gone, "
                        "the lock frees itself (flock dies with its holder)",
                    ) from None
                time.sleep(delay)
                # Short cap: a waiter that sleeps long keeps missing the brief
                # gaps between a busy holder's lock periods and starves.
                delay = min(delay * 2, 0.002)
        stamp = f"pid={os.getpid()} purpose={self.purpose}\n".encode()
        # Write, then cut to length: truncating to zero first makes ext4
        # (auto_da_alloc) flush the file on close, ~3 ms per lock.
        os.pwrite(fd, stamp, 0)
        os.ftruncate(fd, len(stamp))
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "an unknown process (no pid recorded yet)"


def lock_fd(fd: int, path: Path, timeout: float) -> None:
    """Take an exclusive flock on an already-open file descriptor."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(
                    f"could not lock {path} for appending within {timeout:g}s",
                    hint="another process is appending to it; retry shortly",
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
