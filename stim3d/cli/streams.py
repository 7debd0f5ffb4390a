"""Standard output and error that a closed pipe cannot break: `stim3d render ... 2>&1 | head -1`.

When the reader of a pipe leaves, the next write raises BrokenPipeError (Python ignores
SIGPIPE). Left alone it escapes from whichever print came first: the summary, before the
scoring core is called and before the exit code is decided, or the score report, before
its file is written. `guarded_streams` wraps sys.stdout and sys.stderr for one command so
that a broken pipe only silences that stream (its descriptor is pointed at /dev/null, so
the interpreter's last flush cannot fail either); the command carries on, writes its
files, and returns the exit code the batch deserves.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class _Guarded:
    """A text stream proxy: writes and flushes never raise BrokenPipeError; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def _silence(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())  # pending and later writes go nowhere, without an error
            os.close(devnull)
        except (AttributeError, OSError, io.UnsupportedOperation):  # no descriptor (a StringIO): drop writes
            pass

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()
            try:
                self._stream.flush()  # now into /dev/null: empties the buffer so the exit flush has nothing left
            except (BrokenPipeError, ValueError):
                pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def guarded_streams() -> Iterator[None]:
    """Run one command with sys.stdout and sys.stderr guarded; flush them before leaving, inside the guard."""
    saved = sys.stdout, sys.stderr
    out, err = _Guarded(sys.stdout), _Guarded(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved
