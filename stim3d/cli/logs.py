"""`--verbose` and `--log-file`: the logging module's setup for the `stim3d` command.

The library logs through `logging.getLogger("stim3d...")` and never configures logging
itself (an application embedding stim3d decides where records go). The command does:
warnings to stderr by default, `--verbose` adds info and debug records (among them the
traceback behind a one-line error), and `--log-file PATH` appends every record, debug
included, to a file, e.g. for a long batch on a server.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOGGER = logging.getLogger("stim3d")


def add_arguments(parser: argparse.ArgumentParser, subcommand: bool = False) -> None:
    """The two flags; on a subcommand they default to SUPPRESS so `stim3d -v render ...` is not undone."""
    default: dict[str, object] = {"default": argparse.SUPPRESS} if subcommand else {}
    parser.add_argument("--verbose", "-v", action="store_true", help="log details (and the traceback of an error) "
                        "to stderr", **default)  # type: ignore[arg-type]
    parser.add_argument("--log-file", metavar="PATH", help="append every log record (debug included) to this file",
                        **default)  # type: ignore[arg-type]


def configure(verbose: bool, log_file: str | None) -> None:
    """Attach stim3d's handlers to the `stim3d` logger (not the root: other libraries' logs stay theirs)."""
    for old in list(LOGGER.handlers):  # a second main() in one process (tests, embedding) replaces, not adds
        old.close()
        LOGGER.removeHandler(old)
    LOGGER.propagate = False
    LOGGER.setLevel(logging.DEBUG)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("stim3d: %(levelname)s: %(message)s"))
    LOGGER.addHandler(console)
    if log_file:
        handler = logging.FileHandler(Path(log_file), encoding="utf-8")
        handler.setFormatter(logging.Formatter(FORMAT))
        LOGGER.addHandler(handler)
