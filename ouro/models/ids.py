"""Time-sortable ids prefixed by kind: ``f-01jh…`` (fact), ``ev-…`` (event).

Layout after the prefix: 10 Crockford base32 characters of Unix milliseconds,
then 8 of randomness. Within one process ids are strictly increasing even in
the same millisecond, so sorting ids sorts by creation.
"""

from __future__ import annotations

import _thread  # threading's own lock, without importing threading (~4M instructions)
import os
import re
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
#: compiled on first use (``re``'s own cache): only a write makes an id
_PREFIX = r"^[a-z][a-z0-9]{0,7}$"
_lock = _thread.allocate_lock()
_last = (0, 0)


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    global _last
    if not re.match(_PREFIX, prefix):
        raise ValueError(f"id prefix {prefix!r} must be 1-8 lowercase letters/digits")
    with _lock:
        millis = time.time_ns() // 1_000_000
        rand = int.from_bytes(os.urandom(5), "big")
        last_ms, last_rand = _last
        if millis <= last_ms:
            millis, rand = last_ms, last_rand + 1
        _last = (millis, rand)
    return f"{prefix}-{_encode(millis, 10)}{_encode(rand & ((1 << 40) - 1), 8)}"


#: compiled on first use (``re``'s cache), not at import: a host hook makes ids, never checks one
ID_PATTERN = r"^[a-z][a-z0-9]{0,7}-[0-9a-hjkmnp-tv-z]{18}$"


def is_id(text: str, prefix: str | None = None) -> bool:
    if not re.match(ID_PATTERN, text):
        return False
    return prefix is None or text.startswith(prefix + "-")
