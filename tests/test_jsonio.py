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
