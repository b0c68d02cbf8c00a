"""The declarative rules of a layout step (``migrations/layout/*.yaml``).

Contract: a step file names the legacy roots, where backup, quarantine, state
and report live, and an ordered rule list. ``LayoutStep.rule_for`` returns the
first rule that fits a file; the last rule of a step must match everything, so
no legacy file is ever left without an action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.resources import migrations_dir
from ouro.store.frontmatter import load_yaml

ACTIONS = frozenset(
    {
        "quarantine_link",
        "quarantine_move",
        "merge_facts",
        "merge_entities",
        "move_daily",
        "move_note",
        "journal_note",
        "journal_triage",
        "quarantine",
    }
)
KINDS = frozenset({"file", "symlink", "special"})


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``*`` and ``?`` stay inside one folder; ``**/`` spans zero or more folders."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class Rule:
    patterns: tuple[re.Pattern[str], ...]
    action: str
    kind: str = "file"
    requires_text: bool = False
    journal: str | None = None
    to: str | None = None
    why: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    #: the folder the first pattern is rooted at ("notes/**/*.md" -> "notes")
    base: str = ""

    def fits(self, path: str, kind: str, is_text: bool, journal_mode: str) -> bool:
        if kind != self.kind or (self.requires_text and not is_text):
            return False
        if self.journal is not None and self.journal != journal_mode:
            return False
        return any(p.match(path) for p in self.patterns)


@dataclass(frozen=True)
class LayoutStep:
    source: str
    from_version: int
    to_version: int
    title: str
    legacy_roots: tuple[str, ...]
    backup: str
    quarantine: str
    state: str
    report: str
    notes_manifest: str
    rules: tuple[Rule, ...]

    def rule_for(self, path: str, kind: str, is_text: bool, journal_mode: str) -> Rule:
        for rule in self.rules:
            if rule.fits(path, kind, is_text, journal_mode):
                return rule
        raise CorruptFile(
            f"{self.source}: no rule matches {path} ({kind})",
            hint="end the rule list with a catch-all quarantine rule (match: '**')",
        )


def _str(data: dict[str, Any], key: str, source: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise CorruptFile(f"{source}: '{key}' must be a non-empty string", hint="fix the rule file")
    return value


def _rule(raw: Any, source: str, n: int) -> Rule:
    where = f"{source}: rules[{n}]"
    if not isinstance(raw, dict):
        raise CorruptFile(f"{where} must be a mapping", hint="fix the rule file")
    match = raw.get("match")
    globs = [match] if isinstance(match, str) else match
    if not isinstance(globs, list) or not globs or not all(isinstance(g, str) for g in globs):
        raise CorruptFile(f"{where}.match must be a glob or a list of globs", hint="fix it")
    action = raw.get("action")
    if action not in ACTIONS:
        raise CorruptFile(f"{where}.action {action!r} is not one of {sorted(ACTIONS)}", hint="fix")
    kind = raw.get("kind", "file")
    if kind not in KINDS:
        raise CorruptFile(f"{where}.kind {kind!r} is not one of {sorted(KINDS)}", hint="fix it")
    known = {"match", "action", "kind", "requires", "journal", "to", "why"}
    extra = {k: str(v) for k, v in raw.items() if k not in known}
    base = globs[0].split("*", 1)[0].rstrip("/")
    return Rule(
        patterns=tuple(glob_regex(g) for g in globs),
        action=str(action),
        kind=str(kind),
        requires_text=raw.get("requires") == "text",
        journal=raw.get("journal"),
        to=raw.get("to"),
        why=raw.get("why"),
        extra=extra,
        base=base,
    )


def parse_step(text: str, *, source: str) -> LayoutStep:
    data = load_yaml(text, source=source)
    if not isinstance(data, dict):
        raise CorruptFile(f"{source}: must be a mapping", hint="fix the rule file")
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise CorruptFile(f"{source}: 'rules' must be a non-empty list", hint="fix the rule file")
    roots = data.get("legacy_roots")
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise CorruptFile(f"{source}: 'legacy_roots' must be a list of names", hint="fix it")
    return LayoutStep(
        source=source,
        from_version=int(data.get("from", 0)),
        to_version=int(data.get("to", 0)),
        title=_str(data, "title", source),
        legacy_roots=tuple(roots),
        backup=_str(data, "backup", source),
        quarantine=_str(data, "quarantine", source),
        state=_str(data, "state", source),
        report=_str(data, "report", source),
        notes_manifest=_str(data, "notes_manifest", source),
        rules=tuple(_rule(r, source, n) for n, r in enumerate(raw_rules)),
    )


@lru_cache(maxsize=4)
def load_step(name: str = "v1-to-v2.yaml") -> LayoutStep:
    path: Path = migrations_dir() / "layout" / name
    return parse_step(path.read_text(encoding="utf-8"), source=f"migrations/layout/{name}")
