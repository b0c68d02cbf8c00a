"""Merging ``entities.json``: the entity index is derived from facts.

Contract (``docs/record.md``, "Entities"): ``entities.json`` is an index of
``facts.jsonl`` -- ``{entity: {count, factIds, lastSeenAt}}`` -- so after the
facts are merged it is rebuilt from them. A legacy (or pre-existing Desk) entry
that the rebuilt index does not fully cover would be lost by that rebuild, so
it is kept aside in ``entities.migration-conflicts.json`` with the reason:

- the entry is not of the current shape (or carries extra keys);
- no merged fact is about the entity;
- it lists facts (ids mapped to their migrated ids) that are not about it;
- its count is larger, or its lastSeenAt newer, than the facts about it show
  (the merged index may know more than an old entry, never less).
"""

from __future__ import annotations

from typing import Any

from ouro.migrate.facts import _parse_when, normalize_about

ENTRY_KEYS = {"count", "factIds", "lastSeenAt"}


def derive_entities(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{entity: {count, factIds, lastSeenAt}}`` from facts in file order (first id wins)."""
    out: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for fact in facts:
        fid = fact.get("id")
        if not isinstance(fid, str) or fid in seen:
            continue
        seen.add(fid)
        about = fact.get("about")
        if not isinstance(about, list):
            continue
        when = fact.get("createdAt") if isinstance(fact.get("createdAt"), str) else None
        for name in about:
            if not isinstance(name, str):
                continue
            entry = out.setdefault(name, {"count": 0, "factIds": [], "lastSeenAt": None})
            entry["count"] += 1
            entry["factIds"].append(fid)
            if when and (entry["lastSeenAt"] is None or when > entry["lastSeenAt"]):
                entry["lastSeenAt"] = when
    return dict(sorted(out.items()))


def _problem(entry: Any, derived: dict[str, Any] | None, id_map: dict[str, str]) -> str | None:
    if not isinstance(entry, dict):
        return "not an object of {count, factIds, lastSeenAt}"
    extra = sorted(set(entry) - ENTRY_KEYS)
    if extra:
        return "carries keys the current index does not keep: " + ", ".join(extra)
    ids = entry.get("factIds", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return "factIds is not a list of ids"
    if derived is None:
        return "no merged fact is about this entity"
    mapped = [id_map.get(i, i) for i in ids]
    indexed = set(derived["factIds"])
    missing = [str(i) for i in mapped if i not in indexed]
    if missing:
        return "lists facts that are not about it: " + ", ".join(missing[:10])
    # The merged index may know *more* than the entry (new facts); it must not know less.
    count = entry.get("count")
    if count is not None and (not isinstance(count, int) or count > derived["count"]):
        return f"count {count!r} exceeds the {derived['count']} facts about it"
    seen = entry.get("lastSeenAt")
    if seen is not None:
        entry_time, derived_time = _parse_when(seen), _parse_when(derived["lastSeenAt"])
        if entry_time is None or derived_time is None or entry_time > derived_time:
            return f"lastSeenAt {seen!r} is newer than any fact about it ({derived['lastSeenAt']})"
    return None


def entity_conflicts(
    entries: dict[str, Any],
    derived: dict[str, dict[str, Any]],
    *,
    side: str,
    source: str,
    id_map: dict[str, str],
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """(conflicts by entity, names fully covered by the derived index)."""
    conflicts: dict[str, list[dict[str, Any]]] = {}
    covered: list[str] = []
    for raw_name, entry in entries.items():
        names = normalize_about([raw_name])
        name = names[0] if names else raw_name
        reason = _problem(entry, derived.get(name), id_map)
        if reason is None:
            covered.append(raw_name)
            continue
        conflicts.setdefault(name, []).append(
            {
                "side": side,
                "source": source,
                "key": raw_name,
                "entry": entry,
                "derived": derived.get(name),
                "reason": reason,
            }
        )
    return conflicts, covered


def merge_conflicts(
    existing: dict[str, Any], new: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """Union by entity; an identical record is kept once (re-runs add nothing)."""
    out: dict[str, Any] = {k: list(v) if isinstance(v, list) else [v] for k, v in existing.items()}
    for name, records in new.items():
        bucket = out.setdefault(name, [])
        for record in records:
            if record not in bucket:
                bucket.append(record)
    return dict(sorted(out.items()))
