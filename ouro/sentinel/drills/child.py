"""Drill children: perform one real write, announce it, wait to be killed.

``python -m ouro.sentinel.drills.child append-event ROOT ASK NEXT``
    Under the Arc lock, append a ``turn_accepted`` event with the real
    ``append_jsonl`` the recorder uses, then stop before the checkpoint
    rewrite (exactly where ``ouro.arc.recorder.append_locked`` would do it).

``python -m ouro.sentinel.drills.child write-fact ROOT TEXT``
    Write a diary fact with the real Desk writer, then stop before the index
    write-through (where ``b.diary.write``, ``ouro.api.record``, would do it).

After the write the child prints the point it reached and blocks reading
stdin; the drill SIGKILLs it there. If stdin closes instead (the drill died),
the child exits with status 3.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ouro.bundle import Bundle


def _reached(point: str) -> None:
    sys.stdout.write(point + "\n")
    sys.stdout.flush()
    sys.stdin.read()
    raise SystemExit(3)


def append_event(bundle: Bundle, ask: str, nxt: str) -> None:
    from ouro.arc import paths
    from ouro.arc.recorder import build_event
    from ouro.store.jsonl import append_jsonl

    with paths.arc_lock(bundle, "drill: crash after append"):
        line = build_event(
            bundle,
            "turn_accepted",
            "drill: killed between the event append and the checkpoint write",
            current_ask=ask,
            next_safe_action=nxt,
        )
        append_jsonl(paths.events_dir(bundle) / paths.day_file_name(line["recordedAt"]), [line])
        _reached("appended")


def write_fact(bundle: Bundle, text: str) -> None:
    from ouro.desk.record import FactDraft
    from ouro.desk.record import write_fact as write

    write(bundle, FactDraft(text=text, about=["sentinel-drill"], source="ouro drill"))
    _reached("written")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: child append-event ROOT ASK NEXT | write-fact ROOT TEXT\n")
        return 2
    command, root, *rest = argv
    bundle = Bundle(Path(root))
    if command == "append-event" and len(rest) == 2:
        append_event(bundle, rest[0], rest[1])
    elif command == "write-fact" and len(rest) == 1:
        write_fact(bundle, rest[0])
    else:
        sys.stderr.write(f"unknown drill child command {command!r} {rest!r}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
