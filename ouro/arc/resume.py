"""Reading the resume checkpoint: pure, never raises, never writes.

``read_resume(bundle)`` returns the checkpoint as of now. When
``latest.json`` is missing, malformed, inconsistent with the log or older than
the newest event, the state is rebuilt (or caught up) in process and the gap is
named in ``recorder.issues``. ``canContinue`` is false whenever the state is
incomplete, blocked, the ask is not current, or the recorder is degraded.
"""

from __future__ import annotations

from ouro.arc import checkpoint as ckpt
from ouro.bundle import Bundle

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

#: Keys that are caches for the next fold, not part of the resume answer.
INTERNAL = ("fold", "stores", "storesDigest")


def read_resume_full(bundle: Bundle) -> dict[str, Any]:
    """The checkpoint as of now, caches included (for orient and queries)."""
    return ckpt.compute(bundle).checkpoint


def read_resume(bundle: Bundle) -> dict[str, Any]:
    """The resume answer as of now, without the fold caches."""
    full = read_resume_full(bundle)
    return {k: v for k, v in full.items() if k not in INTERNAL}
