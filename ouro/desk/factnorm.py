"""Normalizing fact text and entity names, and the near-duplicate measure.

- ``normalize_text``: casefold, collapse whitespace runs to one space, strip
  whitespace and punctuation (ASCII punctuation and any Unicode P* / S*
  character) from both ends. Exact duplicates are facts whose normalized texts
  are equal; ``fact_hash`` is ``content_hash`` of that normalized text.
- ``tokens``: the set of ``\\w+`` runs of the normalized text.
- ``overlap``: Jaccard similarity of two token sets, ``|A ∩ B| / |A ∪ B|``.
  A new fact is a near-duplicate of an active fact sharing an ``about`` entity
  when ``overlap > NEAR_THRESHOLD`` (0.6).
- ``normalize_entity``: trimmed, whitespace collapsed, casefolded.
"""

from __future__ import annotations

import re
import string
import unicodedata

from ouro.models.hashing import content_hash

NEAR_THRESHOLD = 0.6
_WORD = re.compile(r"\w+")
_EDGE = frozenset(string.punctuation + string.whitespace)


def _is_edge(ch: str) -> bool:
    return ch in _EDGE or unicodedata.category(ch)[0] in "PSZ"


def normalize_text(text: str) -> str:
    folded = " ".join(text.casefold().split())
    # Fast path (most texts): a letter or digit is never an edge character.
    if folded and folded[0].isalnum() and folded[-1].isalnum():
        return folded
    start, end = 0, len(folded)
    while start < end and _is_edge(folded[start]):
        start += 1
    while end > start and _is_edge(folded[end - 1]):
        end -= 1
    return folded[start:end]


def fact_hash(text: str) -> str:
    return content_hash(normalize_text(text))


def tokens(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(normalize_text(text)))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def could_exceed(a: int, b: int) -> bool:
    """Jaccard <= min/max of the set sizes: skip pairs that cannot pass the threshold."""
    return min(a, b) > NEAR_THRESHOLD * max(a, b)


def normalize_entity(name: str) -> str:
    return " ".join(name.split()).casefold()
