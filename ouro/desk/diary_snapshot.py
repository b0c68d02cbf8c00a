"""Where the saved diary state stands, read cheaply (``ouro.desk.factstate``).

The snapshot file (``state/cache/diary-state.marshal``) starts with
``SNAPSHOT_MAGIC`` and the length of a marshalled tuple whose first fields are
(version, log path, log inode, offset, ...). ``saved_cursor`` reads just that,
so ``ouro index status`` need not import the diary state itself.
"""

from __future__ import annotations

import marshal
import struct
from pathlib import Path

#: 2: no fact texts (read from the log when needed), exact-duplicate keys are digests;
#: 3: the facts and the exact-duplicate keys as sorted tables, searched in place;
#: 4: each entity's fact ids marshalled apart, decoded when a write needs them;
#: 5: each entity's near-duplicate token index saved too (``Postings``);
#: 6: the log's place as the one append-log cursor (``ouro.store.cursor``): its stamp, not its mtime
SNAPSHOT_VERSION = 6
#: the snapshot file starts with this, then the length of the marshalled part
SNAPSHOT_MAGIC = b"OURODS3\n"
_HEADER = struct.Struct(">8sQ")
#: save the state again once the log grew this much (a fresh process then
#: reads at most this much of the log itself)
SNAPSHOT_EVERY = 1 << 20


def saved_cursor(snapshot: Path) -> tuple[int, int] | None:
    """(log inode, offset) a saved state covers, or None when there is none usable.
    Reads only the snapshot's header and its small marshalled part."""
    try:
        with snapshot.open("rb") as handle:
            magic, size = _HEADER.unpack(handle.read(_HEADER.size))
            if magic != SNAPSHOT_MAGIC or size > 1 << 26:
                return None
            data = marshal.loads(handle.read(size))
    except (OSError, struct.error, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 15 and data[0] == SNAPSHOT_VERSION):
        return None
    inode, offset = data[2], data[3]
    return (inode, offset) if isinstance(inode, int) and isinstance(offset, int) else None
