"""Blender's own output around a render: its C-level prints to a log, and a Workbench render's EGL noise dropped.

Blender prints "Fra:" progress lines on stdout; file descriptor 1 is pointed at
`workdir/blender.log` while Blender works, and the tail of that log is put into
the exception when the render fails. stderr is left alone, except that a Workbench
render's `EGL Error (0x3009): EGL_BAD_MATCH` lines are dropped: Blender's headless
GPU context prints them while it probes EGL surface configurations, and the render
completes unaffected (the image and depth are checked in tests), so they only
alarm a user. Every other stderr line of the render is passed through.

On Windows `ctypes.CDLL(None)` raises TypeError (there is no "this process" C
library handle), so the C-level flush is skipped there: the module, and the
Blender add-on that imports it, must load on Windows and macOS too.
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

EGL_NOISE = b"EGL_BAD_MATCH"  # stderr lines of a Workbench render that are dropped (module docstring)


def _c_library() -> Any:
    """The process's C library for fflush, or None where ctypes cannot open it (Windows: TypeError)."""
    try:
        return ctypes.CDLL(None)
    except (TypeError, OSError):
        return None


_LIBC = _c_library()


def _flush_c() -> None:
    if _LIBC is not None:
        _LIBC.fflush(None)


@contextmanager
def _fd_to(fd: int, stream, path: Path):
    """Point file descriptor `fd` (and the Python `stream` on it) at `path`; restore it afterwards.

    Blender prints from C, below Python's sys.stdout/sys.stderr, so the descriptor itself is moved;
    both buffers are flushed on the way in and out so nothing lands on the wrong side.
    """
    stream.flush()
    _flush_c()
    saved = os.dup(fd)
    try:
        with open(path, "wb") as log:
            os.dup2(log.fileno(), fd)
        yield
    finally:
        stream.flush()
        _flush_c()
        os.dup2(saved, fd)
        os.close(saved)


def stdout_to(path: Path):
    """Point fd 1 (Blender's C-level prints) at `path`; restore it afterwards."""
    return _fd_to(1, sys.stdout, path)


@contextmanager
def stderr_without(noise: bytes, path: Path, active: bool = True):
    """Collect fd 2 in `path` while active, then pass every line not containing `noise` to the real stderr."""
    if not active:
        yield
        return
    try:
        with _fd_to(2, sys.stderr, path):
            yield
    finally:
        kept = [line for line in path.read_bytes().splitlines(keepends=True) if noise not in line]
        if kept:
            os.write(2, b"".join(kept))
