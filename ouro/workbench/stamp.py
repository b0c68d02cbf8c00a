"""The bundle's change stamp, which the served pages poll to update themselves.

A digest of (path, size, mtime) of every folder and file under the bundle
except ``state/`` (runtime scratch and the index, which change without the
bundle's content changing). ouro replaces files by rename, which moves the
folder's mtime; JSONL and daily reflections grow by appends, which move the
file's. Reading stats writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SKIP_TOP = frozenset({"state", ".git"})


def bundle_stamp(root: Path) -> str:
    digest = hashlib.blake2b(digest_size=12)
    top = os.fspath(root)
    for folder, dirs, files in os.walk(top):
        if folder == top:
            dirs[:] = [d for d in dirs if d not in SKIP_TOP]
        dirs.sort()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        digest.update(f"{folder}\0{st.st_mtime_ns}\n".encode())
        for name in sorted(files):
            try:
                fst = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            digest.update(f"{name}\0{fst.st_size}\0{fst.st_mtime_ns}\n".encode())
    return digest.hexdigest()
