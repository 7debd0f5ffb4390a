"""One writer per output folder: an exclusive lock held for the whole of a render, merge or sweep.

The lock is `OUT/.stim3d.lock` (a shard: `OUT/.stim3d-shard-K-of-N.lock`, so the
shards of one batch may share a folder), held with `flock` and holding the
holder's PID, host and command as JSON. A second run into the same folder is
refused with one line naming the holder. The kernel drops an `flock` when its
process dies, so a lock left by a killed run (same host, PID gone) is simply taken
over; the file is removed when the holder finishes. On a filesystem without
`flock` (some network mounts), the PID and host decide instead: a lock of this host
whose process is gone is stale and taken over; one of another host is honoured.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".stim3d.lock"


class FolderLocked(RuntimeError):
    """Another stim3d run holds the output folder."""


def lock_name(shard: str | None = None) -> str:
    return f".stim3d-shard-{shard.replace('/', '-of-')}.lock" if shard else LOCK_NAME


def _holder_info(path: Path) -> dict:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _holder(path: Path) -> str:
    info = _holder_info(path)
    return f"pid {info.get('pid')} on {info.get('host')} ({info.get('command')})" if info else "another process"


def _held_without_flock(path: Path) -> bool:
    """Where flock is unsupported: is the recorded holder alive (another host's holder counts as alive)?"""
    info = _holder_info(path)
    if not info:
        return False
    if info.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(info.get("pid", 0)), 0)
    except ProcessLookupError:
        return False  # stale: that process is gone
    except (PermissionError, ValueError, TypeError):
        return True
    return int(info.get("pid", 0)) != os.getpid()


@contextmanager
def folder_lock(folder: Path, shard: str | None = None) -> Iterator[Path]:
    """Hold the exclusive lock of `folder` (created if missing) for the `with` block; FolderLocked if taken."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / lock_name(shard)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = False
        except BlockingIOError:
            held = True
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            held = _held_without_flock(path)
        if held:
            os.close(fd)
            raise FolderLocked(f"{folder} is in use by another stim3d run: {_holder(path)}; wait for it to finish, "
                               f"or use another folder")
        try:  # the holder before us may have removed the file between our open and our flock: lock the live one
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(["stim3d", *sys.argv[1:3]])[:200]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        yield path
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)
