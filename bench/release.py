"""Measure every figure the README and docs quote again, at one commit, in one run: `python -m bench.release`.

Run it from a clean checkout on a quiet machine (nothing else on the cores: every
result file records the load it saw). It runs each quoted benchmark's own command in
the order of bench/quoted.py `QUOTED`, one after another, then regenerates the pages'
generated blocks (`python -m bench.docs --only perf`), so the README, docs/performance.md
and bench/results/ all speak of the same commit. The whole run takes hours on two cores
(the full suite alone about five): `--only NAME,...` measures some, `--dry-run` prints
the plan. It stops at the first benchmark that fails, leaving the others' files as they were.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time

from .quoted import QUOTED, ROOT, command


def plan(only: list[str] | None) -> list[tuple[str, str]]:
    names = list(QUOTED) if not only else only
    unknown = [name for name in names if name not in QUOTED]
    if unknown:
        raise SystemExit(f"bench.release: not a quoted figure: {', '.join(unknown)} (quoted: {', '.join(QUOTED)})")
    return [(name, command(name)) for name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.release", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated quoted result names (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands and stop")
    parser.add_argument("--allow-dirty", action="store_true", help="measure a checkout with uncommitted changes")
    args = parser.parse_args(argv)
    steps = plan(args.only.split(",") if args.only else None) + [("docs", "python -m bench.docs --only perf")]
    for name, line in steps:
        print(f"{name:28} {line}")
    if args.dry_run:
        return 0
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    if dirty and not args.allow_dirty:
        print("bench.release: the checkout has uncommitted changes; commit them (the files record the commit) or "
              "pass --allow-dirty", file=sys.stderr)
        return 2
    for name, line in steps:
        started = time.monotonic()
        print(f"bench.release: {name}: {line}", file=sys.stderr, flush=True)
        argv_ = shlex.split(line)
        done = subprocess.run([sys.executable, *argv_[1:]] if argv_[0] == "python" else argv_, cwd=ROOT)
        if done.returncode != 0:
            print(f"bench.release: {name} failed (exit {done.returncode}); the files measured before it are kept",
                  file=sys.stderr)
            return 1
        print(f"bench.release: {name} done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
