"""Schemas for every record ouro writes (pydantic v2, camelCase on disk)."""

from ouro.models.base import Record
from ouro.models.clock import format_time, parse_time, utc_now, utc_now_iso
from ouro.models.hashing import content_hash, hash_file
from ouro.models.ids import new_id

__all__ = [
    "Record",
    "content_hash",
    "format_time",
    "hash_file",
    "new_id",
    "parse_time",
    "utc_now",
    "utc_now_iso",
]
