"""Where a claim's source ref lives, and a cheap stat fingerprint of it.

No schema library here: the checkpoint's claim summary (``ouro.arc.stores``)
re-checks verified claims with ``stat_ref`` on every fold, including the one
each host hook triggers, and must not pay for pydantic at start-up. Full
resolution and hashing stay with the claim schema in ``ouro.arc.claim_status``.
"""

from __future__ import annotations

import os

from ouro.bundle import Bundle

#: A ref whose first segment is one of these is a bundle locator; any other is
#: a path relative to the folder that contains the bundle.
BUNDLE_AREAS = frozenset({"arc", "desk", "habits", "state", "bundle.json"})


def stat_ref(bundle: Bundle, ref: str) -> list[int] | None:
    """A cheap change fingerprint (size, mtime, ctime, inode), or None if gone.

    No symlink-escape check here (that costs a realpath per ref): refs were
    validated when written, and any change sends the claim through the full
    derivation, which resolves strictly.
    """
    path = ref.partition("#")[0]
    root = bundle.root if path.split("/", 1)[0] in BUNDLE_AREAS else bundle.root.parent
    try:
        st = os.stat(os.path.join(root, path))
    except (OSError, ValueError):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
