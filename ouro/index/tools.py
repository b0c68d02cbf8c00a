"""The old CLI input models of the search verbs (``ouro.api.desk`` / ``ouro.api.record``).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ouro.index import search
from ouro.models.base import ToolInput

Kind = Literal["task", "track", "iteration", "friction", "lesson", "tip", "fact", "note", "daily"]
Query = Field(
    default=None,
    description='Words (all must match), "quoted phrases", prefix*; omit for the newest first.',
)
Limit = Field(default=10, ge=1, le=search.MAX_LIMIT, description="At most this many results.")
Mode = Literal["lexical", "semantic", "hybrid"]
ModeField = Field(
    default=None,
    description="lexical (FTS5 words), semantic (by meaning) or hybrid (both, fused); "
    "default hybrid when 'ouro[semantic]' is installed, else lexical.",
)
Explain = Field(default=False, description="Show each result's lexical and semantic rank.")


class DeskSearchInput(ToolInput):
    query: str | None = Query
    kind: list[Kind] | None = Field(default=None, description="Only these kinds (repeatable).")
    track: str | None = Field(default=None, description="Only items of this track.")
    status: str | None = Field(default=None, description="Only tasks with this status.")
    limit: int = Limit
    mode: Mode | None = ModeField
    explain: bool = Explain


class ConsultDiaryInput(ToolInput):
    query: str | None = Query
    about: str | None = Field(default=None, description="Only facts about this entity.")
    since: str | None = Field(default=None, description="Only entries at or after this date.")
    history: bool = Field(default=False, description="Include superseded facts.")
    limit: int = Limit
    mode: Mode | None = ModeField
    explain: bool = Explain


class SearchFactsInput(ToolInput):
    query: str | None = Query
    about: str | None = Field(default=None, description="Only facts about this entity.")
    limit: int = Limit
    mode: Mode | None = ModeField
    explain: bool = Explain


class ConsultNotesInput(ToolInput):
    query: str | None = Query
    tag: str | None = Field(default=None, description="Only notes with this tag.")
    limit: int = Limit
    mode: Mode | None = ModeField
    explain: bool = Explain
