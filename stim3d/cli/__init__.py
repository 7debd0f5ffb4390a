"""The `stim3d` command: a thin layer that parses, calls the library, prints.

Every user mistake (bad config, bad argument, missing file) ends as one line on
stderr naming what is wrong, and exit code 2; never a traceback. So does what the
system refuses (a full disk, a read-only folder, a name too long, a file that is not
UTF-8): `main` is the one place that turns these into that line (`common.error_line`);
temporaries are already gone by then (stim3d/files.py removes them on any error).

Each command group is a module here (batch, score, eval, study, views, export, sweep, addon)
with a `register(sub)` that adds its subcommands; this module builds the parser
and turns the library's one-line exceptions into exit code 2, each setting they name
shown as its flag (flags.py). A command lets a library error pass unchanged; it catches
one only to add what the library cannot know (a flag the library has no setting for).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from stim3d.cli import addon, batch, export, logs, presets, score, study, sweep, views
from stim3d.cli import eval as eval_cmd
from stim3d.cli.common import CliParser, CoreInterrupted, error_line, shown_name
from stim3d.cli.flags import error_text
from stim3d.cli.streams import guarded_streams
from stim3d.errors import Stim3dError
from stim3d.version import __version__

GROUPS = (batch, presets, score, eval_cmd, study, export, views, sweep, addon)  # the order of `stim3d --help`


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="stim3d", description="Photorealistic 3D stimuli with exact ground truth.")
    parser.add_argument("--version", action="version", version=f"stim3d {__version__}")
    logs.add_arguments(parser)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for group in GROUPS:
        group.register(sub)
    for command in sub.choices.values():  # `stim3d render ... --verbose` as well as `stim3d --verbose render ...`
        logs.add_arguments(command, subcommand=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    with guarded_streams():  # a reader that leaves (`| head`) never changes the exit code or stops a file's write
        return _run(func, args, argv)


def _run(func: Callable[[argparse.Namespace], int], args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """Run one command, turning the library's one-line exceptions into one stderr line and exit code 2."""
    from stim3d.render.batch.config import ConfigError

    try:
        logs.configure(args.verbose, args.log_file)
    except OSError as exc:  # the path given, always: the system names none when the open works but appending fails
        reason = error_line(OSError(exc.errno, exc.strerror)) if exc.errno is not None else error_line(exc)
        print(f"stim3d: error: --log-file {shown_name(args.log_file)}: cannot append log records to it: {reason}",
              file=sys.stderr)
        return 2
    from stim3d.eval.redact import shown_argv

    logs.LOGGER.info("stim3d %s: %s", __version__, " ".join(shown_argv(sys.argv[1:] if argv is None else argv)))
    try:
        return func(args)
    except ConfigError as exc:  # every problem of the config, one line each
        for line in error_text(exc).splitlines() or [type(exc).__name__]:
            print(f"stim3d: error: {line}", file=sys.stderr)
        return 2
    except Stim3dError as exc:  # every user-facing failure (stim3d/errors.py): one line, exit 2
        logs.LOGGER.debug("the error's traceback", exc_info=True)  # --verbose / --log-file show where it came from
        text = error_text(exc)
        print(f"stim3d: error: {text.splitlines()[0] if text else type(exc).__name__}", file=sys.stderr)
        return 2
    except CoreInterrupted as exc:
        print(str(exc), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("stim3d: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except RecursionError:  # input nested deeper than a reader can follow; the readers that expect it say which
        print("stim3d: error: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except (OSError, UnicodeError) as exc:  # the system refused (disk full, read-only, name too long, not UTF-8)
        logs.LOGGER.debug("the error's traceback", exc_info=True)
        print(f"stim3d: error: {error_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
