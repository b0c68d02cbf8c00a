"""Keep the index in step with changes made outside ouro (an editor, git pull).

Contract:
- Exactly one watcher per bundle: it holds ``state/locks/watch.lock`` for its
  whole life; a second one is refused with a message naming the holder's pid.
- It watches ``desk/`` only (never ``arc/`` or ``state/``), reacts to
  close-after-write, move and delete events, and applies them through
  ``touch_paths`` in small debounced batches; a full ``sync`` runs first so
  changes made while no watcher ran are picked up too.
- watchdog is imported here, and this module only from ``ouro watch``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import Conflict, LockTimeout
from ouro.index.sync import sync, touch_paths
from ouro.store.lock import FileLock

DEBOUNCE_S = 0.2


def take_watch_lock(bundle: Bundle) -> FileLock:
    lock = FileLock(bundle.lock_path("watch"), timeout=0, purpose="ouro watch")
    try:
        lock.acquire()
    except LockTimeout as exc:
        holder = exc.message.rsplit("held by ", 1)[-1]
        raise Conflict(
            f"another watcher is already watching {bundle.root} ({holder})",
            hint="one watcher per bundle is enough; stop that one first if you want to restart it",
        ) from None
    return lock


class _Pending:
    """Paths seen by watchdog's thread, drained by the apply loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[Path] = set()

    def add(self, *paths: str | bytes) -> None:
        with self._lock:
            for p in paths:
                text = p.decode() if isinstance(p, bytes) else p
                if text:
                    self._paths.add(Path(text))

    def drain(self) -> list[Path]:
        with self._lock:
            paths, self._paths = sorted(self._paths), set()
        return paths


def _handler(pending: _Pending) -> Any:
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def on_closed(self, event: Any) -> None:
            pending.add(event.src_path)

        def on_moved(self, event: Any) -> None:
            pending.add(event.src_path, event.dest_path)

        def on_deleted(self, event: Any) -> None:
            pending.add(event.src_path)

        def on_created(self, event: Any) -> None:
            if event.is_directory:  # a folder moved in from elsewhere
                pending.add(event.src_path)

    return Handler()


def watch(
    bundle: Bundle,
    *,
    stop: threading.Event,
    on_ready: Callable[[], None] | None = None,
    on_batch: Callable[[list[Path]], None] | None = None,
) -> None:
    """Run until ``stop`` is set. The caller holds the watch lock."""
    from watchdog.observers import Observer

    pending = _Pending()
    observer = Observer()
    observer.schedule(_handler(pending), str(bundle.desk), recursive=True)
    observer.start()
    try:
        sync(bundle)  # after the observer starts, so nothing falls between the two
        if on_ready:
            on_ready()
        while not stop.wait(DEBOUNCE_S):
            paths = pending.drain()
            if paths:
                touch_paths(bundle, paths)
                if on_batch:
                    on_batch(paths)
    finally:
        observer.stop()
        observer.join(timeout=5)
    # apply whatever arrived while stopping
    paths = pending.drain()
    if paths:
        touch_paths(bundle, paths)
