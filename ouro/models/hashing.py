"""Content hashes that name their algorithm: ``sha256:<hex>``."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:  # hashlib's own sha256, without hashlib's OpenSSL start-up (~3 ms on orient's path)
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # Python 3.12+
        except ImportError:  # pragma: no cover - a Python built without them
            from hashlib import sha256

ALGORITHM = "sha256"


def content_hash(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return f"{ALGORITHM}:{sha256(raw).hexdigest()}"


def hash_file(path: Path, *, limit: int | None = None) -> str:
    """The content hash of a file, read a piece at a time (bounded whatever its
    size); a FIFO or a device raises ``NotRegularFile`` instead of blocking. With
    ``limit``, a file of more bytes raises ``TooLarge`` from its ``fstat``, never
    read (a record document ouro would refuse to read is not worth hashing)."""
    from ouro.store.bounded import open_regular, too_large

    digest = sha256()
    fd = open_regular(path)
    if limit is not None:
        size = os.fstat(fd).st_size
        if size > limit:
            os.close(fd)
            raise too_large(path, f"{size:,} bytes", limit)
    with open(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"{ALGORITHM}:{digest.hexdigest()}"
