"""Arc points into Desk: the locators an ask or a next safe action names.

``arc ask`` / ``arc next`` take ``--task ID`` and ``--ref LOCATOR`` (both
repeatable). ``resolve_links`` turns them into bundle locators at write time,
refusing (``InvalidLocator`` / ``NotFound``) any that does not resolve, so an
event never names a record that was not there. The locators are stored in the
event's ``meta.deskRefs``; the fold carries them into the checkpoint, the
packet shows them and the gauntlet's ``desk_record_ready`` check re-verifies
each with ``locator_problem`` (a record can vanish after it was named).

A locator resolves when its path exists inside the bundle and, for a
``file.jsonl#id`` locator, a record with that id is in the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from ouro.bundle import Bundle
from ouro.errors import InvalidLocator
from ouro.store.locator import Locator


def locator_problem(bundle: Bundle, text: str) -> str | None:
    """None when ``text`` names an existing record in the bundle; else why not."""
    try:
        loc = Locator.parse(text)
        path = loc.resolve(bundle.root)
    except InvalidLocator as exc:
        return exc.message
    if not path.exists():
        return f"{loc.path} does not exist"
    if loc.fragment is None:
        return None
    if not loc.path.endswith(".jsonl"):
        return f"{text}: a '#id' fragment names a record in a .jsonl file only"
    from ouro.store.jsonl import read_jsonl

    try:
        records = read_jsonl(path).records
    except OSError as exc:
        return f"{loc.path}: cannot read ({exc.strerror})"
    if not any(rec.get("id") == loc.fragment for rec in records):
        return f"{loc.path} has no record with id {loc.fragment!r}"
    return None


def resolve_links(bundle: Bundle, tasks: Sequence[str], refs: Sequence[str]) -> list[str]:
    """The locators for ``--task`` ids and ``--ref`` locators, each checked to resolve."""
    out: list[str] = []
    if tasks:
        from ouro.desk.tasks import find_task

        for task_id in tasks:
            out.append(find_task(bundle, task_id).locator)
    for ref in refs:
        why = locator_problem(bundle, ref)
        if why is not None:
            raise InvalidLocator(
                f"--ref {ref!r}: {why}",
                hint="name an existing Desk record, e.g. 'desk/<track>/<task>/task.md' "
                "or 'desk/_record/diary/facts.jsonl#f-…'",
            )
        out.append(str(Locator.parse(ref)))
    return list(dict.fromkeys(out))
