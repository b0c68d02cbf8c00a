"""Generate ``bundles/legacy-example.ouro``: a bundle in the old layout.

Run ``python bundles/make_legacy_example.py`` to (re)write the committed copy;
the output is deterministic (fixed seed, fixed times). Tests and
``bench/migrate.py`` call ``build(path, facts=..., notes=...)`` for larger
copies.

What it holds, on purpose:

- ``bundle.json`` at layout version 1 and no ``arc/`` scaffold (an old harness);
- ``diary/facts.jsonl`` in several legacy shapes (``entities`` / ``about``,
  ``created_at`` / ``timestamp`` / ``createdAt``, provenance flat or nested,
  extra fields such as ``embedding``), exact and near-exact duplicates, one
  malformed line and one line without text;
- ``diary/entities.json`` with entries that agree with the facts and some that
  conflict (stale counts, unknown ids, extra keys);
- ``diary/daily/`` where one day already exists in ``desk/_record``;
- ``notes/`` with and without front matter, a legacy ``.index.json``, a name
  that collides with an existing ``desk/_record/notes`` note, and an image;
- ``journal/`` with Markdown, text, a nested folder, a binary file, a symlink
  and an entry whose front matter is broken, and entries of every triage
  route: open checklist items and a TODO line (task), Learned/Note to
  self/Decided/TIL lines including an exact and a near-duplicate of existing
  facts (facts), long reference prose and a titled retro (note), short log
  lines, an empty day and scratch thinking (drop), and a notebook file split
  into dated sections of different routes;
- a small populated ``desk/_record`` (facts, a daily file, notes).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

BASE = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
PEOPLE = ["Ari", "Bo", "Cyd", "Dana", "Eli"]
PROJECTS = ["kestrel", "harbor", "ouro", "lantern"]
VERBS = [
    "prefers short replies in the morning",
    "reviews pull requests on Tuesdays",
    "wants release notes written in plain words",
    "asked to be told before any deploy",
    "keeps the staging credentials in the team vault",
    "likes a summary at the top of long messages",
    "is the owner of the billing service",
    "moved the weekly sync to Thursday",
]
TOPICS = [
    "the build cache must be cleared after a toolchain bump",
    "integration tests need the local queue running",
    "the nightly export runs at 02:00 UTC",
    "search results are ranked by recency first",
    "the mobile app pins its API version",
    "log retention is thirty days",
]


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _write(path: Path, data: str | bytes, when: datetime | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    if when is not None:
        stamp = when.timestamp()
        os.utime(path, (stamp, stamp))


def _fact_line(rng: random.Random, n: int, when: datetime) -> tuple[dict[str, object], list[str]]:
    person = rng.choice(PEOPLE)
    project = rng.choice(PROJECTS)
    if rng.random() < 0.5:
        text = f"{person} {rng.choice(VERBS)} ({project}, #{n})"
        ents = [person, project]
    else:
        text = f"In {project}, {rng.choice(TOPICS)} (#{n})"
        ents = [project]
    shape = n % 4
    fid = f"fact_{n:05d}"
    if shape == 0:
        obj: dict[str, object] = {"id": fid, "text": text, "entities": ents,
                                  "created_at": _iso(when), "trust": "told",
                                  "channel": "bluebubbles", "friend_id": person.lower()}
    elif shape == 1:
        obj = {"id": fid, "fact": text, "about": ents, "timestamp": int(when.timestamp()),
               "source": "chat", "embedding": [round(rng.random(), 4) for _ in range(4)]}
    elif shape == 2:
        obj = {"id": fid, "text": text, "about": ents, "createdAt": _iso(when),
               "provenance": {"tool": "diary_add", "friendId": person.lower(),
                              "friendName": person, "trust": "inferred"}}
    else:
        obj = {"id": fid, "content": text, "entities": ", ".join(ents), "date": _iso(when),
               "tags": ["legacy"], "confidence": "high"}
    return obj, [e.casefold() for e in ents]


def _facts(rng: random.Random, count: int) -> tuple[list[str], dict[str, dict[str, object]]]:
    lines: list[str] = []
    entities: dict[str, dict[str, object]] = {}
    texts: list[dict[str, object]] = []
    for n in range(1, count + 1):
        when = BASE + timedelta(minutes=17 * n)
        obj, ents = _fact_line(rng, n, when)
        if n % 25 == 0 and texts:
            # A duplicate: same text as an earlier fact, new id, different casing/punctuation.
            earlier = rng.choice(texts)
            text = str(earlier.get("text") or earlier.get("fact") or earlier.get("content"))
            obj = {"id": f"fact_{n:05d}", "text": text.upper() + "!" if n % 50 == 0 else text,
                   "created_at": _iso(when)}
            ents = []
        texts.append(obj)
        lines.append(json.dumps(obj, ensure_ascii=False))
        for ent in ents:
            entry = entities.setdefault(ent, {"count": 0, "factIds": [], "lastSeenAt": None})
            entry["count"] = int(entry["count"]) + 1  # type: ignore[call-overload]
            entry["factIds"].append(obj["id"])  # type: ignore[attr-defined]
            entry["lastSeenAt"] = _iso(when)
    # One malformed line (a torn write from the old harness) and one without text.
    lines.insert(min(41, len(lines)), '{"id": "fact_torn", "text": "the deploy key rot')
    lines.insert(min(90, len(lines)), json.dumps({"id": "fact_empty", "entities": ["Bo"]}))
    lines.insert(min(60, len(lines)), "")
    return lines, entities


def build(root: Path, *, facts: int = 320, notes: int = 14, journal: int = 10,
          seed: int = 7, desk: bool = True) -> Path:
    """Write a legacy bundle at ``root`` (which must not exist)."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    _write(root / "bundle.json", json.dumps({"schemaVersion": 1, "layoutVersion": 1,
                                             "agent": "wren", "createdAt": _iso(BASE)},
                                            indent=2) + "\n")
    lines, entities = _facts(rng, facts)
    _write(root / "diary/facts.jsonl", "\n".join(lines) + "\n", BASE + timedelta(days=30))
    # Conflicts: a stale count, an id no fact carries, an entity with extra keys.
    if "ari" in entities:
        entities["ari"]["count"] = int(entities["ari"]["count"]) + 3  # type: ignore[call-overload]
    entities["kestrel-team"] = {"count": 1, "factIds": ["fact_99999"], "lastSeenAt": _iso(BASE)}
    if "harbor" in entities:
        entities["harbor"]["kind"] = "project"
    legacy_entities = {name.title() if name in ("bo", "cyd") else name: v
                       for name, v in entities.items()}
    _write(root / "diary/entities.json", json.dumps(legacy_entities, indent=2) + "\n")
    for day in range(5):
        when = BASE + timedelta(days=day)
        name = when.strftime("%Y-%m-%d")
        _write(root / f"diary/daily/{name}.md",
               f"# {name}\n\nShipped step {day + 1} of the release. Paired with "
               f"{PEOPLE[day % len(PEOPLE)]}.\n", when)
    _write(root / "diary/daily/README.txt", "daily reflections, one file per day\n")
    _notes(root, rng, notes)
    _journal(root, rng, journal)
    if desk:
        first = json.loads(lines[0])
        about = first.get("about") or first.get("entities") or []
        _desk(root, str(first.get("text") or first.get("fact") or first.get("content")),
              [str(a).casefold() for a in about])
    return root


