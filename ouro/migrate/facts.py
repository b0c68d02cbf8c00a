"""Legacy diary facts -> current facts (``docs/record.md``, "Facts").

Contract: ``plan_facts`` is pure. For every line of the legacy
``diary/facts.jsonl`` it decides one of

- ``merged``: a current fact record is built (legacy fields mapped, unknown
  ones kept under ``legacy``, provenance naming the legacy file and line);
- ``deduplicated``: the same content hash is already an active fact (in the
  Desk record or on an earlier legacy line); nothing is written, the legacy id
  maps to the surviving fact's id;
- ``quarantined``: the line is not a JSON object or has no text; its raw bytes
  go to the malformed-lines quarantine file with the original line number.

Ids are deterministic (time of the fact + its content hash), so a re-run after
an interruption builds byte-identical records and never duplicates one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ouro.desk.factnorm import fact_hash as desk_fact_hash
from ouro.desk.factnorm import normalize_entity
from ouro.models.clock import format_time, parse_time
from ouro.models.ids import is_id
from ouro.store.jsonl import parse_lines

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
TEXT_KEYS = ("text", "fact", "content", "body")
ABOUT_KEYS = ("about", "entities", "subjects")
TIME_KEYS = ("createdAt", "created_at", "created", "timestamp", "ts", "date", "time")
TRUST_KEYS = ("trust", "confidence")
PROVENANCE_KEYS = {
    "channel": ("channel",),
    "friendId": ("friendId", "friend_id"),
    "friendName": ("friendName", "friend_name"),
}


def fact_hash(text: str) -> str:
    """The Desk's fact hash (``content_hash`` of the normalized text)."""
    return desk_fact_hash(text)


