"""``ouro.store.jsonio``: the cold readers' JSON parser keeps orjson's rules."""

from __future__ import annotations

import json

import orjson
import pytest

from ouro.store import jsonio

AGREE = [
    b"{}",
    b'  {"a": [1, 2.5, -3e-7, true, false, null], "b": {"c": "d"}}  \n',
    b'{"a":1,"a":2}',
    b'"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00"',
    b"18446744073709551615",
    b"-9223372036854775808",
    b'[0.1, 1e308, -0.0, "\\n\\t\\"\\\\"]',
]


@pytest.mark.parametrize("doc", AGREE)
def test_agrees_with_orjson(doc: bytes) -> None:
    assert jsonio.loads(doc) == orjson.loads(doc)
    assert jsonio.loads(doc.decode()) == orjson.loads(doc)


REFUSED = [
    b"NaN",
    b"[Infinity]",
    b'{"a": -Infinity}',
    b"1e400",
    b"\xff{}",
    b'{"a": "\xc3"}',
    b"\xef\xbb\xbf{}",
    b'"\\ud800"',
    b'"\\uDFFF x"',
    b"[1,]",
    b"{",
    b"",
    b"[" * 100_000 + b"]" * 100_000,
]


@pytest.mark.parametrize("doc", REFUSED, ids=lambda d: repr(d[:20]))
def test_refuses_what_orjson_refuses(doc: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(doc)
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads(doc)


def test_bulk_reads_use_orjson() -> None:
    assert jsonio.loads_for(10) is jsonio.loads
    assert jsonio.loads_for(jsonio.BULK_BYTES + 1) is orjson.loads


# --- writing: the bytes orjson writes, without its import --------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_PLAIN = st.recursive(
    st.none() | st.booleans() | _TEXT | st.integers(-(2**63), 2**64 - 1),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=30,
)


@given(_PLAIN, st.booleans())
def test_plain_values_are_written_as_orjson_writes_them(value: object, sort: bool) -> None:
    expected = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort else 0)
    assert jsonio.plain_dumps(value, sort_keys=sort) == expected
    assert jsonio.dumps(value, sort_keys=sort) == expected


def test_every_character_is_written_as_orjson_writes_it() -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    value = {"t": text, text[:300]: [text[::-1]]}
    assert jsonio.plain_dumps(value) == orjson.dumps(value)


class _Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        1.5,
        [1e16],
        {"a": float("nan")},
        2**64,
        -(2**63) - 1,
        {1: "a"},
        _Str("x"),
        (1, b"x"),
        "\ud800",
    ],
    ids=lambda v: repr(v)[:30],
)
def test_anything_else_is_left_to_orjson(value: object) -> None:
    assert jsonio.plain_dumps(value) is None
