"""The obligation store: owed work, and return obligations with a route.

Files: ``arc/obligations/<id>.json`` (owed work) and
``arc/obligations/inner/<id>.json`` (return obligations: something owed back
to someone over a route {recipient, channel, key}). Record::

    {"id": "ob-…", "what", "owedTo", "due"?: "YYYY-MM-DD",
     "status": "open"|"done"|"dropped", "deskLocator"?, "route"?,
     "createdAt", "closedAt"?, "schemaVersion": 1}

Writes take the Arc lock, redact, replace the file atomically and record an
``obligation_changed`` event (which rewrites the checkpoint).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ouro.arc import paths
from ouro.arc.recorder import append_locked, build_event
from ouro.arc.redact import bundle_literals, redact_obj
from ouro.bundle import Bundle
from ouro.edge import require_text
from ouro.errors import Conflict, CorruptFile, InvalidInput, InvalidLocator, NotFound
from ouro.lane import habit_lane
from ouro.models.base import Part, Record
from ouro.models.clock import utc_now_iso
from ouro.models.ids import is_id, new_id
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json

_LIST_HINT = "list obligations with 'ouro obligation list'"


class Route(Part):
    recipient: str = Field(min_length=1)
    channel: str = Field(min_length=1)
    key: str = Field(min_length=1)


class Obligation(Record):
    id: str
    what: str = Field(min_length=1)
    owed_to: str = Field(min_length=1)
    due: str | None = None
    status: Literal["open", "done", "dropped"] = "open"
    desk_locator: str | None = None
    route: Route | None = None
    created_at: str
    closed_at: str | None = None
    #: where it was recorded from: ``habit:<name>`` inside a habit session (``ouro.lane``)
    origin: str | None = None
    origin_session: str | None = None


def parse_route(text: str, recipient: str) -> Route:
    channel, sep, key = text.partition(":")
    if not sep or not channel or not key:
        raise InvalidInput(f"route: {text!r} is not CHANNEL:KEY", hint="e.g. --route slack:C0123")
    return Route(recipient=recipient, channel=channel, key=key)


def _path(bundle: Bundle, obligation_id: str, *, inner: bool) -> Path:
    folder = paths.inner_dir(bundle) if inner else paths.obligations_dir(bundle)
    return folder / f"{obligation_id}.json"


def _find(bundle: Bundle, obligation_id: str) -> tuple[Obligation, bool]:
    if not is_id(obligation_id, "ob"):
        raise InvalidInput(f"{obligation_id!r} is not an obligation id (ob-…)", hint=_LIST_HINT)
    for inner in (False, True):
        path = _path(bundle, obligation_id, inner=inner)
        try:
            data = jsonio.loads(path.read_bytes())
        except FileNotFoundError:
            continue
        except jsonio.JSONDecodeError as exc:
            raise CorruptFile(
                f"{path}: not valid JSON ({exc})", hint="fix the file by hand"
            ) from None
        return Obligation.from_json(data, source=str(path)), inner
    raise NotFound(f"no obligation {obligation_id}", hint=_LIST_HINT)


def _save(bundle: Bundle, ob: Obligation, inner: bool, summary: str, action: str) -> dict[str, Any]:
    clean = Obligation.from_json(
        redact_obj(ob.to_json(), bundle_literals(bundle)), source="obligation"
    )
    atomic_write_json(_path(bundle, ob.id, inner=inner), clean.to_json())
    locator = paths.obligation_locator(ob.id, inner=inner)
    append_locked(
        bundle,
        build_event(
            bundle,
            "obligation_changed",
            summary,
            produced_refs=[{"kind": "obligation", "locator": locator}],
            meta={"obligationId": ob.id, "action": action, "status": ob.status},
        ),
    )
    return {**clean.to_json(), "inner": inner, "locator": locator}


def add_obligation(
    bundle: Bundle,
    what: str,
    *,
    owed_to: str,
    due: str | None = None,
    route: str | None = None,
    desk_locator: str | None = None,
) -> dict[str, Any]:
    require_text(what, "what")
    require_text(owed_to, "to")
    if due is not None:
        try:
            date.fromisoformat(due)
        except ValueError:
            raise InvalidInput(
                f"due: {due!r} is not a date (YYYY-MM-DD)", hint="e.g. --due 2026-12-01"
            ) from None
    if desk_locator is not None:
        try:
            if not bundle.path(desk_locator).exists():
                raise InvalidInput(
                    f"desk: {desk_locator!r} does not exist in the bundle",
                    hint="point at an existing Desk file",
                )
        except InvalidLocator as exc:
            raise InvalidInput(f"desk: {exc.message}", hint=exc.hint) from None
    parsed = parse_route(route, owed_to) if route else None
    lane = habit_lane(bundle.root)
    origin = {"origin": lane.origin, "originSession": lane.session_id} if lane else {}
    ob = Obligation.from_json(
        {
            **origin,
            "id": new_id("ob"),
            "what": what,
            "owedTo": owed_to,
            "due": due,
            "deskLocator": desk_locator,
            "route": parsed.to_json() if parsed else None,
            "createdAt": utc_now_iso(),
        },
        source="obligation",
    )
    with paths.arc_lock(bundle, "obligation add"):
        return _save(
            bundle, ob, parsed is not None, f"obligation to {owed_to}: {what[:120]}", "add"
        )


def close_obligation(
    bundle: Bundle, obligation_id: str, *, dropped: bool = False
) -> dict[str, Any]:
    status: Literal["done", "dropped"] = "dropped" if dropped else "done"
    with paths.arc_lock(bundle, "obligation close"):
        ob, inner = _find(bundle, obligation_id)
        if ob.status == status:
            return {
                **ob.to_json(),
                "inner": inner,
                "locator": paths.obligation_locator(ob.id, inner=inner),
            }
        if ob.status != "open":
            raise Conflict(f"obligation {obligation_id} is already {ob.status}", hint=_LIST_HINT)
        ob.status = status
        ob.closed_at = utc_now_iso()
        return _save(bundle, ob, inner, f"obligation {obligation_id} {status}", status)


def list_obligations(bundle: Bundle, status: str | None = None) -> dict[str, Any]:
    """Every obligation file (pure). Unreadable files are named, never skipped silently."""
    out: list[dict[str, Any]] = []
    unreadable: list[dict[str, str]] = []
    for inner in (False, True):
        folder = paths.inner_dir(bundle) if inner else paths.obligations_dir(bundle)
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            continue
        except OSError as exc:
            return {"obligations": None, "unknown": f"cannot list {folder.name}/ ({exc.strerror})"}
        for path in files:
            try:
                ob = Obligation.from_json(jsonio.loads(path.read_bytes()), source=str(path))
            except (OSError, jsonio.JSONDecodeError, InvalidInput) as exc:
                unreadable.append({"file": str(path.relative_to(bundle.root)), "reason": str(exc)})
                continue
            if status is None or ob.status == status:
                out.append(
                    {
                        **ob.to_json(),
                        "inner": inner,
                        "locator": paths.obligation_locator(ob.id, inner=inner),
                    }
                )
    return {"obligations": out, "unreadable": unreadable}