def _notes(root: Path, rng: random.Random, count: int) -> None:
    manifest = []
    for n in range(count):
        topic = TOPICS[n % len(TOPICS)]
        title = f"{PROJECTS[n % len(PROJECTS)].title()} notes {n + 1}"
        when = BASE + timedelta(days=n)
        body = (f"# {title}\n\nRemember: {topic}.\n\n- owner: {PEOPLE[n % len(PEOPLE)]}\n"
                f"- checked: {when.date()}\n")
        slug = f"{PROJECTS[n % len(PROJECTS)]}-notes-{n + 1}"
        if n % 3 == 0:
            text = (f"---\ntitle: {title}\ntags: [{PROJECTS[n % len(PROJECTS)]}]\n"
                    f"created: {_iso(when)}\nupdated: {_iso(when)}\n---\n{body}")
        else:
            text = body
            manifest.append({"slug": slug, "title": title, "tags": ["legacy", "howto"],
                             "created": _iso(when), "updated": _iso(when)})
        _write(root / f"notes/{slug}.md", text, when)
    _write(root / "notes/Release Checklist.md",
           "# Release checklist (old)\n\n1. Tag\n2. Build\n3. Announce in #general\n",
           BASE + timedelta(days=2))
    _write(root / "notes/people/ari.md", "# Ari\n\nPrefers async review. Timezone UTC+1.\n",
           BASE + timedelta(days=3))
    _write(root / "notes/diagram.png", b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256)
                                                              for _ in range(64)))
    _write(root / "notes/.index.json", json.dumps({"notes": manifest}, indent=2) + "\n")


def _journal(root: Path, rng: random.Random, count: int) -> None:
    for n in range(count):
        when = BASE + timedelta(days=n, hours=20)
        name = when.strftime("%Y-%m-%d")
        if n % 3 == 2:
            _write(root / f"journal/{name}.txt",
                   f"Evening log {name}. Quiet day; read the {PROJECTS[n % 4]} design doc.\n",
                   when)
        else:
            _write(root / f"journal/{name}.md",
                   f"# {name}\n\nToday I worked on {PROJECTS[n % 4]}. "
                   f"{rng.choice(TOPICS).capitalize()}.\n", when)
    _write(root / "journal/2025/retro-q1.md",
           "---\ntitle: Q1 retro\nmood: good\n---\nWhat went well: the release train.\n")
    _write(root / "journal/broken-front-matter.md", "---\ntitle: [unclosed\n---\nBody.\n")
    _write(root / "journal/whiteboard.jpg", b"\xff\xd8\xff\xe0" + bytes(range(256)) * 2)
    _triage_journal(root)
    first = (BASE + timedelta(hours=20)).strftime("%Y-%m-%d")
    link = root / "journal/latest.md"
    if not os.path.lexists(link):
        os.symlink(f"{first}.md", link)


