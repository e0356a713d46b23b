"""Run `python -m hippo` at a real pseudo-terminal of a given width, and read the screen.

What a person sees depends on the terminal: rich measures it through the pty's window
size, so a test sets that size in the child before hippo starts (no COLUMNS variable).
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


@dataclass(slots=True)
class Screen:
    rc: int
    raw: str  # as the terminal received it
    text: str  # without escape sequences and carriage returns

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @property
    def screen(self) -> list[str]:
        """The rows a terminal shows at the end: carriage returns, erased lines and cursor
        moves up applied (what a live progress bar uses), colours dropped."""
        return render(self.raw)


_CONTROL = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\r|\n")


def render(raw: str) -> list[str]:
    rows: list[list[str]] = [[]]
    row = col = 0
    pos = 0
    for m in _CONTROL.finditer(raw):
        for ch in raw[pos:m.start()]:
            line = rows[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        pos = m.end()
        token = m.group(0)
        if token == "\n":
            row += 1
            col = 0
            if row == len(rows):
                rows.append([])
        elif token == "\r":
            col = 0
        elif m.group(2) == "K":  # erase in line (rich: the whole line)
            rows[row] = [] if m.group(1) in ("2", "") else rows[row][:col]
        elif m.group(2) == "A":  # cursor up
            row = max(0, row - int(m.group(1) or 1))
    for ch in raw[pos:]:
        rows[row].append(ch)
    return ["".join(r).rstrip() for r in rows]


def at_terminal(args: list[str], cols: int, env: Mapping[str, str], *, rows: int = 50,
                stdin: bytes | None = None, timeout: float = 120) -> Screen:
    """Run hippo with stdin, stdout and stderr on one pty of `cols` x `rows`."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    full = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    full.setdefault("TERM", "xterm-256color")
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal, then become hippo
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            # As at a person's shell: a suite started in the background (`cmd &` in a
            # script) inherits SIGINT ignored, and Python would then never see a Ctrl-C.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(sys.executable, [sys.executable, "-m", "hippo", *args], full)
        finally:
            os._exit(127)
    if stdin is not None:
        os.write(fd, stdin)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            raise TimeoutError(f"hippo {args} did not finish")
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    raw = b"".join(chunks).decode("utf-8", "replace")
    text = ANSI.sub("", raw).replace("\r\n", "\n").replace("\r", "\n")
    return Screen(os.waitstatus_to_exitcode(status), raw, text)
