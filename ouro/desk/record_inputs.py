"""The old CLI input models of the record verbs (``ouro.api.record``).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from pydantic import Field

from ouro.models.base import ToolInput


class DiaryWriteInput(ToolInput):
    text: str = Field(description="the fact, one atomic statement")
    about: list[str] = Field(default_factory=list, description="entities the fact is about")
    source: str | None = Field(None, description="where it came from")
    trust: str | None = Field(None, description="trust label, e.g. verified, told, inferred")
    channel: str | None = Field(None, description="channel it arrived on")
    friend: str | None = Field(None, description="friend id it came from")
    friend_name: str | None = Field(None, description="friend's display name")
    supersedes: str | None = Field(None, description="id of the fact this one corrects")
    force: bool = Field(False, description="write even if a near-duplicate exists")


class DiaryReflectInput(ToolInput):
    text: str = Field(description="the reflection")


class NotesWriteInput(ToolInput):
    title: str = Field(description="note title (names the file)")
    body: str = Field(description="note body (Markdown)")
    tags: list[str] = Field(default_factory=list, description="a tag (repeatable)")
