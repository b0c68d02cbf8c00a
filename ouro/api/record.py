"""``b.diary``, ``b.facts``, ``b.notes``, ``b.record``: the maintained record.

Diary facts (``desk/_record/diary/facts.jsonl``), daily reflections, reference
notes, and taking a secret out of any record for good. Writes keep the search
index and the notes manifest current (``ouro.derived.after_write``).
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.api.desk import Explain, Limit, Mode, Query
from ouro.derived import after_write
from ouro.edge import BODY, FACT_TEXT, NOTE_BODY
from ouro.spec import P, verb

About = Annotated[str | None, P("Only facts about this entity.")]


class Diary(Namespace):
    """Atomic facts with provenance, and daily reflections."""

    @verb
    def write(
        self,
        text: Annotated[str, P("the fact, one atomic statement", limit=FACT_TEXT)],
        *,
        about: Annotated[list[str], P("entities the fact is about")] = [],
        source: Annotated[str | None, P("where it came from")] = None,
        trust: Annotated[str | None, P("trust label, e.g. verified, told, inferred")] = None,
        channel: Annotated[str | None, P("channel it arrived on")] = None,
        friend: Annotated[str | None, P("friend id it came from")] = None,
        friend_name: Annotated[str | None, P("friend's display name")] = None,
        supersedes: Annotated[str | None, P("id of the fact this one corrects")] = None,
        force: Annotated[bool, P("write even if a near-duplicate exists")] = False,
    ) -> dict[str, Any]:
        """Write a diary entry (a fact) to desk/_record/diary/facts.jsonl with provenance;
        exact duplicates are returned, near-duplicates refused unless forced,
        --supersedes corrects an earlier fact."""
        from ouro.desk import record
        from ouro.lane import habit_lane

        folder = self.folder
        lane = habit_lane(folder.root)
        draft = record.FactDraft(
            text=text,
            about=about,
            source=source,
            trust=trust,
            channel=channel,
            friend_id=friend,
            friend_name=friend_name,
            supersedes=supersedes,
            origin=lane.origin if lane else None,
            session_ref=lane.session_id if lane else None,
        )
        written, batch = record.write_fact(folder, draft, force=force)
        after_write(folder, batch.paths)
        return {
            **written.to_json(),
            "supersedes": written.fact.get("supersedes"),
            "warnings": batch.warnings,
        }

    @verb
    def consult(
        self,
        query: Query = None,
        *,
        about: About = None,
        since: Annotated[str | None, P("Only entries at or after this date.")] = None,
        history: Annotated[bool, P("Include superseded facts.")] = False,
        limit: Limit = 10,
        mode: Mode = None,
        explain: Explain = False,
    ) -> dict[str, Any]:
        """Consult the diary: facts and daily reflections matching a query, or the newest
        ones when no query is given. Superseded facts are hidden unless history is set."""
        from ouro.index import search

        return search.consult_diary(
            self.folder.root, query, about, since, history, limit, mode, explain
        )

    @verb
    def reflect(self, text: Annotated[str, P("the reflection", limit=BODY)]) -> dict[str, Any]:
        """Append a daily reflection to desk/_record/diary/daily/YYYY-MM-DD.md."""
        from ouro.desk import daily

        folder = self.folder
        path, at = daily.reflect(folder, text)
        after_write(folder, [path])
        return {"locator": folder.locator(path), "at": at}


class Facts(Namespace):
    """Diary facts as a set: search them by text and by the entities they are about."""

    @verb
    def search(
        self,
        query: Query = None,
        *,
        about: About = None,
        limit: Limit = 10,
        mode: Mode = None,
        explain: Explain = False,
    ) -> dict[str, Any]:
        """Search diary facts by their text and the entities they are about (active facts
        only)."""
        from ouro.index import search

        return search.search_facts(self.folder.root, query, about, limit, mode, explain)


class Notes(Namespace):
    """Reference notes under desk/_record/notes/."""

    @verb
    def consult(
        self,
        query: Query = None,
        *,
        tag: Annotated[str | None, P("Only notes with this tag.")] = None,
        limit: Limit = 10,
        mode: Mode = None,
        explain: Explain = False,
    ) -> dict[str, Any]:
        """Consult the record's notes: find reference notes by words in their title, tags
        and body."""
        from ouro.index import search

        return search.consult_notes(self.folder.root, query, tag, limit, mode, explain)

    @verb
    def write(
        self,
        title: Annotated[str, P("note title (names the file)")],
        *,
        body: Annotated[str, P("note body (Markdown)", limit=NOTE_BODY, file=True)],
        tags: Annotated[list[str], P("a tag (repeatable)")] = [],
    ) -> dict[str, Any]:
        """Write a reference note to desk/_record/notes/<slug>.md (same title updates it)
        and refresh the notes manifest."""
        from ouro.desk import notes

        folder = self.folder
        path, meta, created = notes.write_note(folder, title, body, tags=tags)
        after_write(folder, [path, notes.manifest_path(folder)])
        return {
            "note": meta,
            "slug": path.stem,
            "created": created,
            "locator": folder.locator(path),
        }


class Record(Namespace):
    @verb
    def redact(
        self,
        locator: Annotated[
            str, P("the record: a file, or 'file.jsonl#id' for one record", nonblank=True)
        ],
        *,
        match: Annotated[str, P("the secret text to replace, exactly", nonblank=True, secret=True)],
    ) -> dict[str, Any]:
        """Take a secret out of a record for good: rewrite the file (or one JSONL record,
        'file.jsonl#id') atomically with every occurrence of --match replaced by
        [redacted:manual], keep no copy (the search index is dropped for rebuild), and
        record an Arc event naming where, never what."""
        from ouro.arc.scrub import redact_record

        return redact_record(self.folder, locator, match)
