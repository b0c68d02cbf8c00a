"""Bounded reads: input from outside is measured while it is read, never after.

Contract: every file or stream that reaches ouro from outside the record -- a
``--*-file`` option and ``-`` (stdin) of the generated CLI, host hook stdin, a
habit definition, ``bundle.json``, a project pointer, a settings file -- is read
here, with a limit:

- at most ``limit`` + 1 units (characters for text, bytes for ``read_bytes``)
  are ever taken from the source, so what is held stays bounded whatever it is
  (``/dev/zero``, a 400 MB file, an endless pipe); more than ``limit`` is
  refused with the error naming ``what`` was read and the limit;
- a path must be a regular file: a device, a FIFO, a socket or a folder is
  refused before a byte is read (the open is non-blocking, so a FIFO without a
  writer cannot hang it); symlinks are followed to what they name, which must
  itself be a regular file;
- stdin may be anything (a pipe, a terminal, a file) and is bounded the same
  way;
- text is UTF-8, decoded strictly; a bad byte is refused with its offset;
- a line stream (``BoundedLines``: ``ouro mcp``'s stdin) holds at most one
  line of ``limit`` bytes; a longer line is skipped to its end and replaced.

Errors are ``InvalidInput`` unless the caller names another ``OuroError``
subclass (``bundle.json`` is reported as ``CorruptFile``). Standard library
only: the CLI fast paths read ``bundle.json`` through this module.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys

from ouro.errors import InvalidInput, OuroError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO

CHUNK = 1 << 16
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _too_long(what: str, limit: int, unit: str, error: type[OuroError]) -> OuroError:
    return error(
        f"{what}: more than the limit of {limit:,} {unit}",
        hint=f"shorten {what} (limits: docs/concepts.md#limits); "
        "put long material in a note and point at it by locator",
    )


def _open_regular(path: str | os.PathLike[str], what: str, error: type[OuroError]) -> int:
    """A read descriptor of ``path``, refusing anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(
            f"{what}: cannot read ({exc.strerror or exc})",
            hint="pass a readable UTF-8 file",
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(
                f"{what}: {_kind(mode)}, not a regular file; ouro reads only regular files",
                hint="pass a regular file, or '-' to read stdin",
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _take(read: Callable[[int], bytes], limit: int) -> bytes | None:
    """At most ``limit`` bytes from ``read``, or None when there are more."""
    parts: list[bytes] = []
    count = 0
    while count <= limit:
        chunk = read(min(CHUNK, limit + 1 - count))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        count += len(chunk)
    return None


def _decode(read: Callable[[int], bytes], limit: int, what: str, error: type[OuroError]) -> str:
    """At most ``limit`` characters of UTF-8 from ``read`` (refusing more)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    parts: list[str] = []
    count = 0
    offset = 0
    try:
        while True:
            # one byte is at most one character: never decode past limit + 1
            chunk = read(max(1, min(CHUNK, limit + 1 - count)))
            # where this chunk begins: an error's position is counted from here
            begun = offset
            offset += len(chunk)
            text = decoder.decode(chunk, final=not chunk)
            parts.append(text)
            count += len(text)
            if count > limit:
                raise _too_long(what, limit, "characters", error)
            if not chunk:
                return "".join(parts)
    except UnicodeDecodeError as exc:
        # exc.object is the decoder's pending bytes (a split character's start)
        # then this chunk: its start lies ``pending`` bytes before the chunk's
        at = begun - (len(exc.object) - (offset - begun)) + exc.start + 1
        raise error(
            f"{what}: not UTF-8 text (an invalid byte near byte {max(at, 1):,})",
            hint="pass UTF-8 text",
        ) from None


def read_bytes(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str,
    error: type[OuroError] = InvalidInput,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them."""
    fd = _open_regular(path, what, error)
    try:
        data = _take(lambda n: os.read(fd, n), limit)
    except OSError as exc:
        raise error(f"{what}: cannot read ({exc.strerror or exc})", hint="check the file") from None
    finally:
        os.close(fd)
    if data is None:
        raise _too_long(what, limit, "bytes", error)
    return data


def read_text(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str,
    error: type[OuroError] = InvalidInput,
) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` characters."""
    fd = _open_regular(path, what, error)
    try:
        return _decode(lambda n: os.read(fd, n), limit, what, error)
    except OSError as exc:
        raise error(f"{what}: cannot read ({exc.strerror or exc})", hint="check the file") from None
    finally:
        os.close(fd)


def read_stdin(*, limit: int, what: str, error: type[OuroError] = InvalidInput) -> str:
    """Standard input as UTF-8 text, at most ``limit`` characters."""
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            return _decode(buffer.read, limit, what, error)
        # a text stream without bytes underneath (an embedding, a test's StringIO)
        text = stream.read(limit + 1)
    except OSError as exc:
        raise error(f"{what}: cannot read ({exc.strerror or exc})", hint="check stdin") from None
    if len(text) > limit:
        raise _too_long(what, limit, "characters", error)
    return text


def read_input(value: str, *, limit: int, what: str) -> str:
    """``-``: stdin; anything else: the regular file it names (both bounded)."""
    if value == "-":
        return read_stdin(limit=limit, what=f"{what} - (stdin)")
    return read_text(value, limit=limit, what=f"{what} {value}")


class BoundedLines:
    """Lines of a binary stream, each at most ``limit`` bytes (its newline included).

    ``readline`` returns the next line as text (``errors="replace"``, as the MCP
    SDK reads its wire). A longer line is never held whole: it is read to its
    end in ``CHUNK`` pieces and dropped, and ``oversized(head)`` -- given the
    line's first ``HEAD`` bytes -- says what to return in its place. Serves
    ``ouro mcp``'s stdin, one JSON-RPC message per line.
    """

    HEAD = 4096

    def __init__(self, raw: IO[bytes], limit: int, oversized: Callable[[bytes], str]) -> None:
        self._raw = raw
        self._limit = limit
        self._oversized = oversized

    def readline(self) -> str:
        line = self._raw.readline(self._limit + 1)
        if len(line) <= self._limit:
            return line.decode("utf-8", errors="replace")
        head = line[: self.HEAD]
        while line and not line.endswith(b"\n"):
            line = self._raw.readline(CHUNK)
        return self._oversized(head)
