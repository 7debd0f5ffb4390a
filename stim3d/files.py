"""Writing files so that a reader never sees half of one: the one place for "temporary name, then rename".

Every file stim3d writes (item folders, records, manifests, thumbnails, pages,
exports) goes through `atomic_path` or `atomic_folder`: the content is written
under a hidden temporary sibling whose name is unique across hosts sharing a
filesystem, flushed to disk, and renamed into place only when complete. A killed
process leaves at worst a `.tmp-` sibling, which `remove_temporaries` deletes and
which no reader ever takes for the real thing.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from stim3d.errors import Stim3dError

TMP_MARK = ".tmp-"


def temporary_sibling(path: Path) -> Path:
    """A hidden name beside `path`, unique per host and process (shards on a shared filesystem never collide)."""
    return path.with_name(f".{path.name}{TMP_MARK}{socket.gethostname()}-{os.getpid()}")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces `path`, on any error it is removed."""
    path = Path(path)
    tmp = temporary_sibling(path)
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path: Path, payload: Any) -> None:
    """Indented JSON with a final newline (the format of every stim3d manifest and summary)."""
    write_text_atomic(path, json.dumps(payload, indent=2) + "\n")


def log_tail(path: Path, lines: int, keep: Callable[[str], bool] = bool) -> list[str]:
    """The last `lines` lines of a log file that `keep` accepts ([] when it cannot be read): one reader for every
    log stim3d quotes in an error (a worker's log, Blender's render log)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if keep(line)][-lines:]


def write_jsonl_atomic(path: Path, rows: Iterable[BaseModel]) -> None:
    """One JSON line per model, in order."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(row.model_dump_json() + "\n")


@contextmanager
def atomic_folder(final: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it takes the place of `final` (replacing an old one).

    The files are fsynced before the rename that publishes the folder, so a
    published folder is complete even after a power loss. An existing `final` is
    swapped with the new folder in one step (Linux `renameat2(RENAME_EXCHANGE)`)
    and then deleted, so a concurrent reader always finds the old or the new
    folder, never none and never a half-written one. Where the filesystem cannot
    swap, the old folder is moved aside first (a reader may then miss it for an
    instant, but never sees a partial one).
    """
    final = Path(final)
    tmp = temporary_sibling(final)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        for child in tmp.iterdir():
            if child.is_file():
                _fsync(child)
        _fsync(tmp)
        if final.exists() and _exchange(tmp, final):
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old folder
        elif final.exists():
            old = final.with_name(f".{final.name}{TMP_MARK}old-{socket.gethostname()}-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux renameat2); False where the system or filesystem cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:  # glibc older than 2.28
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def remove_temporaries(folder: Path) -> int:
    """Delete temporaries left in `folder` by killed runs; returns how many."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    stale = [p for p in folder.iterdir() if p.name.startswith(".") and TMP_MARK in p.name]
    for path in stale:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return len(stale)


class OutsideDestination(Stim3dError, ValueError):
    """A path built from a name read from a file would land outside the folder it belongs in."""


def inside(dest: Path, path: Path) -> Path:
    """`path` if it resolves (symlinks followed) inside `dest`, else OutsideDestination.

    Every name taken from a file (item ids, splits) is checked against a fixed
    character set when it is loaded; this is the second line: a write whose target,
    after `..` and symlinks, is not under its destination folder is refused.
    """
    root = Path(dest).resolve()
    target = Path(path).resolve()
    if target != root and root not in target.parents:
        raise OutsideDestination(f"{path}: resolves to {target}, outside {root}; refusing to write there")
    return Path(path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
