"""Finishing a merge so nothing is lost: one rule per kind of bundle file.

Called with the bundle's writer locks held and git's merge stopped before its
commit (``MERGE_HEAD`` present). For every bundle path changed on both sides:

- ``*.jsonl`` (append-only logs): rewritten as the canonical union of both
  sides and of the working file (which, after an interrupted sync, holds lines
  written since), see ``ouro.sync.jsonl``; malformed lines are kept and
  reported; git conflict-marker lines are not records and are dropped.
- ``*.json`` documents (claims, obligations, receipts): newest wins — the side
  whose newest timestamp (``recordedAt``, ``updatedAt``, ``createdAt``,
  ``closedAt``, ``at`` … anywhere in the document) is later; equal times are
  decided by the larger SHA-256 of the bytes, so both merge directions agree.
- Markdown with front matter (tasks, notes) that git could not merge: the
  side with the newer ``updated`` wins, the file gets ``syncConflict: <id>`` in
  its front matter, and git's conflict markers never stay in the bundle. A
  task whose two sides name different lease holders is a ``double-claim``.
- Any other file git could not merge: the larger SHA-256 wins.
- Deleted on one side, changed on the other: the changed side is kept.

A working file is read only when it is a regular file inside the bundle
(``ouro.sync.state.read_inside``): a FIFO is never opened to block on, and a
symlink leading outside is never followed, so not a byte of what it names
reaches a merged log or a conflict record. Such a file is reported (the
outcome's ``skipped``) and the merge goes on from the two committed sides; the
replacing write then refuses a symlink leading outside (``OutsideBundle``).

Each conflict writes ``arc/sync/conflicts/<cf-id>.json`` holding *both*
versions (and the base), the rule, and which side was kept; its id is derived
from the path and the two versions, so finishing an interrupted merge twice
writes the same record. ``ouro sync resolve ID`` marks one resolved.
"""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass, field
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile
from ouro.models.clock import parse_time, utc_now, utc_now_iso
from ouro.store import frontmatter, jsonio
from ouro.store.atomic import atomic_write_bytes, atomic_write_json
from ouro.store.git import Git
from ouro.sync.jsonl import Malformed, merge_lines
from ouro.sync.state import CONFLICTS_DIR, RECORD_LIMIT, read_inside, why

TIME_KEYS = frozenset(
    {"recordedAt", "updatedAt", "createdAt", "closedAt", "generatedAt", "at", "updated", "created"}
)


@dataclass
class Side:
    name: str  # ours | theirs | base
    commit: str | None
    data: bytes | None

    def to_json(self) -> dict[str, Any]:
        if self.data is None:
            return {"commit": self.commit, "present": False}
        try:
            text: str | None = self.data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        out: dict[str, Any] = {"commit": self.commit, "present": True, "sha256": _sha(self.data)}
        if text is not None:
            out["text"] = text
        else:
            out["bytesHex"] = self.data.hex()
        return out


@dataclass
class MergeOutcome:
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    canonicalized: list[str] = field(default_factory=list)
    #: working files not read (a FIFO, a symlink leading outside …), with why
    skipped: list[str] = field(default_factory=list)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def conflict_id(path: str, ours: bytes | None, theirs: bytes | None) -> str:
    pair = sorted(_sha(d) if d is not None else "-" for d in (ours, theirs))
    digest = hashlib.sha256(f"{path}\0{pair[0]}\0{pair[1]}".encode()).hexdigest()
    return f"cf-{digest[:20]}"


