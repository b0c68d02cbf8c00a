"""Reading JSON: the one parser every ouro reader uses.

One function, one rule. ``loads`` parses with orjson when orjson is already
imported in this process (a writer, the MCP server) or the input is larger
than its import pays off for (``BULK_BYTES`` of lines, ``DOCUMENT_BYTES`` for
one document); otherwise with the standard library's C decoder. The
reason is start-up cost: importing orjson pulls in ``dataclasses``,
``inspect``, ``uuid`` and ``platform`` (about 10-15 ms), more than a one-shot
``ouro orient`` spends on its work, while the small files continuity reads on
every call (``bundle.json``, ``latest.json``, claim and obligation files,
event lines) parse in microseconds either way. The decoder keeps orjson's
rules, so a document means the same value whichever parser reads it:

- bytes must be UTF-8 (no BOM); ``NaN``, ``Infinity`` and numbers too large for
  a double are refused;
- an integer outside 64 bits reads as a float, as orjson reads it;
- a string holding a ``\\uD800``-style surrogate escape is decided by orjson
  itself (imported for that document), which refuses lone surrogates;
- nesting too deep for the decoder is an error, not a crash.

Every refusal raises ``JSONDecodeError`` (``json.JSONDecodeError``, which
``orjson.JSONDecodeError`` subclasses), so callers catch one type. A reader of
many lines takes its parser once for the whole batch (``loads_for``: the same
rule, applied to the batch's size). Writers encode with ``dumps``: orjson's
bytes, by the same rule the other way round (orjson once it is loaded; else,
for the plain values a one-shot writer has, the standard library's encoder).
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

JSONDecodeError = json.JSONDecodeError
#: parsing more bytes of JSON lines than this in one batch uses orjson: its import
#: pays off (the standard library's per-call cost adds up over many short lines)
BULK_BYTES = 256 * 1024
#: the same for one document: the C decoder parses one large document nearly as
#: fast as orjson (a 300 KB ``latest.json``: ~2.5 ms against orjson's ~20 ms
#: import, ``bench/onepath.py``'s hook rows), so the import pays off only later
DOCUMENT_BYTES = 4 * 1024 * 1024


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _int(text: str) -> int | float:
    if len(text) < 19:  # fits in 64 bits
        return int(text)
    value = int(text) if len(text) < 22 else None
    if value is not None and -(2**63) <= value < 2**64:
        return value
    return _finite(text)  # beyond 64 bits: a double, as orjson reads it


def _finite(text: str) -> float:
    import math  # on use: the documents continuity reads hold no floats

    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is too large for a double")
    return value


_decode = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite, parse_int=_int
).decode


def _bulk(size: int, limit: int = BULK_BYTES) -> bool:
    """The rule: orjson once it is loaded anyway, or when its import pays off."""
    return size > limit or "orjson" in sys.modules


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """The JSON value of ``data``; raises ``JSONDecodeError``."""
    if _bulk(len(data), DOCUMENT_BYTES):
        import orjson

        return orjson.loads(data)
    return _stdlib_loads(data)


def _stdlib_loads(data: bytes | bytearray | memoryview | str) -> Any:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = str(data, "utf-8")
        except UnicodeDecodeError as exc:
            raise JSONDecodeError(f"not UTF-8 ({exc.reason})", "", exc.start) from None
    # one scan of the whole text for any escape (usually none: writers escape only
    # control characters), the surrogate test only when there is one
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        import orjson  # a surrogate escape: orjson decides (it refuses a lone one)

        return orjson.loads(data)
    if text.startswith("\ufeff"):
        raise JSONDecodeError("a byte order mark (BOM) is not JSON", text, 0)
    try:
        return _decode(text)
    except JSONDecodeError:
        raise
    except ValueError as exc:  # a refused constant or number
        raise JSONDecodeError(str(exc), text, 0) from None
    except RecursionError:
        raise JSONDecodeError("nested too deeply", text, 0) from None


def loads_for(size: int) -> Callable[[bytes], Any]:
    """The parser for a batch of ``size`` bytes of JSON lines, by ``loads``'s rule."""
    if _bulk(size):
        import orjson

        return orjson.loads
    return _stdlib_loads


# --- writing --------------------------------------------------------------------------
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _plain(value: Any) -> bool:
    """Whether ``json`` writes exactly orjson's bytes for ``value``: strings, booleans,
    None, 64-bit integers, and lists, tuples and string-keyed dicts of them (exact
    types: no floats, whose spellings differ, no subclasses, no other types).
    Iterative: a checkpoint holds ~10k values, and this runs on each write."""
    todo = [value]
    pop, push = todo.pop, todo.extend
    while todo:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            push([v for v in item.values() if type(v) is not str])
        elif kind is list or kind is tuple:
            push([v for v in item if type(v) is not str])
        elif kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                return False
        else:
            return False
    return True


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """The bytes ``orjson.dumps(value)`` gives (``OPT_SORT_KEYS`` with ``sort_keys``).

    A one-shot writer (a hook recording one event) need not import orjson for
    that: a plain value is written by the standard library's C encoder, whose
    compact, non-ASCII-preserving output is byte-for-byte orjson's for plain
    values (``tests/test_jsonio.py`` holds them to it). Anything else, and any
    value once orjson is loaded anyway, goes to orjson itself, with its errors.
    """
    if "orjson" not in sys.modules:
        data = plain_dumps(value, sort_keys=sort_keys)
        if data is not None:
            return data
    import orjson

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)


def plain_dumps(value: Any, *, sort_keys: bool = False) -> bytes | None:
    """``dumps`` by the standard library, or None when ``value`` is not plain."""
    if not _plain(value):
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
        return text.encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError):
        return None  # a lone surrogate: orjson raises its own error
    # orjson refuses nesting deeper than 255 (json does not): such a value is
    # not one orjson writes, so there are no bytes of its to match
