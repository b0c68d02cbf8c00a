"""Names on disk: slugs, track names, durations.

A slug is lowercase ASCII letters, digits and single dashes, 1..64 characters,
no leading or trailing dash. A taken slug gets ``-2``, ``-3``, ... so two
titles that slug alike never share a folder. Track names are slugs and never
start with ``_`` (``desk/_friction``, ``_meta`` and ``_record`` are reserved).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ouro.errors import InvalidInput

MAX_SLUG = 64
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def slugify(text: str) -> str:
    """``"Ship the Parser!"`` -> ``"ship-the-parser"``; ``""`` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")
    return slug[:MAX_SLUG].rstrip("-")


def require_slug(text: str, *, field: str) -> str:
    slug = slugify(text)
    if not slug:
        raise InvalidInput(
            f"{field}: {text!r} has no letters or digits to name a file with",
            hint=f"give {field} at least one ASCII letter or digit",
        )
    return slug


def unique_slug(base: str, taken: Callable[[str], bool]) -> str:
    """``base`` if free, else ``base-2``, ``base-3``, ... (within MAX_SLUG)."""
    if not taken(base):
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: MAX_SLUG - len(suffix)].rstrip("-") + suffix
        if not taken(candidate):
            return candidate
        n += 1


def validate_track_name(name: str) -> str:
    """Return the track's folder name for ``name``; refuse unsafe or reserved names."""
    stripped = name.strip()
    if not stripped:
        raise InvalidInput("track: name is empty", hint="name the track, e.g. 'release-1'")
    if "/" in stripped or "\\" in stripped or ".." in stripped or "\x00" in stripped:
        raise InvalidInput(
            f"track: {name!r} contains '/', '\\\\', '..' or NUL",
            hint="a track name is one folder name such as 'release-1'",
        )
    if stripped.startswith("_"):
        raise InvalidInput(
            f"track: {name!r} starts with '_', which is reserved for desk/_friction, "
            "desk/_meta and desk/_record",
            hint="choose a name that starts with a letter or digit",
        )
    return require_slug(stripped, field="track")


def parse_duration(text: str, *, field: str) -> int:
    """``"30m"`` -> 1800 seconds. Units: s, m, h, d; a bare number is seconds."""
    match = _DURATION.match(text)
    if not match:
        raise InvalidInput(
            f"{field}: {text!r} is not a duration",
            hint="write a number with an optional unit: 90s, 30m, 2h, 1d",
        )
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if not 1 <= seconds <= 7 * 86400:
        raise InvalidInput(
            f"{field}: {text!r} is outside 1s..7d",
            hint=f"choose {'an' if field[:1] in 'aeiou' else 'a'} {field} between 1s and 7d",
        )
    return seconds