def _times(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TIME_KEYS and isinstance(item, str):
                found.append(item)
            else:
                found.extend(_times(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_times(item))
    return found


def newest_time(value: Any) -> str:
    """The latest parseable timestamp in a document, normalized; "" if none."""
    best = ""
    for text in _times(value):
        try:
            moment = parse_time(text).isoformat()
        except ValueError:
            continue
        best = max(best, moment)
    return best


def _json_value(data: bytes) -> Any:
    try:
        return jsonio.loads(data)
    except jsonio.JSONDecodeError:
        return None


def _front_matter(data: bytes, source: str) -> dict[str, Any] | None:
    try:
        meta, _ = frontmatter.parse(data.decode("utf-8"), source=source)
    except (CorruptFile, UnicodeDecodeError):
        return None
    return meta


_MARKERS = (b"<<<<<<< ", b"=======", b">>>>>>> ", b"||||||| ")


def _without_markers(data: bytes) -> bytes:
    lines = data.split(b"\n")
    return b"\n".join(ln for ln in lines if not ln.rstrip(b"\r").startswith(_MARKERS))


def _md_time(data: bytes, path: str) -> str:
    meta = _front_matter(data, path) or {}
    return newest_time({"updated": meta.get("updated"), "history": meta.get("history")})


def _pick(path: str, ours: bytes, theirs: bytes) -> tuple[str, str]:
    """(winning side, rule) for two present versions."""
    if path.endswith(".json"):
        times = (newest_time(_json_value(ours)), newest_time(_json_value(theirs)))
        rule = "newest wins (latest timestamp in the document), ties by content hash"
    elif path.endswith(".md"):
        times = (_md_time(ours, path), _md_time(theirs, path))
        rule = "newest wins (front matter 'updated'), ties by content hash"
    else:
        times = ("", "")
        rule = "no timestamps: larger content hash wins (both versions kept)"
    if times[0] != times[1]:
        return ("ours" if times[0] > times[1] else "theirs"), rule
    return ("ours" if _sha(ours) >= _sha(theirs) else "theirs"), rule


def _holders(data: bytes | None, path: str) -> tuple[str | None, str | None]:
    meta = _front_matter(data, path) if data is not None else None
    holder = (meta.get("heldBy") or meta.get("claimedBy")) if meta else None
    if not meta or not holder:
        return None, None
    until = meta.get("leaseUntil")
    return str(holder), str(until) if until else None


def double_claim(path: str, ours: bytes | None, theirs: bytes | None) -> dict[str, Any] | None:
    """Two different lease holders, both leases still running: what each side says."""
    if not path.endswith("/task.md"):
        return None
    (a, a_until), (b, b_until) = _holders(ours, path), _holders(theirs, path)
    if not a or not b or a == b:
        return None
    now = utc_now()
    for until in (a_until, b_until):
        try:
            if until is None or parse_time(until) <= now:
                return None
        except ValueError:
            return None
    return {"holders": [{"agent": a, "leaseUntil": a_until}, {"agent": b, "leaseUntil": b_until}]}


def _flag(data: bytes, path: str, cid: str) -> bytes:
    """The Markdown text with ``syncConflict: <id>`` in its front matter."""
    try:
        meta, body = frontmatter.parse(data.decode("utf-8"), source=path)
    except (CorruptFile, UnicodeDecodeError):
        return data  # not ours to rewrite; the conflict record names it
    meta["syncConflict"] = cid
    return frontmatter.render(meta, body).encode("utf-8")


class Merger:
    """Resolves one stopped merge in the bundle at ``bundle`` (paths bundle-relative)."""

    def __init__(self, bundle: Bundle, git: Git) -> None:
        self.bundle = bundle
        self.git = git
        self.head = git.out("rev-parse", "HEAD")
        self.theirs = git.out("rev-parse", "MERGE_HEAD")
        base = git.run("merge-base", "HEAD", "MERGE_HEAD", check=False)
        self.base = base.stdout.decode().strip() or None
        self.host = socket.gethostname()

    def _changed(self, since: str | None, rev: str) -> set[str]:
        if since is None:
            return set(self.git.lines("ls-tree", "-r", "-z", "--name-only", rev, "--", "."))
        return set(
            self.git.lines(
                "diff", "--relative", "--name-only", "--no-renames", "-z", since, rev, "--"
            )
        )

    def unmerged(self) -> set[str]:
        return set(self.git.lines("diff", "--relative", "--name-only", "--diff-filter=U", "-z"))

    def finish(self) -> MergeOutcome:
        out = MergeOutcome()
        unmerged = self.unmerged()
        both = (
            self._changed(self.base, "HEAD") & self._changed(self.base, "MERGE_HEAD")
        ) | unmerged
        for path in sorted(both):
            if path.endswith(".jsonl"):
                self._merge_jsonl(path, out)
            elif path in unmerged:
                out.conflicts.append(self._resolve(path, out))
        return out

    def _working(self, path: str, out: MergeOutcome) -> bytes | None:
        """The working copy of ``path``, None when missing or not read (reported)."""
        try:
            return read_inside(self.bundle.root, self.bundle.root / path, None)
        except FileNotFoundError:
            return None
        except OSError as exc:
            out.skipped.append(f"{path}: {why(exc)}; its working copy was not read")
            return None

    def _blob(self, rev: str | None, path: str) -> bytes | None:
        return None if rev is None else self.git.blob(f"{rev}:./{path}")

    def _merge_jsonl(self, path: str, out: MergeOutcome) -> None:
        sides = [self._blob(self.head, path), self._blob(self.theirs, path)]
        present = [s for s in sides if s is not None]
        if not present:
            self.git.run("rm", "-q", "--cached", "--ignore-unmatch", "--", path)
            return
        target = self.bundle.root / path
        # The working file too: after an interrupted sync, lines written since
        # are only there (git's own conflict markers, if any, are not lines).
        working = self._working(path, out)
        present.append(_without_markers(working or b""))
        merged, bad = merge_lines(present, path)
        if working != merged:
            atomic_write_bytes(target, merged)
        self.git.run("add", "--", path)
        out.canonicalized.append(path)
        out.malformed.extend(bad)

    def _resolve(self, path: str, out: MergeOutcome) -> dict[str, Any]:
        ours = Side("ours", self.head, self._blob(self.head, path))
        theirs = Side("theirs", self.theirs, self._blob(self.theirs, path))
        base = Side("base", self.base, self._blob(self.base, path))
        target = self.bundle.root / path
        working = self._working(path, out)
        if (
            working is not None
            and working not in (ours.data, theirs.data)
            and _without_markers(working) == working
        ):
            # Written here after an interrupted sync stopped the merge: the newest
            # local version, so it stands in for ours.
            ours = Side("ours", "working tree", working)
        cid = conflict_id(path, ours.data, theirs.data)
        kind = "document"
        if ours.data is None or theirs.data is None:
            kept = "theirs" if ours.data is None else "ours"
            rule = "deleted on one side, changed on the other: the changed version is kept"
            kind = "modify-delete"
        else:
            kept, rule = _pick(path, ours.data, theirs.data)
        if path.endswith("/task.md"):
            kind = "task"
        clash = double_claim(path, ours.data, theirs.data)
        if clash:
            kind = "double-claim"
        elif path.startswith("arc/claims/"):
            kind = "claim"
        winner = ours.data if kept == "ours" else theirs.data
        assert winner is not None  # one side is always present in a conflict
        if path.endswith(".md"):
            winner = _flag(winner, path, cid)
        atomic_write_bytes(target, winner)
        self.git.run("add", "--", path)
        record = {
            "id": cid,
            "path": path,
            "kind": kind,
            "rule": rule,
            "kept": kept,
            "resolved": False,
            "detectedAt": utc_now_iso(),
            "host": self.host,
            "recordPath": f"{CONFLICTS_DIR}/{cid}.json",
            "versions": {s.name: s.to_json() for s in (ours, theirs, base)},
            **({"doubleClaim": clash} if clash else {}),
        }
        record_path = self.bundle.root / CONFLICTS_DIR / f"{cid}.json"
        try:  # an interrupted merge finished twice: keep the first record
            first = jsonio.loads(read_inside(self.bundle.root, record_path, RECORD_LIMIT))
            reason = None if isinstance(first, dict) else "not a JSON object"
        except FileNotFoundError:
            atomic_write_json(record_path, record)
            return record
        except OSError as exc:
            reason = why(exc)
        except jsonio.JSONDecodeError as exc:
            reason = f"not JSON ({exc})"
        if reason is not None:
            raise CorruptFile(
                f"{record['recordPath']}: unreadable ({reason})",
                hint=f"move {record_path} aside (it is a record of an earlier merge), then "
                "run 'ouro sync' again",
            )
        return dict(first)
