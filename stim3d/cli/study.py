"""`stim3d study build|serve|score`: the same items in front of people (stim3d/study/)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from stim3d.cli.common import MAX_PORT, UsageError, positive, seed, whole
from stim3d.cli.flags import as_flags, flag

if TYPE_CHECKING:
    from stim3d.study.build import BuildOptions


def cmd_study_build(args: argparse.Namespace) -> int:
    from stim3d.study.build import UneditedConsent, build_study

    try:
        report = build_study(Path(args.batch), Path(args.out), build_options(args))
    except UneditedConsent as exc:
        raise UsageError(f"{exc.path}: the consent template is not edited (it still has "
                         f"{', '.join(exc.placeholders)}); replace it with your approved text and build again, "
                         "or pass --pilot to try the study first") from None
    for line in report.summary_lines():
        print(as_flags(line))
    return 0


def build_options(args: argparse.Namespace) -> BuildOptions:
    """`study build`'s arguments as BuildOptions; a bad value is one line naming its option."""
    from pydantic import ValidationError

    from stim3d.study.build import BuildOptions

    values = {name: getattr(args, name) for name in BuildOptions.model_fields if getattr(args, name, None) is not None}
    try:
        return BuildOptions(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        if not error["loc"]:  # a rule across options: its message names them
            raise UsageError(str(error["msg"]).removeprefix("Value error, ")) from None
        name = str(error["loc"][0])
        value = values.get(name)
        shown = "x".join(map(str, value)) if isinstance(value, tuple) else repr(value)
        message = str(error["msg"]).removeprefix("Value error, ")
        raise UsageError(f"{flag(name, shown)}: {message}") from None


def window_size(text: str) -> tuple[int, int]:
    """`--min-window 1024x700` as (1024, 700); the range is BuildOptions' rule."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.strip().isdigit() or not height.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: give width x height in CSS pixels, e.g. 1024x700")
    return int(width), int(height)


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cmd_study_serve(args: argparse.Namespace) -> int:
    """Serve until SIGINT (exit 130, as every stim3d command) or SIGTERM (exit 0), within a fraction of a second
    however busy the server is (study/serve.py serve_until). The first line on stdout is the page's URL (the real
    port when --port 0), flushed at once so a script can read it; each stored session is one line on stderr."""
    from stim3d.study.contract import DATA_DIR
    from stim3d.study.quotas import is_loopback
    from stim3d.study.serve import HOST_NAME, Exposure, make_server, serve_until

    hosts = frozenset(h.strip().lower() for h in args.allowed_host)
    for name in sorted(hosts):
        if not HOST_NAME.fullmatch(name):
            raise UsageError(f"--allowed-host {name!r}: not a host name (no scheme, no port: e.g. study.example.org)")
    if not is_loopback(args.host) and not args.behind_proxy:
        raise UsageError(f"--host {args.host}: not a loopback address, and the study server speaks plain HTTP; "
                         "put it behind a reverse proxy with TLS (docs/study_collect.md) and pass --behind-proxy")
    received: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: received.append(signum))
                for sig in (signal.SIGTERM, signal.SIGINT)}  # before the URL: a script may stop us right after it
    try:
        server = make_server(Path(args.study), args.host, args.port, log=_log,
                             exposure=Exposure(behind_proxy=args.behind_proxy, allowed_hosts=hosts))
        print(server.url, flush=True)
        where = "this machine only" if is_loopback(args.host) else f"every address of {args.host} (behind your proxy)"
        _log(f"serving {server.study.root} to {where}; sessions go to {server.study.root / DATA_DIR}; Ctrl-C stops")
        serve_until(server, lambda: bool(received))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _log("stopped")
    return 130 if received and received[0] == signal.SIGINT else 0


def cmd_study_score(args: argparse.Namespace) -> int:
    from stim3d.study.score import score_study

    report = score_study(Path(args.study), batch=Path(args.batch) if args.batch else None)
    for line in report.summary_lines():
        print(as_flags(line))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    study = sub.add_parser("study", help="put a batch's items in front of people in a browser, and score them")
    group = study.add_subparsers(dest="study_command", required=True, parser_class=type(study))

    p = group.add_parser("build", help="write a self-contained static study folder (jsPsych) from a batch")
    p.add_argument("batch", help="a rendered batch folder")
    p.add_argument("--out", required=True, help="the study folder to write")
    p.add_argument("--per-participant", type=positive, default=None, metavar="N",
                   help="main trials each participant sees (default: all), chosen and ordered per participant")
    p.add_argument("--practice", type=whole(0, 1000), default=None, metavar="N",
                   help="practice trials with feedback (default 2; 0 with --staircase)")
    p.add_argument("--catch", type=whole(0, 1000), default=None, metavar="N",
                   help="attention checks built from the batch's easiest items (default 2; 0 with --staircase)")
    p.add_argument("--seed", type=seed, default=0, help="the seed of every participant's plan (default 0)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="only items whose difficulty value or family parameter KEY equals VALUE (as `stim3d eval "
                        "--filter`); repeatable")
    p.add_argument("--present-ms", type=whole(1, 600_000), default=None, metavar="MS",
                   help="show the image this long, then a mask, then the response (default: until answered)")
    p.add_argument("--mask-ms", type=whole(0, 600_000), default=None, metavar="MS",
                   help="how long the mask shows after --present-ms (default 500)")
    p.add_argument("--completion-url", default=None, help="where to send a participant at the end (e.g. Prolific's)")
    p.add_argument("--jatos", action="store_true", help="also write a JATOS study archive (STUDY.jzip)")
    p.add_argument("--staircase", action="store_true",
                   help="a sweep folder: an adaptive staircase picks each participant's next level from their answers "
                        "and `study score` reports their threshold (docs/study_staircase.md)")
    p.add_argument("--staircase-trials", type=whole(1, 10_000), default=None, metavar="N",
                   help="staircase steps per participant (default 30; needs --staircase)")
    p.add_argument("--force", action="store_true", help="rebuild over an existing study folder (keeps data/ and consent.html)")
    p.add_argument("--pilot", action="store_true",
                   help="a try-out for the study's owner: build even though consent.html is still the unedited "
                        "template, and show every trial's gold after the answer (study.json records pilot)")
    p.add_argument("--include-describe", action="store_true",
                   help="keep describe questions (free descriptions scored by a rubric; left out by default), each "
                        "listing what the description must mention")
    p.add_argument("--min-window", type=window_size, default=None, metavar="WxH",
                   help="the page waits until the participant's window is at least W x H CSS pixels "
                        "(e.g. 1024x700)")
    p.set_defaults(func=cmd_study_build)

    p = group.add_parser("serve", help="serve a study and store each session under STUDY/data/")
    p.add_argument("study", help="a folder written by `stim3d study build`")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1); any other needs --behind-proxy")
    p.add_argument("--port", type=whole(0, MAX_PORT), default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--behind-proxy", action="store_true",
                   help="the study is reached through a reverse proxy with TLS (docs/study_collect.md): allows a "
                        "non-loopback --host and takes each client's address from X-Forwarded-For")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name the page is reached at through the proxy (e.g. study.example.org), checked "
                        "against each request's Host header; repeatable (loopback names are always allowed)")
    p.set_defaults(func=cmd_study_serve)

    p = group.add_parser("score", help="score the collected sessions like a model: eval/human-<id>/ and eval/human/")
    p.add_argument("study", help="a study folder with data/")
    p.add_argument("--batch", default=None, help="the batch the study was built from (default: the one study.json names)")
    p.set_defaults(func=cmd_study_score)

