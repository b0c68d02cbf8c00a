"""``ouro watch``: keep the index in step with outside edits until stopped."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Annotated

from ouro.spec import P


def watch(*, quiet: Annotated[bool, P("Do not print each applied batch.")] = False) -> int:
    """Watch desk/ and apply outside changes to the index (one watcher per bundle)."""
    from ouro.cli.common import bundle_from
    from ouro.index.watch import take_watch_lock
    from ouro.index.watch import watch as watching

    bundle = bundle_from()
    lock = take_watch_lock(bundle)
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    def ready() -> None:
        sys.stderr.write(f"watching {bundle.desk} (pid {os.getpid()}); Ctrl-C stops\n")
        sys.stderr.flush()

    def batch(paths: list[Path]) -> None:
        if not quiet:
            sys.stderr.write(f"indexed {len(paths)} changed path(s)\n")
            sys.stderr.flush()

    try:
        watching(bundle, stop=stop, on_ready=ready, on_batch=batch)
    finally:
        lock.release()
    sys.stderr.write("watcher stopped\n")
    return 0
