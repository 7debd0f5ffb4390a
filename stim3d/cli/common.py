"""What every command group shares: the one-line error type, the parser class, argument types, scoring-core hand-off.

Every numeric option of every command is typed by a factory here (`whole`, `number`,
`seconds`), so each is bounded at parse time: a value out of range, `nan`, `inf` or
`1e308` is one line and exit 2 before any work starts (not a traceback, and not after
a batch has rendered for an hour). The bounds are stated once, below, and listed in
docs/hardening.md.
"""

from __future__ import annotations

import argparse
import errno
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from stim3d.errors import Stim3dError
from stim3d.files import TMP_MARK
from stim3d.render.batch.folder import RECORDS


class UsageError(Stim3dError):
    """A user's mistake outside the config (an argument, a path)."""


_HINTS = {
    errno.ENOSPC: "the disk is full; its temporary files were removed: free space and rerun the same command",
    errno.EDQUOT: "the disk quota is exceeded; its temporary files were removed: free space and rerun",
    errno.EACCES: "permission denied: choose a folder you may write to",
    errno.EROFS: "the file system is read-only: choose another folder",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOENT: "no such file or folder",
    errno.ELOOP: "a symbolic link loops, or stands where stim3d refuses to follow one",
    errno.EEXIST: "it already exists",
    errno.ENOTEMPTY: "the folder is not empty",
    errno.EPERM: "operation not permitted: choose a folder you own",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) and rerun",
    errno.EIO: "an input/output error on the device: check the disk",
    errno.EBUSY: "the file or folder is busy (in use by another process)",
}


def shown_name(text: str) -> str:
    """A name the user gave (a path, a preset), safe inside a one-line message: as given when every character
    prints, else quoted with its escapes (`'dysm3d\\n'`), so a newline or a control character can neither cut the
    line short (the command prints an error's first line) nor hide what was really typed."""
    return text if text.isprintable() else repr(text)


def _shown_path(name: object) -> str:
    """A path as the user knows it: a temporary sibling (`.x.tmp-host-pid`) is shown as the folder it was in."""
    path = Path(str(name))
    for i, part in enumerate(path.parts):
        if TMP_MARK in part:
            return shown_name(str(Path(*path.parts[:i]) if i else Path(".")))
    return shown_name(str(path))


def error_line(exc: BaseException) -> str:
    """One line for an error the operating system (or a decoder) raised: the path, and what to do."""
    if isinstance(exc, UnicodeError):
        return f"a file is not UTF-8 text ({exc}); save it as UTF-8"
    if isinstance(exc, OSError):
        where = _shown_path(exc.filename) if exc.filename is not None else ""
        if exc.filename2 is not None:
            where += f" -> {_shown_path(exc.filename2)}"
        message = str(exc).strip().splitlines()[0] if exc.errno is None and str(exc).strip() else ""
        what = _HINTS.get(exc.errno or 0) or exc.strerror or message or "the operating system refused"
        if exc.errno is None:  # raised by a library (an image decoder, ...), not by a system call: name its kind
            what = f"{type(exc).__name__}: {what}"
        return f"{where}: {what}" if where else what
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class CliParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(2, f"stim3d: error: {message} (see '{self.prog} --help')\n")


MAX_COUNT = 10**9  # any count of items, questions, trials
MAX_SECONDS = 86400.0  # a timeout of a day: longer is a typo (3000000) or "no limit", which is the default
MAX_SEED = 2**63 - 1
MAX_WORKERS = 4096  # worker processes or Ray actors
MAX_SIZE = 8192  # image width and height in pixels (render.width/height's own bound)
MAX_SAMPLES = 65536  # render samples (render.samples' own bound)
MAX_PORT = 65535


def whole(low: int, high: int, unit: str = "") -> Callable[[str], int]:
    """An argument type: a whole number from `low` to `high` (inclusive); one line naming the bound otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{_shown(text)}: must be at least {low}{unit}")
        if value > high:
            raise argparse.ArgumentTypeError(f"{_shown(text)}: must be at most {high}{unit}")
        return value
    parse.__name__ = "whole number"
    return parse


def number(low: float, high: float, *, above_low: bool = False, unit: str = "",
           too_low: str = "") -> Callable[[str], float]:
    """An argument type: a finite number in [low, high] (or (low, high] with `above_low`); never nan or inf.

    `too_low`: the message for a value under the range (default: 'must be at least LOW' or 'above LOW').
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: must be a finite number")
        if value < low or (above_low and value == low):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: " + (
                too_low or f"must be {'above' if above_low else 'at least'} {low:g}{unit}"))
        if value > high:
            raise argparse.ArgumentTypeError(f"{_shown(text)}: must be at most {high:g}{unit}")
        return value
    parse.__name__ = "number"
    return parse


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


positive = whole(1, MAX_COUNT)  # a count of something: at least one
seconds = number(0, MAX_SECONDS, above_low=True, unit=" seconds (a day)",
                 too_low="give a positive number of seconds")  # a timeout: above 0, at most a day
seed = whole(0, MAX_SEED)
samples = whole(1, MAX_SAMPLES)
pixels = whole(8, MAX_SIZE, " pixels")
workers = whole(1, MAX_WORKERS)


def writable_file(path: Path, option: str) -> Path:
    """`path` if a file can be written there (its folder exists, it is not a folder); else UsageError, before any work."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; name a file")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {path.parent} does not exist")
    return path


def load_scoring_core(spec: str | None):
    from stim3d.scoring.cores import ScoringCoreError, load_core

    try:
        return load_core(spec)
    except ScoringCoreError as exc:
        raise UsageError(str(exc)) from None


def deliver_records(out: Path, name: str, core, timeout: float | None = None) -> bool:
    """Hand the batch's records to the scoring core and print what it returns; False if the core failed.

    The core runs at most `timeout` seconds (default scoring.cores.TIMEOUT): a hanging core cannot keep a
    finished batch from exiting. An interrupt while it runs says so: the batch is complete, nothing to resume.
    """
    from stim3d.scoring.cores import TIMEOUT, ScoringCoreError, run_core
    from stim3d.scoring.records import read_records

    records_path = out / RECORDS
    if not records_path.is_file():
        print(f"scoring core {name} not called: no {records_path} (build it first, e.g. by merging shards)")
        return True
    records = read_records(records_path)
    try:
        lines = run_core(name, core, records, out, timeout or TIMEOUT)
    except ScoringCoreError as exc:  # a plug-in core's failure must not hide the batch, which is complete on disk
        print(f"stim3d: {exc}", file=sys.stderr)
        return False
    except KeyboardInterrupt:
        raise CoreInterrupted(f"stim3d: interrupted while scoring core {name} ran; the batch in {out} is complete "
                              "(nothing left to render); the same command calls the core again") from None
    for line in lines:
        print(line)
    return True


class CoreInterrupted(Exception):
    """Ctrl-C or SIGTERM while the scoring core ran: the batch is complete, so this is no 'rerun to resume'."""