def _triage_journal(root: Path) -> None:
    """Journal entries of every triage route (docs/migrating.md, "Journal triage")."""
    day = BASE + timedelta(days=11, hours=21)
    _write(root / "journal/2025-01-17.md",
           "# 2025-01-17\n\nPlanning the harbor cutover.\n\n"
           "- [ ] Write the rollback runbook for harbor\n"
           "- [x] Book the maintenance window\n"
           "- [ ] Ask Dana to review the DNS change\n", day)
    _write(root / "journal/2025-01-18.txt",
           "TODO: rotate the staging credentials before Friday\n", day + timedelta(days=1))
    _write(root / "journal/2025-01-19.md",
           "# 2025-01-19\n\n"
           "- Learned: Ari prefers async review over calls.\n"
           "- Note to self: the lantern beta opens in March.\n"
           "- Decided: lantern ships behind a feature flag.\n"
           "- TIL the kestrel nightly export runs at 02:00 UTC\n", day + timedelta(days=2))
    _write(root / "journal/2025-01-24.md", "# 2025-01-24\n\n", day + timedelta(days=7))
    _write(root / "journal/deploy-pipeline.md",
           "# How the deploy pipeline works\n\n"
           "A push to main runs the unit suite, then builds one container image per service "
           "and tags it with the commit id. The staging deploy pulls the newest tag every ten "
           "minutes and runs the smoke checks against it. A release is a promotion of a tag "
           "that passed staging for at least a day; production pulls it in two waves, first "
           "the canary hosts, then the rest after twenty quiet minutes. Rolling back means "
           "promoting the previous tag again.\n", day + timedelta(days=3))
    _write(root / "journal/notebook.md",
           "# Notebook\n\n"
           "## 2025-01-20 Cache design for harbor\n\n"
           "The harbor cache keeps one entry per tenant and route. Entries expire after five "
           "minutes or when the tenant's settings change, whichever comes first. Writes go "
           "through the cache to the database, never around it, so a reader never sees a "
           "value older than the last write it could have observed. Sharding is by tenant "
           "id, sixteen shards, rebalanced by hand.\n\n"
           "## 2025-01-21\n\n"
           "Scratch: maybe shard by route instead? Or by region? Not sure, sleep on it.\n\n"
           "## 2025-01-22\n\n"
           "- [ ] Draft the lantern launch email\n\n"
           "## 2025-01-23\n\n"
           "Decided: the weekly harbor sync moves to Thursday mornings.\n",
           day + timedelta(days=6))


def _desk(root: Path, shared_text: str, shared_about: list[str]) -> None:
    """A Desk record the current tools already wrote into (both sides must survive)."""
    rec = root / "desk/_record"
    facts = [
        {"schemaVersion": 1, "id": "f-01jgq0a0a0a0a0a0a0", "text": shared_text, "about": shared_about, "source": "chat",
         "createdAt": _iso(BASE), "provenance": {"tool": "diary_write", "channel": "cli",
         "friendId": "ari", "friendName": "Ari", "trust": "told"},
         "hash": "sha256:0"},
        {"schemaVersion": 1, "id": "f-01jgq0b0b0b0b0b0b0", "text": "The lantern beta "
         "opens in March", "about": ["lantern"], "source": "standup",
         "createdAt": _iso(BASE + timedelta(days=40)), "provenance": {"tool": "diary_write",
         "channel": "cli", "friendId": None, "friendName": None, "trust": "verified"},
         "hash": "sha256:0"},
    ]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ouro.desk.factnorm import fact_hash

    for fact in facts:
        fact["hash"] = fact_hash(str(fact["text"]))
    _write(rec / "diary/facts.jsonl", "".join(json.dumps(f, separators=(",", ":")) + "\n"
                                              for f in facts))
    index: dict[str, dict[str, object]] = {}
    for fact in facts:
        for name in fact["about"]:  # type: ignore[attr-defined]
            index[name] = {"count": 1, "factIds": [fact["id"]], "lastSeenAt": fact["createdAt"]}
    _write(rec / "diary/entities.json", json.dumps(index, indent=2, sort_keys=True) + "\n")
    day = BASE.strftime("%Y-%m-%d")
    _write(rec / f"diary/daily/{day}.md", f"# {day}\n\n## 18:00:00Z\n\nWrote the desk note.\n")
    _write(rec / "notes/release-checklist.md",
           "---\ntitle: Release checklist\ntags: [release]\ncreated: 2025-02-01T10:00:00.000Z\n"
           "updated: 2025-02-01T10:00:00.000Z\n---\n1. Freeze\n2. Tag\n3. Build\n4. Verify\n")
    _write(rec / "notes/.index.json", json.dumps({"notes": []}, indent=2) + "\n")


def main() -> None:
    target = Path(__file__).resolve().parent / "legacy-example.ouro"
    if target.exists():
        shutil.rmtree(target)
    build(target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