def normalize_about(values: Iterable[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        name = normalize_entity(value)
        if name and name not in out:
            out.append(name)
    return out


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def derived_id(millis: int, digest: str, bump: int = 0) -> str:
    """``f-`` + 10 chars of the fact's time + 8 chars from its content hash."""
    rand = (int(digest.split(":", 1)[1][:10], 16) + bump) & ((1 << 40) - 1)
    return f"f-{_encode(max(millis, 0) & ((1 << 50) - 1), 10)}{_encode(rand, 8)}"


def _parse_when(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value  # epoch millis or seconds
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            return parse_time(value.strip())
        except ValueError:
            return None
    return None


def _first(obj: dict[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    for key in keys:
        if key in obj and obj[key] is not None:
            return key, obj[key]
    return None, None


@dataclass
class MappedFact:
    record: dict[str, Any]  # without id
    legacy_id: str | None
    legacy_supersedes: str | None
    millis: int


def map_legacy_fact(obj: dict[str, Any], *, source: str, fallback_ms: int) -> MappedFact | str:
    """Map one legacy object onto the current schema, or return why it cannot be."""
    used: set[str] = set()
    legacy: dict[str, Any] = {}
    text_key, text = _first(obj, TEXT_KEYS)
    if not isinstance(text, str) or not text.strip():
        return "no text (looked for " + ", ".join(TEXT_KEYS) + ")"
    used.add(str(text_key))
    about_key, about_raw = _first(obj, ABOUT_KEYS)
    about: list[str] = []
    if about_key is not None:
        used.add(about_key)
        # An old harness stored "a, b" strings; split them into names.
        items = about_raw.split(",") if isinstance(about_raw, str) else about_raw
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            about = normalize_about(items)
        else:
            legacy[about_key] = about_raw
    time_key, time_raw = _first(obj, TIME_KEYS)
    when = _parse_when(time_raw)
    if time_key is not None:
        used.add(time_key)
        if when is None or time_key != "createdAt":
            legacy[time_key] = time_raw
    raw_prov = obj.get("provenance")
    prov_in: dict[str, Any] = raw_prov if isinstance(raw_prov, dict) else {}
    if "provenance" in obj:
        used.add("provenance")
        legacy["provenance"] = obj["provenance"]
    provenance: dict[str, Any] = {"tool": "migrate"}
    for name, keys in PROVENANCE_KEYS.items():
        key, value = _first(prov_in, keys)
        if key is None:
            key, value = _first(obj, keys)
            if key is not None:
                used.add(key)
        provenance[name] = value if isinstance(value, str) else None
    trust_key, trust = _first(prov_in, TRUST_KEYS)
    if trust_key is None:
        trust_key, trust = _first(obj, TRUST_KEYS)
        if trust_key is not None:
            used.add(trust_key)
            legacy[trust_key] = trust
    provenance["trust"] = trust if isinstance(trust, str) else None
    legacy_id = obj.get("id") if isinstance(obj.get("id"), str) else None
    supersedes = obj.get("supersedes") if isinstance(obj.get("supersedes"), str) else None
    for key in ("id", "source", "hash", "supersedes", "schemaVersion"):
        if key in obj:
            used.add(key)
            if key != "schemaVersion" or obj[key] != 1:
                legacy[key] = obj[key]
    legacy.update((k, v) for k, v in obj.items() if k not in used)
    record: dict[str, Any] = {
        "schemaVersion": 1,
        "text": text,
        "about": about,
        "source": source,
        "createdAt": format_time(when) if when else None,
        "provenance": provenance,
        "hash": fact_hash(text),
    }
    if legacy:
        record["legacy"] = legacy
    millis = int(when.timestamp() * 1000) if when else fallback_ms
    return MappedFact(record, legacy_id, supersedes, millis)


def ordered_record(fid: str, record: dict[str, Any], supersedes: str | None) -> dict[str, Any]:
    """Keys in the order docs/record.md lists them, ``legacy`` last."""
    out = {"schemaVersion": record["schemaVersion"], "id": fid}
    out.update((k, v) for k, v in record.items() if k not in ("schemaVersion", "legacy"))
    if supersedes:
        out["supersedes"] = supersedes
    if "legacy" in record:
        out["legacy"] = record["legacy"]
    return out


@dataclass
class FactsPlan:
    #: one per non-blank legacy line: [line, action, id-or-None, hash-or-None, reason-or-None]
    decisions: list[list[Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)  # to append, in order
    malformed: list[dict[str, Any]] = field(default_factory=list)  # quarantine lines
    id_map: dict[str, str] = field(default_factory=dict)  # legacy id -> current id

    def count(self, action: str) -> int:
        return sum(1 for d in self.decisions if d[1] == action)


def _raw_field(raw: bytes) -> dict[str, Any]:
    try:
        return {"raw": raw.decode("utf-8")}
    except UnicodeDecodeError:
        import base64

        return {"rawBase64": base64.b64encode(raw).decode()}


def plan_facts(
    data: bytes,
    *,
    source_path: str,
    existing: list[dict[str, Any]],
    fallback_ms: int,
) -> FactsPlan:
    """Decide every legacy line against the existing Desk facts (pure)."""
    plan = FactsPlan()
    used_ids = {str(f["id"]) for f in existing if isinstance(f.get("id"), str)}
    superseded = {f["supersedes"] for f in existing if isinstance(f.get("supersedes"), str)}
    by_hash: dict[str, str] = {}
    for fact in existing:
        fid, text = fact.get("id"), fact.get("text")
        if isinstance(fid, str) and isinstance(text, str) and fid not in superseded:
            digest = fact.get("hash") if isinstance(fact.get("hash"), str) else fact_hash(text)
            by_hash.setdefault(str(digest), fid)
    parsed = parse_lines_with_raw(source_path, data)
    pending: list[tuple[str, dict[str, Any], str | None]] = []
    for line_no, obj, raw, reason in parsed:
        if obj is None:
            plan.decisions.append([line_no, "quarantined", None, None, reason])
            plan.malformed.append({"line": line_no, "reason": reason, **_raw_field(raw)})
            continue
        mapped = map_legacy_fact(obj, source=f"{source_path}:{line_no}", fallback_ms=fallback_ms)
        if isinstance(mapped, str):
            plan.decisions.append([line_no, "quarantined", None, None, mapped])
            plan.malformed.append({"line": line_no, "reason": mapped, **_raw_field(raw)})
            continue
        digest = mapped.record["hash"]
        if digest in by_hash:
            survivor = by_hash[digest]
            plan.decisions.append([line_no, "deduplicated", survivor, digest, None])
            if mapped.legacy_id:
                plan.id_map.setdefault(mapped.legacy_id, survivor)
            continue
        fid = mapped.legacy_id if mapped.legacy_id and is_id(mapped.legacy_id, "f") else ""
        bump = 0
        while not fid or fid in used_ids:
            fid = derived_id(mapped.millis, digest, bump)
            bump += 1
        used_ids.add(fid)
        by_hash[digest] = fid
        if mapped.legacy_id:
            plan.id_map.setdefault(mapped.legacy_id, fid)
        plan.decisions.append([line_no, "merged", fid, digest, None])
        pending.append((fid, mapped.record, mapped.legacy_supersedes))
    for fid, record, old in pending:
        target = plan.id_map.get(old) if old else None
        plan.records.append(ordered_record(fid, record, target if target != fid else None))
    return plan


def parse_lines_with_raw(
    path: str, data: bytes
) -> list[tuple[int, dict[str, Any] | None, bytes, str | None]]:
    """(line, object or None, raw bytes, reason) for every non-blank line."""
    from pathlib import Path

    report = parse_lines(Path(path), data)
    bad = {b.line_no: b for b in report.bad}
    good = dict(zip(report.line_numbers, report.records, strict=True))
    out: list[tuple[int, dict[str, Any] | None, bytes, str | None]] = []
    for line_no, raw in enumerate(data.split(b"\n"), start=1):
        if line_no in good:
            out.append((line_no, good[line_no], raw, None))
        elif line_no in bad:
            out.append((line_no, None, raw, bad[line_no].reason))
    return out


def encode_records(records: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)
