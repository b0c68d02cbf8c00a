"""A deterministic, realistic bundle at a chosen scale, for benchmarks.

    python bench/corpus.py PATH [--facts 100000] [--notes 10000] [--tasks 5000]
                                [--events 10000] [--seed 7]

``build_corpus(path, facts=, notes=, tasks=, events=, seed=) -> Bundle`` is the
library entry other benchmarks use. Content comes from a seeded
``random.Random``: the same seed gives the same texts, entities, titles and
times (ids from ``new_id`` are time-based, so they differ between runs).

Facts go through ``ouro.desk.record.append_facts_batch`` (the function behind
``diary_write``, so lines are byte-identical to single writes) in chunks.
Tasks and notes use the Desk front-matter builders (``new_task_meta``, the note
keys) and plain file writes, then ``regenerate_manifest`` once: the per-file
fsync of the interactive writers would make 15k files take minutes. Events go
through the Arc event check (``event_line``) into day files, then one ``record_event``
builds the checkpoint the way a real writer would.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import orjson

from ouro.arc import paths as arc_paths
from ouro.arc.events import event_line
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.desk import notes as desk_notes
from ouro.desk.docs import ordered, render_doc
from ouro.desk.record import FactDraft, append_facts_batch
from ouro.desk.tasks import STATUSES, new_task_meta
from ouro.desk.tracks import add_track

CHUNK = 10_000
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "vo",
    "shi",
    "pe",
    "da",
    "zu",
    "ri",
    "an",
    "el",
    "or",
    "um",
    "ix",
    "by",
    "qu",
    "fe",
)
TEMPLATES = (
    "{e} prefers {w1} over {w2} when {w3} is {w4}",
    "{e} said the {w1} {w2} runs every {w3} at {n}",
    "the {w1} service for {e} needs {w2} {w3} before {w4}",
    "{e} uses {w1} for {w2} and keeps {w3} in {w4}",
    "deploys of {w1} fail when {w2} {w3} exceeds {n}",
    "{e} asked to avoid {w1} {w2} during {w3}",
)


def _vocab(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _time(n: int, total: int) -> str:
    """Spread over 2025 deterministically, in creation order."""
    seconds = int(365 * 86400 * n / max(total, 1))
    day, rest = divmod(seconds, 86400)
    month, mday = 1 + day // 31 % 12, 1 + day % 28
    return (
        f"2025-{month:02d}-{mday:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}.000Z"
    )


def _facts(bundle: Bundle, rng: random.Random, words: list[str], count: int) -> None:
    entities = [
        f"{rng.choice(words)} {rng.choice(words)}" if i % 3 == 0 else rng.choice(words)
        for i in range(max(10, count // 50))
    ]
    weights = [1.0 / (rank + 1) for rank in range(len(entities))]  # Zipf-like
    drafts: list[FactDraft] = []
    for n in range(count):
        picked = rng.choices(entities, weights=weights, k=rng.choice((0, 1, 1, 1, 2)))
        text = rng.choice(TEMPLATES).format(
            e=picked[0] if picked else rng.choice(words),
            n=rng.randint(1, 999),
            w1=rng.choice(words),
            w2=rng.choice(words),
            w3=rng.choice(words),
            w4=rng.choice(words),
        )
        drafts.append(
            FactDraft(
                text,
                about=picked,
                source=f"session {n // 40}",
                trust=rng.choice(("told", "verified", "inferred")),
                created_at=_time(n, count),
            )
        )
        if len(drafts) == CHUNK:
            append_facts_batch(bundle, drafts, force=True)
            drafts = []
    if drafts:
        append_facts_batch(bundle, drafts, force=True)


def _paragraph(rng: random.Random, words: list[str], sentences: int) -> str:
    out = []
    for _ in range(sentences):
        out.append(
            " ".join(rng.choice(words) for _ in range(rng.randint(6, 16))).capitalize() + "."
        )
    return " ".join(out) + "\n"


def _tasks(bundle: Bundle, rng: random.Random, words: list[str], count: int) -> None:
    tracks = [add_track(bundle, f"track {i}").name for i in range(max(1, count // 250))]
    for n in range(count):
        track = tracks[n % len(tracks)]
        title = f"{rng.choice(words)} the {rng.choice(words)} {rng.choice(words)} {n}"
        meta = new_task_meta(
            track,
            title,
            priority=rng.randint(0, 4),
            acceptance=f"{rng.choice(words)} passes",
            created=_time(n, count),
        )
        meta["status"] = rng.choices(STATUSES, weights=(50, 5, 5, 30, 10))[0]
        path = bundle.desk / track / f"task-{n:05d}" / "task.md"
        path.parent.mkdir(parents=True)
        path.write_text(render_doc(meta, _paragraph(rng, words, 3)))


def _notes(bundle: Bundle, rng: random.Random, words: list[str], count: int) -> None:
    folder = desk_notes.notes_dir(bundle)
    for n in range(count):
        title = f"{rng.choice(words)} {rng.choice(words)} guide {n}"
        when = _time(n, count)
        meta = ordered(
            {
                "title": title,
                "tags": sorted({rng.choice(words[:50]) for _ in range(2)}),
                "created": when,
                "updated": when,
            },
            desk_notes.NOTE_KEYS,
        )
        body = "\n".join(
            _paragraph(rng, words, rng.randint(3, 12)) for _ in range(rng.randint(1, 4))
        )
        (folder / f"note-{n:05d}.md").write_text(render_doc(meta, body))
    desk_notes.regenerate_manifest(bundle)


def _events(bundle: Bundle, rng: random.Random, words: list[str], count: int) -> None:
    if count <= 0:
        return
    folder = arc_paths.events_dir(bundle)
    kinds = ("tool_completed", "agent_note", "context_built", "model_started")
    per_day = 2_000
    for start in range(0, count - 1, per_day):
        lines = []
        for n in range(start, min(count - 1, start + per_day)):
            when = _time(n, count)
            line = event_line(
                {
                    "id": f"ev-{n:018d}",
                    "kind": kinds[n % 4],
                    "recorded_at": when,
                    "session_ref": f"s-{n // 200}",
                    "summary": f"{rng.choice(words)} {n}",
                }
            )
            lines.append(orjson.dumps(line))
        (folder / f"{_time(start, count)[:10]}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    record_event(bundle, "agent_note", "corpus built", current_ask="benchmark the bundle")


def build_corpus(
    path: Path | str,
    *,
    facts: int = 100_000,
    notes: int = 10_000,
    tasks: int = 5_000,
    events: int = 10_000,
    seed: int = 7,
) -> Bundle:
    bundle = Bundle.init(Path(path), agent="bench")
    rng = random.Random(seed)
    words = _vocab(rng, 3000)
    _facts(bundle, rng, words, facts)
    _tasks(bundle, rng, words, tasks)
    _notes(bundle, rng, words, notes)
    _events(bundle, rng, words, events)
    return bundle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=5_000)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    start = time.perf_counter()
    build_corpus(
        args.path,
        facts=args.facts,
        notes=args.notes,
        tasks=args.tasks,
        events=args.events,
        seed=args.seed,
    )
    print(f"built {args.path} in {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main()
