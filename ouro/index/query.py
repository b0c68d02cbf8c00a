"""User query text → a safe FTS5 MATCH expression.

Syntax users get (and nothing else):

- ``word word``: every word must match (stemmed: "parsers" finds "parser");
- ``"quoted phrase"``: the words in this order, next to each other;
- ``prefix*``: any word starting with ``prefix``.

Everything else — FTS5 operators (``AND OR NOT NEAR``), column filters
(``title:x``), parentheses, ``^``, ``+``, lone ``*``, unbalanced quotes, NUL and
other control characters — is treated as plain text: each term is emitted as a
double-quoted FTS5 string built only from letter/digit runs, so the expression
can never be a syntax error. Input with no letters or digits at all, or with
more than ``MAX_WORDS`` words, is refused with ``InvalidInput``.
"""

from __future__ import annotations

import re

from ouro.errors import InvalidInput

MAX_WORDS = 64
_TERM = re.compile(r'"([^"]*)"|([^\s"]+)')
_WORD = re.compile(r"[^\W_]+")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
HINT = (
    'search with plain words (all must match), "quoted phrases" or prefix*, '
    "e.g. 'parser timeout' or '\"release plan\" deploy*'"
)


def to_match(query: str) -> str:
    """The FTS5 MATCH expression for ``query`` (see module docstring)."""
    text = _UNSAFE.sub(" ", query)
    terms: list[str] = []
    words_total = 0
    for match in _TERM.finditer(text):
        phrase, bare = match.group(1), match.group(2)
        words = _WORD.findall(phrase if phrase is not None else bare)
        if not words:
            continue
        words_total += len(words)
        prefix = bare is not None and bare.endswith("*")
        terms.append('"' + " ".join(words) + '"' + ("*" if prefix else ""))
    if not terms:
        shown = query if len(query) <= 40 else query[:40] + "…"
        raise InvalidInput(f"query {shown!r} has no words to search for", hint=HINT)
    if words_total > MAX_WORDS:
        raise InvalidInput(
            f"query has {words_total} words; at most {MAX_WORDS} are searched", hint=HINT
        )
    return " ".join(terms)
