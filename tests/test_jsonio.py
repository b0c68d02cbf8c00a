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
        "big = b'[' + b'1,' * jsonio.BULK_BYTES + b'1]'\n"
        "assert len(jsonio.loads(big)) == jsonio.BULK_BYTES + 1\n"
        "assert 'orjson' in sys.modules, 'a bulk read should use orjson'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
