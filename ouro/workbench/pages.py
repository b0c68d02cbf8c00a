"""What each workbench page shows: one function per page, each a few calls to
the domains' own read functions, returning the template's context.

No domain logic lives here: statuses, verdicts, due dates and chains come from
the domains (``ouro.orient``, ``ouro.arc``, ``ouro.desk``, ``ouro.sentinel``,
``ouro.habits``, ``ouro.index``). A source that cannot be read is passed on as
an ``error`` string that the page shows (unknown, never empty).

Every function is pure: it reads files and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.store.guard import Inside, names_inside, outside

PAGE_SIZE = {
    "timeline": 50,
    "facts": 20,
    "entities": 40,
    "notes": 10,
    "history": 25,
    "tasks": 25,
    "claims": 25,
    "side": 20,
}


@dataclass
class Query:
    """The validated query of one page view (the server parses the URL into it)."""

    page: int = 1
    kind: str | None = None
    session: str | None = None
    entity: str | None = None
    q: str | None = None
    kinds: list[str] = field(default_factory=list)
    #: pages of a page's secondary lists (``col_<status>``, ``notes``, ``friction`` …)
    sub_pages: dict[str, int] = field(default_factory=dict)

    def skip(self, size: int) -> int:
        return (self.page - 1) * size

    def sub(self, key: str) -> int:
        return self.sub_pages.get(key, 1)


def _guard(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    """Run one read; an ``OuroError`` or ``OSError`` becomes the page's error line."""
    try:
        return fn(), None
    except OuroError as exc:
        return None, exc.message
    except OSError as exc:
        return None, f"cannot read ({exc})"


# --- Now ------------------------------------------------------------------------


def now_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.arc.resume import read_resume_full
    from ouro.arc.timeline import event_page
    from ouro.desk.orientation import desk_items
    from ouro.habits.outbox import queued
    from ouro.sentinel.status import sentinel_status

    resume = read_resume_full(bundle)
    handoff = event_page(bundle, limit=1, kinds=["handoff"])
    desk, desk_error = _guard(lambda: desk_items(bundle))
    surfaced, surfaced_error = _guard(lambda: queued(bundle))
    return {
        # what habits surfaced to the main line, until acknowledged (ouro surface ack)
        "surfaced": surfaced.messages if surfaced else [],
        "surfacedProblems": surfaced.problems if surfaced else [],
        "surfacedError": surfaced_error,
        "resume": resume,
        "obligations": _obligations(resume["stores"]["obligations"]),
        "claims": _claims_by_status(resume["stores"]["claims"]),
        "handoff": handoff["events"][0] if handoff["events"] else None,
        "handoffError": handoff["error"],
        "sentinel": sentinel_status(bundle),
        "desk": desk or [],
        "deskError": desk_error,
    }


def _obligations(summary: dict[str, Any]) -> dict[str, Any]:
    from ouro.arc.paths import obligation_locator

    if summary.get("error"):
        return {"error": summary["error"], "items": []}
    items = summary["items"]
    # The packet's order: earliest due first, undated after, then by id.
    ordered = sorted(items, key=lambda k: (items[k].get("due") or "9999", k))
    rows = [
        {"id": k, **items[k], "locator": obligation_locator(k, inner=items[k]["inner"])}
        for k in ordered
    ]
    return {"error": None, "items": rows, "errors": summary.get("errors", {})}


def _claims_by_status(summary: dict[str, Any]) -> dict[str, Any]:
    from ouro.arc.claim_status import STATUSES
    from ouro.arc.paths import claim_locator

    if summary.get("error"):
        return {"error": summary["error"], "groups": []}
    groups: dict[str, list[dict[str, Any]]] = {s: [] for s in STATUSES}
    for claim_id in sorted(summary["items"], reverse=True):
        entry = summary["items"][claim_id]
        row = {"id": claim_id, **entry, "locator": claim_locator(claim_id)}
        groups.setdefault(entry["status"], []).append(row)
    return {
        "error": None,
        "groups": [(s, rows) for s, rows in groups.items() if rows],
        "errors": summary.get("errors", {}),
    }


# --- Timeline ---------------------------------------------------------------------


def timeline_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.arc.events import EVENT_KINDS
    from ouro.arc.timeline import event_page

    size = PAGE_SIZE["timeline"]
    page = event_page(
        bundle,
        skip=query.skip(size),
        limit=size,
        kinds=[query.kind] if query.kind else [],
        session=query.session,
    )
    rows = page["events"]
    for above, event in zip([None, *rows], rows, strict=False):
        # Newest first: a session header goes above the first (newest) event of each session.
        event["newSession"] = above is None or above["sessionRef"] != event["sessionRef"]
    return {**page, "events": rows, "kinds": EVENT_KINDS, "size": size}


# --- Claims -----------------------------------------------------------------------


