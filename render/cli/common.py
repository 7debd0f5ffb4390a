"""What every command group shares: the one-line error type, the parser class, argument types, scoring-core hand-off."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stim3d.render.batch.layout import RECORDS


class UsageError(Exception):
    """A user's mistake outside the config (an argument, a path)."""


class CliParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(2, f"stim3d: error: {message} (see '{self.prog} --help')\n")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def load_scoring_core(spec: str | None):
    from stim3d.scoring.cores import ScoringCoreError, load_core

    try:
        return load_core(spec)
    except ScoringCoreError as exc:
        raise UsageError(str(exc)) from None


def deliver_records(out: Path, name: str, core) -> bool:
    """Hand the batch's records to the scoring core and print what it returns; False if the core failed."""
    from stim3d.scoring.records import read_records

    records_path = out / RECORDS
    if not records_path.is_file():
        print(f"scoring core {name} not called: no {records_path} (build it first, e.g. by merging shards)")
        return True
    records = read_records(records_path)
    try:
        lines = core(records, out)
    except Exception as exc:  # a plug-in core's failure must not hide the batch, which is complete on disk
        print(f"stim3d: scoring core {name} failed on {len(records)} records: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False
    for line in lines or ():
        print(line)
    return True
