"""The obligation store: owed work, and return obligations with a route.

Files: ``arc/obligations/<id>.json`` (owed work) and
``arc/obligations/inner/<id>.json`` (return obligations: something owed back
to someone over a route {recipient, channel, key}). Record::

    {"id": "ob-…", "what", "owedTo", "due"?: "YYYY-MM-DD",
     "status": "open"|"done"|"dropped", "deskLocator"?, "route"?,
     "createdAt", "closedAt"?, "schemaVersion": 1}

``obligation_from_json`` is the one reader of these files (the obligation
commands and the checkpoint's summary, ``ouro.arc.stores``): it takes the
on-disk form exactly and refuses anything else naming the field. No schema
library, so orient and the hooks start without one.

Writes take the Arc lock, redact, replace the file atomically and record an
``obligation_changed`` event (which rewrites the checkpoint).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ouro.arc import paths
from ouro.arc.recorder import append_locked, build_event
from ouro.bundle import Bundle
from ouro.edge import require_text
from ouro.errors import Conflict, CorruptFile, InvalidInput, InvalidLocator, NotFound
from ouro.lane import habit_lane
from ouro.models.clock import utc_now_iso
from ouro.models.fields import Fields
from ouro.models.ids import is_id, new_id
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.guard import Inside, names_inside, outside

_LIST_HINT = "list obligations with 'ouro obligation list'"


STATUSES: tuple[str, ...] = ("open", "done", "dropped")


class Route(NamedTuple):
    recipient: str
    channel: str
    key: str

    def to_json(self) -> dict[str, Any]:
        return {"recipient": self.recipient, "channel": self.channel, "key": self.key}


class Obligation(NamedTuple):
    id: str
    what: str
    owed_to: str
    created_at: str
    due: str | None = None
    status: str = "open"
    desk_locator: str | None = None
    route: Route | None = None
    closed_at: str | None = None
    schema_version: int = 1
    #: where it was recorded from: ``habit:<name>`` inside a habit session (``ouro.lane``)
    origin: str | None = None
    origin_session: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schemaVersion": self.schema_version,
            "id": self.id,
            "what": self.what,
            "owedTo": self.owed_to,
        }
        if self.due is not None:
            out["due"] = self.due
        out["status"] = self.status
        if self.desk_locator is not None:
            out["deskLocator"] = self.desk_locator
        if self.route is not None:
            out["route"] = self.route.to_json()
        out["createdAt"] = self.created_at
        if self.closed_at is not None:
            out["closedAt"] = self.closed_at
        if self.origin is not None:
            out["origin"] = self.origin
            out["originSession"] = self.origin_session
        return out


_KEYS = frozenset(
    {"schemaVersion", "id", "what", "owedTo", "due", "status", "deskLocator", "route"}
    | {"createdAt", "closedAt", "origin", "originSession"}
)
_ROUTE_KEYS = frozenset({"recipient", "channel", "key"})
_FIELD_HINT = "fix the named field (obligation files hold what 'ouro obligation' writes)"


def obligation_from_json(data: Any, *, source: str = "obligation") -> Obligation:
    """An obligation in its on-disk form; ``InvalidInput`` names the file and the field."""
    f = Fields(data, source, _KEYS, hint=_FIELD_HINT)
    route = f.data.get("route")
    if route is not None:
        r = Fields(route, f"{source}.route", _ROUTE_KEYS, hint=_FIELD_HINT)
        route = Route(*(r.text(k, nonempty=True) for k in ("recipient", "channel", "key")))
    return Obligation(
        id=f.text("id"),
        what=f.text("what", nonempty=True),
        owed_to=f.text("owedTo", nonempty=True),
        created_at=f.text("createdAt"),
        due=f.text("due", None),
        status=f.choice("status", STATUSES, "open"),
        desk_locator=f.text("deskLocator", None),
        route=route,
        closed_at=f.text("closedAt", None),
        schema_version=f.integer("schemaVersion", 1),
        origin=f.text("origin", None),
        origin_session=f.text("originSession", None),
    )


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
            data = jsonio.loads(file_bytes(path))
        except FileNotFoundError:
            continue
        except jsonio.JSONDecodeError as exc:
            raise CorruptFile(
                f"{path}: not valid JSON ({exc})", hint="fix the file by hand"
            ) from None
        try:
            return obligation_from_json(data, source=str(path)), inner
        except InvalidInput as exc:
            raise CorruptFile(exc.message, hint="fix the file by hand") from None
    raise NotFound(f"no obligation {obligation_id}", hint=_LIST_HINT)


def _save(bundle: Bundle, ob: Obligation, inner: bool, summary: str, action: str) -> dict[str, Any]:
    clean = obligation_from_json(
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
    ob = obligation_from_json(
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
        ob = ob._replace(status=status, closed_at=utc_now_iso())
        return _save(bundle, ob, inner, f"obligation {obligation_id} {status}", status)


def list_obligations(bundle: Bundle, status: str | None = None) -> dict[str, Any]:
    """Every obligation file (pure). Unreadable files are named, never skipped silently."""
    out: list[dict[str, Any]] = []
    unreadable: list[dict[str, str]] = []
    inside = Inside(bundle.root)
    for inner in (False, True):
        folder = paths.inner_dir(bundle) if inner else paths.obligations_dir(bundle)
        if inside.folder(folder) is None:
            return {"obligations": None, "unknown": outside(inside.rel(folder))}
        skipped: list[str] = []  # behind a symlink leading outside the bundle: never opened
        try:
            listed = names_inside(folder, lambda n: n.endswith(".json"), skipped)
        except OSError as exc:
            return {"obligations": None, "unknown": f"cannot list {folder.name}/ ({exc.strerror})"}
        unreadable += [{"file": rel, "reason": outside(rel)} for rel in skipped]
        files = [folder / name for name in listed if name != ".json"]
        for path in files:
            try:
                ob = obligation_from_json(jsonio.loads(file_bytes(path)), source=str(path))
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