def claims_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.arc.claims import list_claims

    listed = list_claims(bundle)
    if listed["claims"] is None:
        return {"claims": [], "error": listed.get("unknown"), "more": False, "unreadable": []}
    size = PAGE_SIZE["claims"]
    ids = [c["id"] for c in sorted(listed["claims"], key=lambda c: c["id"], reverse=True)]
    shown = ids[query.skip(size) : query.skip(size) + size]
    claims = []
    for claim_id in shown:
        described, error = _guard(partial(_describe, bundle, claim_id))
        claims.append(described or {"id": claim_id, "error": error})
    return {
        "claims": claims,
        "error": None,
        "more": len(ids) > query.skip(size) + size,
        "total": len(ids),
        "unreadable": listed["unreadable"],
        "sourceChanges": {c["id"]: _changed_sources(bundle, c) for c in claims if "text" in c},
    }


def _describe(bundle: Bundle, claim_id: str) -> dict[str, Any]:
    from ouro.arc.claims import describe, get_claim

    return describe(bundle, get_claim(bundle, claim_id))


def _changed_sources(bundle: Bundle, claim: dict[str, Any]) -> dict[str, str]:
    """ref -> current content hash, for each evidence source (the claim's own hasher)."""
    from ouro.proof.refs import Unresolvable, hash_ref

    out: dict[str, str] = {}
    for evidence in claim.get("evidence") or []:
        for source in evidence.get("sources") or []:
            ref = source.get("ref") or source.get("locator")
            if not isinstance(ref, str) or ref in out:
                continue
            try:
                out[ref] = hash_ref(bundle, ref)
            except (Unresolvable, OuroError, OSError) as exc:
                out[ref] = f"unknown ({exc})"
    return out


# --- Recovery ---------------------------------------------------------------------


def recovery_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.sentinel.history import history_page
    from ouro.sentinel.status import sentinel_status
    from ouro.workbench.chart import history_chart

    size = PAGE_SIZE["history"]
    chart_points = history_page(bundle, limit=200)
    page = history_page(bundle, skip=query.skip(size), limit=size)
    return {
        "status": sentinel_status(bundle),
        "history": page,
        "chart": history_chart(list(reversed(chart_points["lines"]))),
        "chartCount": len(chart_points["lines"]),
        "chartMore": chart_points["more"],
        # The newest receipt that ran drills (``ouro drill``), from the ledger.
        "drillLine": next((line for line in chart_points["lines"] if line.get("drills")), None),
    }


# --- Desk -------------------------------------------------------------------------


def desk_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.desk import friction, tips
    from ouro.desk.iterations import iteration_numbers
    from ouro.desk.tasks import STATUSES, load_task, scan_heads

    heads, problems = scan_heads(bundle)
    size = PAGE_SIZE["tasks"]
    columns = []
    for status in STATUSES:
        members = sorted(
            (h for h in heads if h.status == status), key=lambda h: (h.priority, h.created, h.id)
        )
        page = query.sub(f"col_{status}")
        start = (page - 1) * size
        tasks = []
        for head in members[start : start + size]:
            task, error = _guard(partial(load_task, bundle, head.path))
            if task is None:
                problems.append(error or f"{head.path}: unreadable")
                continue
            tasks.append(
                {
                    **task.summary(),
                    "iterations": len(iteration_numbers(task.folder / "iterations")),
                }
            )
        columns.append(
            {
                "status": status,
                "tasks": tasks,
                "total": len(members),
                "page": page,
                "more": len(members) > start + size,
            }
        )
    size = PAGE_SIZE["side"]
    start = (query.sub("friction") - 1) * size
    frictions, friction_problems = friction.list_friction(bundle, limit=start + size + 1)
    tip_rows, tip_problems = tips.list_tips(bundle)
    tips_start = (query.sub("tips") - 1) * size
    return {
        "columns": columns,
        "problems": problems + friction_problems + tip_problems,
        "friction": frictions[start : start + size],
        "frictionPage": query.sub("friction"),
        "frictionMore": len(frictions) > start + size,
        "tips": tip_rows[tips_start : tips_start + size],
        "tipsPage": query.sub("tips"),
        "tipsMore": len(tip_rows) > tips_start + size,
    }


# --- Record -----------------------------------------------------------------------


def record_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.desk.notes import read_manifest
    from ouro.desk.record_view import entity_page, fact_page

    facts, facts_error = _guard(
        lambda: fact_page(
            bundle,
            skip=query.skip(PAGE_SIZE["facts"]),
            limit=PAGE_SIZE["facts"],
            entity=query.entity,
        )
    )
    from ouro.desk.notes import manifest_path
    from ouro.desk.record import entities_path, entities_stamp_path, facts_path
    from ouro.workbench.cache import stat_cached

    # Both are derived files of megabytes at scale: parsed once per change.
    size = PAGE_SIZE["entities"]
    skip = (query.sub("entities") - 1) * size
    entities, entities_error = _guard(
        lambda: stat_cached(
            entities_path(bundle), f"entity_page:{skip}",
            partial(entity_page, bundle, skip=skip, limit=size),
            (facts_path(bundle), entities_stamp_path(bundle)),
        )
    )  # fmt: skip
    manifest = stat_cached(manifest_path(bundle), "manifest", partial(read_manifest, bundle))
    notes = sorted(manifest or [], key=lambda n: str(n.get("updated") or ""), reverse=True)
    notes_start = (query.sub("notes") - 1) * PAGE_SIZE["notes"]
    shown = notes[notes_start : notes_start + PAGE_SIZE["notes"]]
    daily_outside: list[str] = []
    return {
        "facts": facts,
        "factsError": facts_error,
        "entities": entities,
        "entitiesError": entities_error,
        "entitiesPage": query.sub("entities"),
        "notes": [_note(bundle, n) for n in shown],
        "notesTotal": len(notes),
        "notesPage": query.sub("notes"),
        "notesMore": len(notes) > notes_start + len(shown),
        "notesError": None if manifest is not None else _manifest_error(bundle),
        "daily": _daily(bundle, daily_outside),
        "dailyOutside": daily_outside,
    }


