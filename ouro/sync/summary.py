"""What a sync commit carries, counted from git's staged diff (for its message and event).

Counts: facts and events *added* (lines new in ``facts.jsonl`` and the
flight-recorder day files), sentinel receipts, and the claims, obligations,
tasks, notes, habit runs, conflicts and other files that changed.
"""

from __future__ import annotations

from typing import Any

from ouro.store.git import Git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: (label, test on a bundle-relative path); the first match counts the path.
_KINDS: tuple[tuple[str, str, str], ...] = (
    ("claims", "arc/claims/", ""),
    ("obligations", "arc/obligations/", ""),
    ("habit runs", "arc/flight-recorder/habit-receipts/", ""),
    ("conflicts", "arc/sync/conflicts/", ""),
    ("tasks", "desk/", "/task.md"),
    ("notes", "desk/_record/notes/", ".md"),
)
_LINES = (
    ("facts", "desk/_record/diary/facts.jsonl", ""),
    ("events", "arc/flight-recorder/events/", ".jsonl"),
    ("sentinel receipts", "arc/flight-recorder/context-loss-sentinel/history/", ".jsonl"),
)


def staged_summary(git: Git, head: str | None) -> dict[str, int]:
    """Counts for what ``git add`` staged against ``head`` (None: no commit yet).

    Lines added to an append-only log are its new records; git counts them
    (``--numstat``) without ouro reading the whole log twice.
    """
    base = head or EMPTY_TREE
    raw = git.run("diff", "--cached", "--relative", "--numstat", "--no-renames", "-z", base)
    counts: dict[str, int] = {}
    for entry in raw.stdout.split(b"\0"):
        added, _, rest = entry.partition(b"\t")
        _, _, name = rest.partition(b"\t")
        if not name:
            continue
        label = _label(name.decode("utf-8", "replace"))
        if label in ("facts", "events", "sentinel receipts"):
            n = int(added) if added.isdigit() else 0
        else:
            n = 1
        if n:
            counts[label] = counts.get(label, 0) + n
    return counts


def _label(path: str) -> str:
    for label, prefix, suffix in _LINES:
        if path.startswith(prefix) and path.endswith(suffix):
            return label
    for label, prefix, suffix in _KINDS:
        if path.startswith(prefix) and path.endswith(suffix):
            return label
    return "other files"


def describe(counts: dict[str, Any]) -> str:
    if not counts:
        return "nothing new"
    parts = []
    for label, n in counts.items():
        changed = (
            "" if label in ("facts", "events", "sentinel receipts", "habit runs") else " changed"
        )
        noun = label if n != 1 else label[:-1]
        parts.append(f"{n} {noun}{changed}")
    return ", ".join(parts)
