"""Where the saved diary state stands, read cheaply (``ouro.desk.factstate``).

The snapshot file (``state/cache/diary-state.marshal``) starts with a header
(``_HEADER``: ``SNAPSHOT_MAGIC``, the length of a marshalled tuple, the
snapshot's version, the log's inode and the offset it covers), then that tuple,
whose first fields are (version, log path, log inode, offset, ...).
``saved_cursor`` reads just the header, so ``ouro index status`` need neither
import the diary state nor decode the tuple (~100 kB of entity tables on a
year's diary).
"""

from __future__ import annotations

import struct
from pathlib import Path

from ouro.store.bounded import open_regular

#: 2: no fact texts (read from the log when needed), exact-duplicate keys are digests;
#: 3: the facts and the exact-duplicate keys as sorted tables, searched in place;
#: 4: each entity's fact ids marshalled apart, decoded when a write needs them;
#: 5: each entity's near-duplicate token index saved too (``Postings``);
#: 6: the log's place as the one append-log cursor (``ouro.store.cursor``): its stamp, not its mtime;
#: 7: the version, the log's inode and the offset in the header too (``SNAPSHOT_MAGIC`` 4)
SNAPSHOT_VERSION = 7
#: the snapshot file starts with this, then the length of the marshalled part,
#: the version, the log's inode and the offset
SNAPSHOT_MAGIC = b"OURODS4\n"
_HEADER = struct.Struct(">8sQQQQ")
#: save the state again once the log grew this much (a fresh process then
#: reads at most this much of the log itself)
SNAPSHOT_EVERY = 1 << 20


def saved_cursor(snapshot: Path) -> tuple[int, int] | None:
    """(log inode, offset) a saved state covers, or None when there is none usable.
    Reads only the snapshot's header."""
    try:
        with open(open_regular(snapshot), "rb") as handle:
            magic, size, version, inode, offset = _HEADER.unpack(handle.read(_HEADER.size))
    except (OSError, struct.error):
        return None
    if magic != SNAPSHOT_MAGIC or version != SNAPSHOT_VERSION or size > 1 << 26:
        return None
    return inode, offset
