"""Planning the journal triage: entries -> task / facts / note / drop items.

Contract: pure (reads the bundle, writes nothing), deterministic for the same
files and routes. ``journal_items`` turns one journal text file into one plan
item per entry (``ouro.migrate.triage`` decides the route) -- an entry routed
to task gives one item per open item and TODO line, and one per done item
(``ouro.migrate.journal_tasks``); ``resolve_facts``
then decides every line of the fact entries against the Desk's facts and the
merged legacy facts -- exact duplicates (the Desk's content hash) are not
written, near-duplicates (the Desk's token overlap > 0.6 with an active fact
about a shared entity) are not written either and stay in the backup -- and
builds the fact records (trust ``migrated``, ``source`` = ``<file>:<line>``)
with deterministic ids, so an interrupted run rebuilds identical ones.
"""

from __future__ import annotations

import re
from typing import Any

from ouro.desk.names import slugify
from ouro.errors import CorruptFile, InvalidInput
from ouro.migrate import documents, journal_tasks, triage
from ouro.migrate.facts import _encode, derived_id
from ouro.migrate.plan import Item, _Ctx, _quarantine
from ouro.migrate.rules import Rule
from ouro.migrate.scan import SourceFile
from ouro.models.clock import parse_time
from ouro.models.hashing import content_hash
from ouro.store.bounded import file_bytes

FACTS_TO = "desk/_record/diary/facts.jsonl"
TRACK_DOC = f"desk/{triage.TRACK}/track.md"


def _created(entry: triage.Entry, src: SourceFile) -> str:
    if entry.date:
        return f"{entry.date}T00:00:00.000Z"
    return documents.mtime_iso(src.mtime_ns)


def _millis(iso: str) -> int:
    try:
        return int(parse_time(iso).timestamp() * 1000)
    except ValueError:
        return 0


def _free(ctx: _Ctx, pattern: str, slug: str) -> str:
    n = 1
    while True:
        candidate = slug if n == 1 else f"{slug[:60].rstrip('-')}-{n}"
        dest = pattern.format(slug=candidate)
        if not ctx.exists(dest):
            ctx.taken.add(dest)
            return dest
        n += 1


def _task_id(locator: str, created: str) -> str:
    digest = content_hash(locator.encode())
    rand = int(digest.split(":", 1)[1][:10], 16) & ((1 << 40) - 1)
    return f"t-{_encode(max(_millis(created), 0), 10)}{_encode(rand, 8)}"


