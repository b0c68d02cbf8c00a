"""Content hashes that name their algorithm: ``sha256:<hex>``."""

from __future__ import annotations

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


def hash_file(path: Path) -> str:
    """The content hash of a file, read a piece at a time (bounded whatever its
    size); a FIFO or a device raises ``NotRegularFile`` instead of blocking."""
    from ouro.store.bounded import open_regular

    digest = sha256()
    with open(open_regular(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"{ALGORITHM}:{digest.hexdigest()}"
