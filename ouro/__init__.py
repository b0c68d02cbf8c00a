"""ouro: a durable place to stand for AI agents.

A bundle is a folder of plain JSON, JSONL and Markdown. Arc holds live
continuity; Desk holds durable work and the maintained record. Files are the
truth; the SQLite index under ``state/index/`` is a rebuildable cache.
"""

__version__ = "0.1.0"