def journal_items(
    ctx: _Ctx,
    src: SourceFile,
    rule: Rule,
    routes: dict[str, dict[str, Any]],
    plan_file: str | None,
) -> tuple[list[Item], list[dict[str, Any]]]:
    """(items, review entries) for one journal text file."""
    data = file_bytes(ctx.root / src.path)
    text = data.decode("utf-8")
    try:
        file_meta, _ = documents.split(text, source=src.path)
    except CorruptFile as exc:
        return [_quarantine(ctx, src, f"front matter unreadable: {exc.message}")], []
    items: list[Item] = []
    review: list[dict[str, Any]] = []
    below = src.path[len(rule.base) + 1 :] if rule.base else src.path
    stem_path = below.rsplit(".", 1)[0] if "." in below.rsplit("/", 1)[-1] else below
    for entry in triage.split_entries(src.path, data):
        meta = file_meta if entry.whole else {}
        body = documents.body_of(entry.text, source=src.path) if entry.whole else entry.text
        fired = triage.classify(body, meta)
        proposed = triage.RULE_ROUTE[fired]
        route, rule_name, why = proposed, fired, triage.RULE_WHY[fired]
        chosen = routes.get(entry.locator)
        if chosen is not None:
            if chosen.get("sourceHash") not in (None, src.hash):
                raise InvalidInput(
                    f"--plan: {entry.locator}: {src.path} changed since the plan was written",
                    hint="remove the plan file and write it again with "
                    "'ouro migrate --dry-run --plan FILE'; nothing was written",
                )
            if chosen["route"] != proposed:
                route, rule_name = chosen["route"], "plan"
                why = f"route set in {plan_file} (proposed {proposed} by rule {fired})"
        created = _created(entry, src)
        detail: dict[str, Any] = {
            "entry": entry.locator,
            "route": route,
            "rule": rule_name,
            "range": None if entry.whole else [entry.start, entry.end],
        }
        review.append(
            {
                "entry": entry.locator,
                "file": src.path,
                "sourceHash": src.hash,
                "bytes": entry.bytes,
                "route": route,
                "proposed": proposed,
                "rule": fired,
                "why": triage.RULE_WHY[fired],
                "preview": triage.preview(body),
            }
        )
        name = stem_path.replace("/", "-") + (
            "" if entry.whole else "-" + entry.locator.split("#")[1]
        )
        if route == "drop":
            dest = f"{ctx.backup}/{src.path}"
            items.append(
                Item(src.path, "dropped", "none", dest, entry.bytes, src.hash, None, why, detail)
            )
        elif route == "note":
            meta_out = documents.journal_meta(
                entry.text if entry.whole else body,
                source=entry.locator,
                source_hash=str(src.hash),
                stem=stem_path.rsplit("/", 1)[-1],
                mtime_ns=src.mtime_ns,
            )
            if not entry.whole:
                meta_out["title"] = entry.title or entry.locator
                meta_out["created"] = meta_out["updated"] = created
            detail["meta"] = meta_out
            rendered = documents.render_with(meta_out, entry.text, source=entry.locator).encode()
            dest = _free(ctx, str(rule.to), slugify(name) or "journal-entry")
            items.append(
                Item(
                    src.path,
                    "moved",
                    "write",
                    dest,
                    entry.bytes,
                    src.hash,
                    content_hash(rendered),
                    why,
                    detail,
                )
            )
        elif route == "task":
            review[-1]["items"] = journal_tasks.review_items(entry)
            items.extend(
                journal_tasks.task_items(
                    data,
                    src,
                    entry,
                    detail,
                    why,
                    created=created,
                    backup=ctx.backup,
                    task_id=_task_id,
                    free=lambda pattern, slug: _free(ctx, pattern, slug),
                )
            )
        else:
            lines = triage.fact_texts(body, entry.first_line + _offset(entry, text))
            if not lines:
                raise InvalidInput(
                    f"--plan: {entry.locator}: route facts, but the entry has no lines to file "
                    "as facts",
                    hint="route it to note or drop instead; nothing was written",
                )
            detail["candidates"] = [[n, t] for n, t in lines]
            detail["created"] = created
            items.append(
                Item(src.path, "merged", "none", FACTS_TO, entry.bytes, src.hash, None, why, detail)
            )
    return items, review


def _offset(entry: triage.Entry, text: str) -> int:
    """Lines of front matter before a whole-file entry's body."""
    if not entry.whole or not text.startswith("---\n"):
        return 0
    body = documents.body_of(text, source=entry.path)
    head = text[: len(text) - len(body)] if text.endswith(body) else ""
    return head.count("\n")


def track_item(ctx: _Ctx, items: list[Item]) -> Item | None:
    tasks = [i for i in items if i.detail.get("route") == "task"]
    if not tasks or ctx.exists(TRACK_DOC):
        return None
    created = min(str(i.detail["meta"]["created"]) for i in tasks)
    meta = {"name": triage.TRACK, "title": "Journal import", "created": created}
    body = "Tasks filed by 'ouro migrate' from open items in the legacy journal.\n"
    from ouro.store.frontmatter import render

    data = render(meta, body).encode()
    ctx.taken.add(TRACK_DOC)
    why = "track for the tasks triaged from the journal"
    return Item(
        "journal triage",
        "created",
        "doc",
        TRACK_DOC,
        len(data),
        None,
        content_hash(data),
        why,
        {"meta": meta, "body": body},
    )


