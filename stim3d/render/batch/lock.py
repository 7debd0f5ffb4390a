"""One writer per output folder: an exclusive lock held for the whole of a render, merge or sweep.

The lock is `OUT/.stim3d.lock`, held with `flock`: exclusively by a plain run,
shared by shards (each also holds `OUT/.stim3d-shard-K-of-N.lock` exclusively), so
the shards of one batch may share a folder while a plain run excludes them all. The
exclusive holder writes its PID, host and command into its file as JSON. Lock files
are opened with O_NOFOLLOW: a planted symbolic link is refused, never written through. A second run into the same folder is
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

from stim3d.errors import Stim3dError
from stim3d.render.batch.folder import LinkRefused

LOCK_NAME = ".stim3d.lock"


class FolderLocked(Stim3dError, RuntimeError):
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
    info = _holder_info(path) or next(filter(None, map(_holder_info, sorted(path.parent.glob(".stim3d-shard-*.lock")))),
                                      {})
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
    """Hold the lock of `folder` for the `with` block; FolderLocked if another run holds it.

    A plain run holds `.stim3d.lock` exclusively. A shard holds it shared (shards of one
    batch may render into one folder together) and its own shard lock exclusively, so a
    plain run and a shard of one folder exclude each other. The folder is created if
    missing, and removed again on the way out if the run left it empty (a refused
    command leaves no empty --out behind).
    """
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _hold(folder, LOCK_NAME, exclusive=shard is None) as path:
            if shard is None:
                yield path
            else:
                with _hold(folder, lock_name(shard), exclusive=True) as shard_path:
                    yield shard_path
    finally:
        if created:
            try:
                folder.rmdir()  # only succeeds when the run wrote nothing
            except OSError:
                pass


def _open_lock(folder: Path, name: str) -> int:
    """The lock file, never through a symbolic link (O_NOFOLLOW): a planted link would make us write its target."""
    path = folder / name
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise LinkRefused(f"{path}: a symbolic link where stim3d keeps its lock; stim3d never writes through a link "
                          "inside a batch folder (docs/hardening.md): remove it") from None


@contextmanager
def _hold(folder: Path, name: str, exclusive: bool) -> Iterator[Path]:
    path = folder / name
    while True:
        fd = _open_lock(folder, name)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            held = False
        except BlockingIOError:
            held = True
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                os.close(fd)
                raise
            held = _held_without_flock(path)
        if held:
            os.close(fd)
            raise FolderLocked(f"{folder} is in use by another stim3d run: {_holder(path)}; wait for it to finish, "
                               f"or use another folder")
        try:  # the holder before us may have removed the file between our open and our flock: lock the live one
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        if exclusive:
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "command": " ".join(["stim3d", *sys.argv[1:3]])[:200]}
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        yield path
    finally:
        if _sole_holder(fd, exclusive):
            path.unlink(missing_ok=True)
        os.close(fd)


def _sole_holder(fd: int, exclusive: bool) -> bool:
    """May the file be removed? The exclusive holder may; a shared holder only when no other shard holds it."""
    if exclusive:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True
