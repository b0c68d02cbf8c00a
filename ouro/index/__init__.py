"""The SQLite + FTS5 index of Desk under ``state/index/``: a cache rebuilt from files.

Nothing is imported here: the CLI fast path loads only the modules it needs
(docs/index.md).
"""