_WORDS = re.compile(r"\w+")


def resolve_facts(
    items: list[Item], existing: list[dict[str, Any]], records: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """(records to append, decisions) for the journal's fact entries.

    A decision is ``[locator, entry, action, fact id, hash, why]`` with action
    merged | deduplicated | near-duplicate.
    """
    from ouro.desk.factnorm import NEAR_THRESHOLD, could_exceed, fact_hash, overlap, tokens
    from ouro.desk.record import MAX_TEXT, FactDraft, build_fact

    if not any(i.detail.get("route") == "facts" for i in items):
        return [], []
    superseded = {f["supersedes"] for f in existing if isinstance(f.get("supersedes"), str)}
    used = {str(f["id"]) for f in [*existing, *records] if isinstance(f.get("id"), str)}
    by_hash: dict[str, str] = {}
    # Token sets are built only for the entities a journal line names (lazily).
    by_entity: dict[str, list[tuple[str, Any]]] = {}
    for fact in [*existing, *records]:
        fid, text = fact.get("id"), fact.get("text")
        if not isinstance(fid, str) or not isinstance(text, str) or fid in superseded:
            continue
        by_hash.setdefault(str(fact.get("hash") or fact_hash(text)), fid)
        about = fact.get("about") if isinstance(fact.get("about"), list) else []
        for name in about or []:
            if isinstance(name, str):
                by_entity.setdefault(name, []).append((fid, text))
    known = sorted(by_entity, key=lambda n: (-len(n), n))
    out: list[dict[str, Any]] = []
    decisions: list[list[Any]] = []
    for item in items:
        if item.detail.get("route") != "facts":
            continue
        entry, created = item.detail["entry"], item.detail["created"]
        for line, text in item.detail.pop("candidates"):
            loc = f"{item.source}:{line}"
            if len(text) > MAX_TEXT:
                raise InvalidInput(
                    f"--plan: {entry}: line {line} is longer than a fact may be ({MAX_TEXT})",
                    hint="route the entry to note instead; nothing was written",
                )
            words = set(_WORDS.findall(text.casefold()))
            about = sorted(
                n for n in known if set(_WORDS.findall(n)) <= words and n in text.casefold()
            )
            digest = fact_hash(text)
            if digest in by_hash:
                survivor = by_hash[digest]
                decisions.append(
                    [loc, entry, "deduplicated", survivor, digest, f"same content as {survivor}"]
                )
                continue
            toks = tokens(text)
            hit = None
            for name in about:
                known_facts = by_entity.get(name, [])
                for k, (fid, other) in enumerate(known_facts):
                    if isinstance(other, str):
                        other = tokens(other)
                        known_facts[k] = (fid, other)
                    if (
                        could_exceed(len(toks), len(other))
                        and overlap(toks, other) > NEAR_THRESHOLD
                    ):
                        hit = (fid, overlap(toks, other))
                        break
                if hit:
                    break
            if hit:
                why = (
                    f"near-duplicate of {hit[0]} ({hit[1]:.2f} token overlap > {NEAR_THRESHOLD}); "
                    "not written, the line stays in the backup"
                )
                decisions.append([loc, entry, "near-duplicate", hit[0], digest, why])
                continue
            bump, fid = 0, ""
            millis = _millis(created)
            while not fid or fid in used:
                fid = derived_id(millis, digest, bump)
                bump += 1
            used.add(fid)
            record = build_fact(
                FactDraft(
                    text=text,
                    about=about,
                    source=loc,
                    trust="migrated",
                    tool="migrate",
                    fact_id=fid,
                    created_at=created,
                )
            )
            out.append(record)
            by_hash[digest] = fid
            for name in about:
                by_entity.setdefault(name, []).append((fid, toks))
            decisions.append([loc, entry, "merged", fid, digest, None])
        item.detail["facts"] = [d for d in decisions if d[1] == entry]
    return out, decisions
