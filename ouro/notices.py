"""Warnings a tool call collects on its way: ``warn(message)`` anywhere below,
``collect()`` around one call (``ouro.spec.verb`` does it for every library verb).

A write whose record is durable but whose derived file (the search index,
say) could not be refreshed succeeds; the layer that noticed calls ``warn``,
and the tool's result carries the line in ``warnings`` -- so the caller knows,
and never retries a write that happened. Outside ``collect()`` a warning has
nowhere to go and is dropped; whatever marked the derived file stale did so
on disk already.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[list[str] | None] = ContextVar("ouro_notices", default=None)


def warn(message: str) -> None:
    found = _current.get()
    if found is not None and message not in found:
        found.append(message)


@contextmanager
def collect() -> Iterator[list[str]]:
    """The warnings of the block; they reach an enclosing ``collect()`` too, so
    a verb that calls another verb reports the warnings of both."""
    found: list[str] = []
    outer = _current.get()
    token = _current.set(found)
    try:
        yield found
    finally:
        _current.reset(token)
        if outer is not None:
            outer.extend(m for m in found if m not in outer)
