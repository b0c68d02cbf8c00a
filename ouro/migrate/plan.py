"""The migration plan: every legacy entry, its action and its destination.

Contract: ``build_plan`` reads the bundle and writes nothing (a dry run is
exactly this function). Its output is deterministic for the same files, and
once an applied run persists it (``state/migration/run-<id>/plan.json``) the
plan -- not a fresh scan -- drives every later phase, so a resumed run makes
the same decisions as the interrupted one.

Item actions are the report's vocabulary: moved | merged | deduplicated | dropped |
created | quarantined | removed. ``op`` says how the engine carries it out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.desk.names import slugify
from ouro.errors import CorruptFile, InvalidInput
from ouro.migrate import documents
from ouro.migrate.entities import derive_entities, entity_conflicts, merge_conflicts
from ouro.migrate.facts import FactsPlan, plan_facts
from ouro.migrate.rules import LayoutStep, Rule
from ouro.migrate.scan import SourceFile, scan
from ouro.models.hashing import content_hash
from ouro.resources import bundle_template, templates_dir
from ouro.store import jsonio
from ouro.store.bounded import file_bytes
from ouro.store.jsonl import encode_line, read_jsonl


@dataclass
class Item:
    source: str | None
    action: str
    op: str
    destination: str | None
    bytes: int = 0
    source_hash: str | None = None
    destination_hash: str | None = None
    why: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Item:
        return cls(**data)


@dataclass
class Plan:
    run_id: str
    created_at: str
    journal_mode: str
    step: str
    backup: str
    sources: list[dict[str, Any]]
    items: list[Item]
    facts: dict[str, Any] | None = None
    entities: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: journal triage: {"entries": [...], "facts": [...]} (``ouro.migrate.triage``)
    triage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)  # shallow: asdict would deep-copy every fact decision
        data["items"] = [i.to_json() for i in self.items]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        fields = dict(data)
        fields["items"] = [Item.from_json(i) for i in data["items"]]
        return cls(**fields)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for item in self.items:
            if item.op == "facts" or item.detail.get("route") == "facts":
                continue
            out[item.action] = out.get(item.action, 0) + 1
        for decision in (self.facts or {}).get("decisions", []):
            out[decision[1]] = out.get(decision[1], 0) + 1
        for decision in (self.triage or {}).get("facts", []):
            out[decision[2]] = out.get(decision[2], 0) + 1
        out["removed"] = len(self.sources)
        return out


@dataclass
class _Ctx:
    root: Path
    step: LayoutStep
    taken: set[str] = field(default_factory=set)  # destinations claimed by this plan
    hints: dict[str, dict[str, Any]] = field(default_factory=dict)
    backup: str = ""

    def exists(self, rel: str) -> bool:
        return rel in self.taken or os.path.lexists(self.root / rel)


def _read(root: Path, rel: str) -> bytes:
    return file_bytes(root / rel)


def _suffixed(rel: str, n: int) -> str:
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    new = f"{stem}-{n}.{ext}" if dot and stem else f"{name}-{n}"
    return f"{folder}/{new}" if folder else new


def _quarantine(ctx: _Ctx, src: SourceFile, why: str | None) -> Item:
    base = f"{ctx.step.quarantine}/{src.path}"
    dest, n = base, 1
    while True:
        full = ctx.root / dest
        if (
            dest not in ctx.taken
            and src.kind == "file"
            and full.is_file()
            and content_hash(file_bytes(full)) == src.hash
        ):
            return Item(src.path, "deduplicated", "none", dest, src.size, src.hash, src.hash, why)
        if not ctx.exists(dest):
            break
        n += 1
        dest = _suffixed(base, n)
    ctx.taken.add(dest)
    op = {"symlink": "link", "special": "rename"}.get(src.kind, "copy")
    detail: dict[str, Any] = {}
    if src.kind == "symlink":
        detail["target"] = src.target
    if src.kind == "special":
        detail.update({"ino": src.ino, "dev": src.dev})
    return Item(src.path, "quarantined", op, dest, src.size, src.hash, src.hash, why, detail)


def _note_item(ctx: _Ctx, src: SourceFile, rule: Rule, journal: bool) -> Item:
    text = _read(ctx.root, src.path).decode("utf-8")
    below = src.path[len(rule.base) + 1 :] if rule.base else src.path
    stem_path = below.rsplit(".", 1)[0] if "." in below.rsplit("/", 1)[-1] else below
    stem = stem_path.rsplit("/", 1)[-1]
    try:
        if journal:
            meta: dict[str, Any] | None = documents.journal_meta(
                text, source=src.path, source_hash=str(src.hash), stem=stem, mtime_ns=src.mtime_ns
            )
        else:
            hint = ctx.hints.get(stem) or ctx.hints.get(slugify(stem)) or {}
            meta = documents.note_meta(
                text,
                source=src.path,
                source_hash=str(src.hash),
                stem=stem,
                mtime_ns=src.mtime_ns,
                hint=hint,
            )
        body = documents.body_of(text, source=src.path)
    except CorruptFile as exc:
        return _quarantine(ctx, src, f"front matter unreadable: {exc.message}")
    content = (documents.render_with(meta, text, source=src.path) if meta else text).encode()
    digest = content_hash(content)
    slug = slugify(stem_path.replace("/", "-")) or "note"
    pattern = str(rule.to)
    n = 1
    while True:
        candidate = slug if n == 1 else f"{slug[:60].rstrip('-')}-{n}"
        dest = pattern.format(slug=candidate, name=src.path.rsplit("/", 1)[-1], path=src.path)
        full = ctx.root / dest
        if dest not in ctx.taken and full.is_file():
            existing = file_bytes(full)
            if content_hash(existing) == digest or _same_body(existing, body, dest):
                return Item(src.path, "deduplicated", "none", dest, src.size, src.hash, digest)
        if not ctx.exists(dest):
            break
        n += 1
    ctx.taken.add(dest)
    first = pattern.format(slug=slug, name="", path="")
    why = f"name taken by {first}; renamed" if n > 1 else None
    detail = {"meta": meta, "collision": first if n > 1 else None}
    op = "write" if meta else "copy"
    return Item(src.path, "moved", op, dest, src.size, src.hash, digest, why, detail)


def _same_body(existing: bytes, body: str, dest: str) -> bool:
    try:
        return documents.body_of(existing.decode("utf-8"), source=dest) == body
    except (UnicodeDecodeError, CorruptFile):
        return False


def _daily_item(ctx: _Ctx, src: SourceFile, rule: Rule) -> Item:
    name = src.path.rsplit("/", 1)[-1]
    dest = str(rule.to).format(name=name, slug=name, path=src.path)
    full = ctx.root / dest
    if not full.is_file():
        ctx.taken.add(dest)
        return Item(src.path, "moved", "copy", dest, src.size, src.hash, src.hash)
    legacy = _read(ctx.root, src.path).decode("utf-8")
    current = file_bytes(full).decode("utf-8", "replace")
    if documents.daily_contains(current, legacy, src.path):
        return Item(src.path, "deduplicated", "none", dest, src.size, src.hash, src.hash)
    joined = documents.daily_join(current, legacy, src.path).encode()
    why = "same day already in the Desk record; legacy text appended after a separator"
    return Item(src.path, "merged", "concat", dest, src.size, src.hash, content_hash(joined), why)


def _existing_facts(root: Path, rel: str) -> list[dict[str, Any]]:
    return read_jsonl(root / rel).records


def _malformed_item(ctx: _Ctx, src: SourceFile, rule: Rule, plan: FactsPlan) -> Item:
    base = rule.extra["malformed_to"]
    content = b"".join(encode_line({"source": src.path, **m}) for m in plan.malformed)
    dest, n = base, 1
    while ctx.exists(dest):
        if (ctx.root / dest).is_file() and file_bytes(ctx.root / dest) == content:
            break
        n += 1
        dest = _suffixed(base, n)
    ctx.taken.add(dest)
    lines = [m["line"] for m in plan.malformed]
    why = "malformed legacy fact lines, kept with their line numbers: " + ", ".join(
        str(x) for x in lines
    )
    detail = {"lines": plan.malformed}
    return Item(
        src.path,
        "created",
        "malformed",
        dest,
        len(content),
        None,
        content_hash(content),
        why,
        detail,
    )


def _load_hints(root: Path, sources: list[SourceFile]) -> dict[str, dict[str, Any]]:
    """Titles and tags from a legacy ``notes/.index.json`` (any reasonable shape)."""
    if not any(s.path == "notes/.index.json" and s.kind == "file" for s in sources):
        return {}
    try:
        data = jsonio.loads(_read(root, "notes/.index.json"))
    except jsonio.JSONDecodeError:
        return {}
    entries = data.get("notes", data) if isinstance(data, dict) else data
    if isinstance(entries, dict):
        entries = [{"slug": k, **v} for k, v in entries.items() if isinstance(v, dict)]
    hints: dict[str, dict[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            key = entry.get("slug") or entry.get("name") or entry.get("file") or ""
            key = str(key).rsplit("/", 1)[-1].removesuffix(".md")
            if key:
                hints[key] = entry
    return hints


def _scaffold_items(root: Path) -> list[Item]:
    base = templates_dir() / "bundle"
    items = []
    for path, rel in bundle_template():
        if os.path.lexists(root / rel):
            continue
        data = file_bytes(path)
        digest = content_hash(data)
        items.append(
            Item(
                f"templates/bundle/{path.relative_to(base).as_posix()}",
                "created",
                "template",
                rel,
                len(data),
                digest,
                digest,
                "current layout scaffold (from templates)",
            )
        )
    return items


def build_plan(
    root: Path,
    step: LayoutStep,
    *,
    journal_mode: str,
    run_id: str,
    now: str,
    backup: str,
    routes: dict[str, dict[str, Any]] | None = None,
    plan_file: str | None = None,
) -> tuple[Plan, list[dict[str, Any]]]:
    """(plan, fact records to append). Reads only.

    ``routes`` (from an edited review file, ``ouro.migrate.triage.read_routes``)
    overrides the proposed route of the journal entries it names; an entry it
    names that the journal does not have is an error, raised before anything
    is written."""
    from ouro.migrate import journal

    routes = routes or {}
    sources = scan(root, step.legacy_roots)
    ctx = _Ctx(root, step, hints=_load_hints(root, sources), backup=backup)
    review: list[dict[str, Any]] = []
    scaffold = _scaffold_items(root)
    ctx.taken.update(str(i.destination) for i in scaffold)
    items: list[Item] = list(scaffold)
    facts_plan: FactsPlan | None = None
    facts_info: dict[str, Any] | None = None
    entities_src: tuple[SourceFile, Rule] | None = None
    for src in sources:
        rule = step.rule_for(src.path, src.kind, src.is_text, journal_mode)
        if rule.action == "merge_facts":
            existing = _existing_facts(root, str(rule.to))
            facts_plan = plan_facts(
                _read(root, src.path),
                source_path=src.path,
                existing=existing,
                fallback_ms=src.mtime_ns // 1_000_000,
            )
            why = "facts merged, de-duplicated by content hash"
            items.append(Item(src.path, "merged", "facts", rule.to, src.size, src.hash, None, why))
            facts_info = {
                "source": src.path,
                "destination": rule.to,
                "decisions": facts_plan.decisions,
                "idMap": facts_plan.id_map,
            }
            if facts_plan.malformed:
                items.append(_malformed_item(ctx, src, rule, facts_plan))
        elif rule.action == "merge_entities":
            entities_src = (src, rule)
        elif rule.action == "move_daily":
            items.append(_daily_item(ctx, src, rule))
        elif rule.action == "journal_triage":
            found, entries = journal.journal_items(ctx, src, rule, routes, plan_file)
            items.extend(found)
            review.extend(entries)
        elif rule.action in ("move_note", "journal_note"):
            items.append(_note_item(ctx, src, rule, rule.action == "journal_note"))
        else:
            # a special entry says what it is (a named pipe, past the size limit)
            reason = f"{rule.why}: {src.why}" if src.kind == "special" and src.why else rule.why
            items.append(_quarantine(ctx, src, reason))
    unknown = sorted(set(routes) - {e["entry"] for e in review})
    if unknown:
        raise InvalidInput(
            f"--plan: {plan_file}: no journal entry {unknown[0]!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""),
            hint="the journal changed, or the locator was edited; remove the plan "
            "file and write it again with 'ouro migrate --dry-run --plan FILE' (nothing was "
            "written)",
        )
    records = list(facts_plan.records) if facts_plan else []
    track = journal.track_item(ctx, items)
    if track is not None:
        items.append(track)
    journal_records, journal_decisions = journal.resolve_facts(
        items, _existing_facts(root, journal.FACTS_TO), records
    )
    records.extend(journal_records)
    triage_info = (
        {"entries": review, "facts": journal_decisions, "planFile": plan_file} if review else None
    )
    entities_info = None
    if entities_src is not None:
        item, entities_info = _entities_item(root, entities_src, facts_plan, records)
        items.extend(item)
    plan = Plan(
        run_id=run_id,
        created_at=now,
        journal_mode=journal_mode,
        step=step.source,
        backup=backup,
        sources=[
            {**s.to_json(), "mtimeNs": s.mtime_ns, "ino": s.ino, "dev": s.dev} for s in sources
        ],
        items=items,
        facts=facts_info,
        entities=entities_info,
        meta={
            "bundleJson": (root / "bundle.json").is_file(),
            "to": step.to_version,
            "targets": _targets(root, step, items, bool(records) or facts_plan is not None),
        },
        triage=triage_info,
    )
    return plan, records


def _targets(root: Path, step: LayoutStep, items: list[Item], facts: bool) -> list[str]:
    """Existing files outside the legacy roots that this run will change (merge targets,
    derived files, bundle.json, the report): the backup copies them before any change."""
    paths = {"bundle.json", step.report, step.notes_manifest}
    if facts:
        paths.update({"desk/_record/diary/facts.jsonl", "desk/_record/diary/entities.json"})
    for item in items:
        if item.op in ("concat", "json", "entities") and item.destination:
            paths.add(item.destination)
    return sorted(p for p in paths if (root / p).is_file() and not (root / p).is_symlink())


def _entities_item(
    root: Path,
    found: tuple[SourceFile, Rule],
    facts_plan: FactsPlan | None,
    records: list[dict[str, Any]],
) -> tuple[list[Item], dict[str, Any]]:
    src, rule = found
    dest, conflicts_to = str(rule.to), rule.extra["conflicts_to"]
    try:
        legacy = jsonio.loads(_read(root, src.path))
    except jsonio.JSONDecodeError as exc:
        legacy = {"(unreadable legacy entities.json)": f"not valid JSON ({exc})"}
    if not isinstance(legacy, dict):
        legacy = {"(unreadable legacy entities.json)": legacy}
    existing_facts = _existing_facts(root, "desk/_record/diary/facts.jsonl")
    derived = derive_entities(existing_facts + records)
    id_map = facts_plan.id_map if facts_plan else {}
    conflicts, covered = entity_conflicts(
        legacy, derived, side="legacy", source=src.path, id_map=id_map
    )
    try:
        current = jsonio.loads(file_bytes(root / dest))
    except (FileNotFoundError, jsonio.JSONDecodeError):
        current = {}
    if isinstance(current, dict) and current:
        desk_conflicts, _ = entity_conflicts(current, derived, side="desk", source=dest, id_map={})
        for name, found_conflicts in desk_conflicts.items():
            conflicts.setdefault(name, []).extend(found_conflicts)
    items = [
        Item(
            src.path,
            "merged",
            "entities",
            dest,
            src.size,
            src.hash,
            None,
            f"rebuilt from the merged facts; {len(covered)} legacy entries covered, "
            f"{len(legacy) - len(covered)} kept aside as conflicts",
        )
    ]
    info: dict[str, Any] = {"source": src.path, "covered": covered, "conflictsTo": None}
    if conflicts:
        try:
            before = jsonio.loads(file_bytes(root / conflicts_to))
        except (FileNotFoundError, jsonio.JSONDecodeError):
            before = {}
        doc = merge_conflicts(before if isinstance(before, dict) else {}, conflicts)
        from ouro.store.atomic import dump_json

        data = dump_json(doc)
        action = "merged" if (root / conflicts_to).exists() else "created"
        why = f"{sum(len(v) for v in conflicts.values())} entity entries the facts do not cover"
        items.append(
            Item(
                src.path,
                action,
                "json",
                conflicts_to,
                len(data),
                None,
                content_hash(data),
                why,
                {"document": doc},
            )
        )
        info["conflictsTo"] = conflicts_to
        info["conflicts"] = sorted(conflicts)
    return items, info
