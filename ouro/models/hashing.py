"""Content hashes that name their algorithm: ``sha256:<hex>``."""

from __future__ import annotations

import hashlib
from pathlib import Path

ALGORITHM = "sha256"


def content_hash(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return f"{ALGORITHM}:{hashlib.sha256(raw).hexdigest()}"


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"{ALGORITHM}:{digest.hexdigest()}"
