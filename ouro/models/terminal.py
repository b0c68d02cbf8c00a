"""Text a host wrote for a terminal, made plain before ouro keeps or prints it.

A host's output (a habit agent's stderr or stdout tail in a receipt's
``errors``) may carry colour codes and other terminal control: written raw,
``ouro habits last`` would replay them into the reader's terminal. ``plain``
removes CSI sequences (``ESC [ … final``: colours, cursor moves), OSC sequences
(``ESC ] … BEL`` or ``ESC \\``: titles, hyperlinks), other two-character escapes,
C1 controls and every C0 control but newline and tab. A carriage return becomes
a newline (a progress line redrawn in place stays readable).
"""

from __future__ import annotations

import re

_CONTROL = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, to BEL or ST (or the end)
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: parameters, intermediates, final byte
    r"|\x1b[@-_]?"  # another escape (a lone ESC too)
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # C0 but \t \n \r, DEL, C1
)


def plain(text: str) -> str:
    """``text`` without terminal control sequences (see the module docstring)."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
