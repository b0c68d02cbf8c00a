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
  line of ``limit`` bytes; a longer line is skipped to its end and replaced;
- a record log (``line_pieces``: ``facts.jsonl``, the day files) is read a
  piece of whole lines at a time; a line longer than ``LINE_LIMIT`` is yielded
  as its size, looked through for its newline and never held;
- ``open_regular`` is how a file in a bundle is opened for reading: without
  blocking, then ``fstat`` of the open descriptor; anything but a regular file
  raises ``NotRegularFile`` (an ``OSError``, so readers that report "cannot
  read" report it the same way);
- a record document read whole (``file_bytes``/``file_text``: a checkpoint,
  a receipt, a manifest, a ledger, a note, a legacy bundle's file) is opened so
  and bounded by ``DOC_LIMIT``: a larger one raises ``TooLarge`` (an
  ``OSError`` too, ``EFBIG``, naming the size and the limit) from its
  ``fstat``, before a byte is read, and at most ``limit`` + 1 bytes are read
  should it grow meanwhile. Whatever sits where a bundle file belongs -- a
  FIFO, a device, a sparse file of terabytes -- a read of it finishes and
  holds at most the limit.

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
    from collections.abc import Callable, Iterator
    from typing import IO

CHUNK = 1 << 16
#: the longest line a record log may hold (``facts.jsonl``, a flight-recorder
#: or sentinel day file), its newline not counted: far above what a writer
#: writes (a fact or an event is at most a few hundred kB, docs/concepts.md#limits)
LINE_LIMIT = 16 << 20
#: the largest record document ``file_bytes`` reads whole (a checkpoint,
#: ``entities.json``, the notes manifest, a receipt, a note, a ledger, a file
#: of a legacy bundle being migrated): 64 MiB, some 25 times the
#: ``entities.json`` of a 100,000-fact diary (2.4 MB, docs/desk.md) and 16
#: times the largest note body (1,000,000 characters, at most 4 MB of UTF-8),
#: yet a bound on what one read holds however large a file is put in its place
DOC_LIMIT = 64 << 20
#: how much of a log ``line_pieces`` reads at a time
PIECE = 4 << 20
#: how much of an overlong line is looked through at a time for its end
_SKIP = 1 << 20
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symlink"),  # (an lstat: the index scan follows none)
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def not_regular(mode: int) -> str:
    """What ``NotRegularFile`` says of a file of ``mode``: for a reader that only
    ``stat``-ed it (an index scan) and reports it the same way."""
    return f"{_kind(mode)}, not a regular file"


def _too_long(what: str, limit: int, unit: str, error: type[OuroError]) -> OuroError:
    return error(
        f"{what}: more than the limit of {limit:,} {unit}",
        hint=f"shorten {what} (limits: docs/concepts.md#limits); "
        "put long material in a note and point at it by locator",
    )


class NotRegularFile(OSError):
    """A path names a FIFO, a device, a socket or a folder: never read.

    An ``OSError``, so a reader that reports "cannot read (reason)" and goes on
    reports this one the same way: ``strerror`` says what the path is."""


class TooLarge(OSError):
    """A record file is larger than ``file_bytes`` reads whole: never read.

    An ``OSError`` (``EFBIG``) for the same reason as ``NotRegularFile``:
    ``strerror`` gives the size and the limit, ``filename`` the file."""


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read descriptor of the regular file ``path``.

    The one way a file in a bundle or from outside is opened for reading: the
    open does not block (a FIFO without a writer cannot hang it), then the open
    descriptor's ``fstat`` decides (no race with a rename), and anything but a
    regular file raises ``NotRegularFile``. Other failures raise ``OSError``
    as ``os.open`` does (``FileNotFoundError``, ...)."""
    return _open_stat(path)[0]


def _open_stat(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """``open_regular``, with the ``fstat`` that decided (its size, for a limit)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            # 22: EINVAL (not imported: errno is not loaded at start-up)
            raise NotRegularFile(22, not_regular(st.st_mode), os.fspath(path))
        # (O_NONBLOCK is left set: a regular file's reads ignore it, and clearing
        # it would cost two more system calls on every diary write's reads)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def file_bytes(path: str | os.PathLike[str], *, limit: int = DOC_LIMIT) -> bytes:
    """The bytes of the regular file ``path`` (a record document: a checkpoint,
    a receipt, a manifest, a note), opened by ``open_regular``: a FIFO raises
    ``NotRegularFile`` instead of blocking. A file of more than ``limit`` bytes
    raises ``TooLarge`` -- decided from its ``fstat`` before a byte is read, and
    never more than ``limit`` + 1 bytes are read should it grow meanwhile.
    ``OSError`` otherwise, as ``Path.read_bytes``."""
    fd, st = _open_stat(path)
    try:
        if st.st_size > limit:
            raise too_large(path, f"{st.st_size:,} bytes", limit)
        # the first read asks for the whole file and one byte more (EOF in two
        # calls, as ``Path.read_bytes``); a file still growing is read on in
        # pieces, up to the limit
        data = _take(lambda n: os.read(fd, n), limit, first=st.st_size + 1)
    finally:
        os.close(fd)
    if data is None:
        raise too_large(path, "grown while read", limit)
    return data


def file_text(path: str | os.PathLike[str], *, limit: int = DOC_LIMIT) -> str:
    """``file_bytes`` decoded as strict UTF-8 (``UnicodeDecodeError`` otherwise)."""
    return file_bytes(path, limit=limit).decode("utf-8")


def too_large(path: str | os.PathLike[str], size: str, limit: int) -> TooLarge:
    # 27: EFBIG (errno is not loaded at start-up)
    return TooLarge(
        27, f"{size}, more than the limit of {limit:,} bytes for a record file", os.fspath(path)
    )


def _open_regular(path: str | os.PathLike[str], what: str, error: type[OuroError]) -> int:
    """A read descriptor of ``path``, refusing anything but a regular file."""
    try:
        return open_regular(path)
    except NotRegularFile as exc:
        raise error(
            f"{what}: {exc.strerror}; ouro reads only regular files",
            hint="pass a regular file, or '-' to read stdin",
        ) from None
    except OSError as exc:
        raise error(
            f"{what}: cannot read ({exc.strerror or exc})",
            hint="pass a readable UTF-8 file",
        ) from None


def _take(read: Callable[[int], bytes], limit: int, *, first: int = CHUNK) -> bytes | None:
    """At most ``limit`` bytes from ``read``, or None when there are more
    (``first``: how much the first call asks for; ``CHUNK`` after it)."""
    parts: list[bytes] = []
    count = 0
    want = first
    while count <= limit:
        chunk = read(min(want, limit + 1 - count))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        count += len(chunk)
        want = CHUNK
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


# --- record logs, a piece at a time ------------------------------------------


def overlong(size: int) -> str:
    """Why a line ``line_pieces`` skipped is not read (a bad line's reason)."""
    return f"a line of {size:,} bytes, longer than the limit of {LINE_LIMIT:,}; skipped unread"


def line_pieces(
    fd: int, start: int, end: int, *, tail: bool = False, limit: int = LINE_LIMIT
) -> Iterator[tuple[int, bytes | int]]:
    """The lines of the open file ``fd`` from ``start`` (a line start) to ``end``.

    Yields ``(offset, data)``, ``data`` one or more whole lines (each ending in
    its newline, none longer than ``limit``), at most about ``PIECE`` bytes at
    a time; or ``(offset, size)`` for one line longer than ``limit``: its
    ``size`` bytes (newline included) are looked through for the newline in
    ``_SKIP`` pieces, jumping over holes, and never held. What is held is
    bounded by ``limit`` whatever the file. A last line without its newline
    (an append in flight) is yielded only with ``tail``, as bytes or a size.
    """
    pos = start
    while pos < end:
        data = os.pread(fd, min(PIECE, end - pos), pos)
        cut = data.rfind(b"\n") + 1
        if not cut and len(data) < end - pos and len(data) <= limit:
            # a line longer than a piece: look on, as far as the limit allows
            data = os.pread(fd, min(limit + 1, end - pos), pos)
            cut = data.rfind(b"\n") + 1
        if cut:
            yield pos, data if cut == len(data) else data[:cut]
            pos += cut
        elif len(data) > limit:
            stop = _line_end(fd, pos + len(data), end)
            if stop < 0:
                if tail:
                    yield pos, end - pos
                return
            yield pos, stop - pos
            pos = stop
        else:
            if tail and data:
                yield pos, data
            return


def _line_end(fd: int, pos: int, end: int) -> int:
    """The offset just past the next newline at or after ``pos`` (-1: none before ``end``)."""
    seek_data = getattr(os, "SEEK_DATA", None)
    while pos < end:
        if seek_data is not None:
            try:  # a hole reads as NUL bytes: no newline in it
                pos = os.lseek(fd, pos, seek_data)
            except OSError as exc:
                if exc.errno == 6:  # ENXIO: nothing but a hole after pos
                    return -1
                seek_data = None
            if pos >= end:
                return -1
        data = os.pread(fd, min(_SKIP, end - pos), pos)
        if not data:
            return -1
        at = data.find(b"\n")
        if at >= 0:
            return pos + at + 1
        pos += len(data)
    return -1


#: how ``torn_tail`` begins (a reader that stored one finds it by this)
TORN_TAIL = "ends in an incomplete line at byte"


def torn_tail(offset: int) -> str:
    """Why the bytes after a log's last newline are not read: the one rule for
    every append log (the event log, facts.jsonl). An append writes whole lines
    in one locked write, so an unterminated end is a writer mid-append or one
    that died mid-line; either way it is reported, never folded or dropped, and
    read once it ends in a newline."""
    return f"{TORN_TAIL} {offset} (a writer is mid-append or died mid-line)"
