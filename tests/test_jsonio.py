"""``ouro.store.jsonio``: the one JSON reader, and the rules it keeps.

Each case states the value JSON (with orjson's rules) gives; both of the
reader's parsers are held to it: the standard-library decoder it uses on a
cold start and orjson, which it uses once loaded (as it is in this process).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from ouro.store import jsonio

PARSERS: dict[str, Callable[[Any], Any]] = {
    "loads": jsonio.loads,  # orjson: this test process has imported it
    "cold": jsonio._stdlib_loads,  # what a process without orjson uses
}

VALUES: list[tuple[bytes, Any]] = [
    (b"{}", {}),
    (
        b'  {"a": [1, 2.5, -3e-7, true, false, null], "b": {"c": "d"}}  \n',
        {"a": [1, 2.5, -3e-7, True, False, None], "b": {"c": "d"}},
    ),
    (b'{"a":1,"a":2}', {"a": 2}),  # the last of a repeated key
    (b'"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00"', "caf\u00e9 \u00e9 \U0001f600"),
    (b"18446744073709551615", 18446744073709551615),
    (b"-9223372036854775808", -9223372036854775808),
    (b"18446744073709551616", 1.8446744073709552e19),  # past 64 bits: a double
    (b"-9223372036854775809", -9.223372036854776e18),
    (b'[0.1, 1e308, -0.0, "\\n\\t\\"\\\\"]', [0.1, 1e308, -0.0, '\n\t"\\']),
]


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(("doc", "value"), VALUES, ids=lambda d: repr(d)[:30])
def test_reads_the_value_json_gives(parser: str, doc: bytes, value: Any) -> None:
    loads = PARSERS[parser]
    assert loads(doc) == value
    assert loads(doc.decode()) == value
    assert type(loads(doc)) is type(value)


REFUSED = [
    b"NaN",
    b"[Infinity]",
    b'{"a": -Infinity}',
    b"1e400",
    b"1" + b"0" * 400,  # an integer too large for a double
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


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize("doc", REFUSED, ids=lambda d: repr(d[:20]))
def test_refuses_what_json_refuses(parser: str, doc: bytes) -> None:
    with pytest.raises(jsonio.JSONDecodeError):
        PARSERS[parser](doc)
    assert issubclass(jsonio.JSONDecodeError, json.JSONDecodeError)


def test_a_cold_process_reads_small_documents_without_orjson() -> None:
    code = (
        "import sys\n"
        "from ouro.store import jsonio\n"
        "assert jsonio.loads(b'{\"a\": [1]}') == {'a': [1]}\n"
        "assert jsonio.loads_for(10)(b'[2]') == [2]\n"
        "assert 'orjson' not in sys.modules, 'a small read imported orjson'\n"
        "doc = b'[' + b'1,' * jsonio.BULK_BYTES + b'1]'\n"
        "assert len(jsonio.loads(doc)) == jsonio.BULK_BYTES + 1\n"
        "assert 'orjson' not in sys.modules, 'a 512 KB document imported orjson'\n"
        "big = b'[' + b'1,' * jsonio.DOCUMENT_BYTES + b'1]'\n"
        "assert len(jsonio.loads(big)) == jsonio.DOCUMENT_BYTES + 1\n"
        "assert 'orjson' in sys.modules, 'a bulk read should use orjson'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- writing: the bytes the files hold, with or without orjson -----------------------

WRITERS: dict[str, Callable[..., Any]] = {
    "dumps": jsonio.dumps,  # orjson: this test process has imported it
    "cold": jsonio.plain_dumps,  # what a process without orjson uses for plain values
}

WRITTEN: list[tuple[Any, bool, bytes]] = [
    ({}, False, b"{}"),
    ({"b": [1, None, True, False], "a": "x"}, False, b'{"b":[1,null,true,false],"a":"x"}'),
    ({"b": 1, "a": {"d": 2, "c": 3}}, True, b'{"a":{"c":3,"d":2},"b":1}'),
    ({"\u00e9": 1, "e": 2, "z": 3}, True, b'{"e":2,"z":3,"\xc3\xa9":1}'),  # code-point order
    ("caf\u00e9 \U0001f600 \u2028", False, '"caf\u00e9 \U0001f600 \u2028"'.encode()),
    ('"\\\n\t\r\b\f\x00\x1f\x7f/', False, b'"\\"\\\\\\n\\t\\r\\b\\f\\u0000\\u001f\x7f/"'),
    (
        [18446744073709551615, -9223372036854775808],
        False,
        b"[18446744073709551615,-9223372036854775808]",
    ),
    ((1, ("a",)), False, b'[1,["a"]]'),
]


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize(("value", "sort", "data"), WRITTEN, ids=lambda v: repr(v)[:30])
def test_writes_the_bytes_the_files_hold(writer: str, value: Any, sort: bool, data: bytes) -> None:
    assert WRITERS[writer](value, sort_keys=sort) == data


def _escaped(c: str) -> str:
    """JSON's spelling of one character as ouro's files hold it: the two-letter
    escapes, ``\\u00XX`` for the other control characters, every other character
    (non-ASCII too) as itself."""
    short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r",
             "\b": "\\b", "\f": "\\f"}  # fmt: skip
    if c in short:
        return short[c]
    return f"\\u{ord(c):04x}" if ord(c) < 0x20 else c


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_character_is_spelled_as_the_files_hold_it(writer: str) -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    expected = '"' + "".join(map(_escaped, text)) + '"'
    assert WRITERS[writer](text) == expected.encode("utf-8")


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


def test_a_cold_process_writes_plain_values_without_orjson() -> None:
    code = (
        "import sys\n"
        "from ouro.store import jsonio\n"
        "assert jsonio.dumps({'b': [1, None], 'a': 'é'}, sort_keys=True) == "
        '\'{"a":"é","b":[1,null]}\'.encode()\n'
        "assert 'orjson' not in sys.modules, 'a plain write imported orjson'\n"
        "assert jsonio.dumps([0.5]) == b'[0.5]'\n"
        "assert 'orjson' in sys.modules, 'a float is orjson\\'s to write'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