def _manifest_error(bundle: Bundle) -> str:
    from ouro.desk.notes import manifest_path

    inside = Inside(bundle.root)
    path = manifest_path(bundle)
    if not inside.path(path):
        return outside(inside.rel(path))
    return "notes/.index.json missing or unreadable"


def _note(bundle: Bundle, entry: dict[str, Any]) -> dict[str, Any]:
    from ouro.desk.docs import read_doc
    from ouro.desk.notes import notes_dir

    path = notes_dir(bundle) / f"{entry['slug']}.md"
    locator = bundle.locator(path)
    if not Inside(bundle.root).path(path):  # swapped for a link since the manifest
        return {**entry, "locator": locator, "body": None, "error": outside(locator)}
    read, error = _guard(lambda: read_doc(path, source=locator))
    body = read[1] if read else None
    return {**entry, "locator": locator, "body": body, "error": error}


def _daily(bundle: Bundle, skipped: list[str], limit: int = 3) -> list[dict[str, Any]]:
    """The newest daily reflections; what resolves outside the bundle (the folder,
    a file) goes to ``skipped`` (bundle-relative), never read."""
    folder = bundle.record / "diary" / "daily"
    inside = Inside(bundle.root)
    if inside.folder(folder) is None:
        skipped.append(inside.rel(folder))
        return []
    try:
        listed = names_inside(folder, lambda n: n.endswith(".md"), skipped)
    except OSError:
        return []
    names = sorted(listed, reverse=True)[:limit]
    out = []
    for name in names:
        text, error = _guard(partial((folder / name).read_text, encoding="utf-8"))
        out.append(
            {
                "day": name[:-3],
                "text": text,
                "error": error,
                "locator": f"desk/_record/diary/daily/{name}",
            }
        )
    return out


# --- Habits -----------------------------------------------------------------------


def habits_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.api import Bundle as Library
    from ouro.habits.definition import load_habits

    habits = load_habits(bundle)
    library = Library(bundle).habits
    rows = []
    for habit in habits.habits:
        shown, show_error = _guard(partial(library.show, habit.name))
        last, last_error = _guard(partial(library.last, habit.name))
        rows.append({"name": habit.name, "show": shown, "showError": show_error,
                     "last": last, "lastError": last_error})  # fmt: skip
    recent, recent_problems = _recent_runs(bundle)
    return {
        "habits": rows,
        "problems": [p.to_json() for p in habits.problems],
        "recent": recent,
        "recentProblems": recent_problems,
    }


def _recent_runs(bundle: Bundle, limit: int = 15) -> tuple[list[dict[str, Any]], list[str]]:
    """The newest run receipts of any habit (run ids sort by time)."""
    from ouro.errors import CorruptFile, NotFound
    from ouro.habits.receipt import RECEIPTS_DIR, read_receipt, receipts_dir

    folder = receipts_dir(bundle)
    try:
        names = sorted((p.name for p in folder.glob("*.json")), reverse=True)[:limit]
    except OSError as exc:
        return [], [f"cannot list {RECEIPTS_DIR}/ ({exc})"]
    runs, problems = [], []
    for name in names:
        try:
            runs.append(read_receipt(bundle, f"{RECEIPTS_DIR}/{name}").to_json())
        except (CorruptFile, NotFound) as exc:
            problems.append(exc.message)
    return runs, problems


# --- Search -----------------------------------------------------------------------


def search_page(bundle: Bundle, query: Query) -> dict[str, Any]:
    from ouro.index.search import KINDS, Request, search_readonly

    if not query.q:
        return {"result": None, "error": None, "kinds": KINDS}
    request = Request(query.q, query.kinds, limit=50)
    result, error = _guard(lambda: search_readonly(bundle.root, request))
    return {"result": result, "error": error, "kinds": KINDS}


PAGES: dict[str, tuple[str, Callable[[Bundle, Query], dict[str, Any]]]] = {
    "now": ("Now", now_page),
    "timeline": ("Timeline", timeline_page),
    "claims": ("Claims", claims_page),
    "recovery": ("Recovery", recovery_page),
    "desk": ("Desk", desk_page),
    "record": ("Record", record_page),
    "habits": ("Habits", habits_page),
    "search": ("Search", search_page),
}
