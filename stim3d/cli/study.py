"""`stim3d study build|serve|score`: the same items in front of people (stim3d/study/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stim3d.cli.common import MAX_PORT, UsageError, positive, seed, whole


def cmd_study_build(args: argparse.Namespace) -> int:
    from stim3d.study import StudyError
    from stim3d.study.build import BuildOptions, build_study

    try:
        report = build_study(Path(args.batch), Path(args.out), BuildOptions.from_args(args))
    except StudyError as exc:
        raise UsageError(str(exc)) from None
    for line in report.summary_lines():
        print(line)
    return 0


def cmd_study_serve(args: argparse.Namespace) -> int:
    from stim3d.study import StudyError
    from stim3d.study.serve import serve_study

    try:
        return serve_study(Path(args.study), host=args.host, port=args.port)
    except StudyError as exc:
        raise UsageError(str(exc)) from None


def cmd_study_score(args: argparse.Namespace) -> int:
    from stim3d.study import StudyError
    from stim3d.study.score import score_study

    try:
        report = score_study(Path(args.study), batch=Path(args.batch) if args.batch else None)
    except StudyError as exc:
        raise UsageError(str(exc)) from None
    for line in report.summary_lines():
        print(line)
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
    p.set_defaults(func=cmd_study_build)

    p = group.add_parser("serve", help="serve a study and store each session under STUDY/data/")
    p.add_argument("study", help="a folder written by `stim3d study build`")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 opens it to a lab network)")
    p.add_argument("--port", type=whole(0, MAX_PORT), default=8000, help="port (default 8000; 0 picks a free one)")
    p.set_defaults(func=cmd_study_serve)

    p = group.add_parser("score", help="score the collected sessions like a model: eval/human-<id>/ and eval/human/")
    p.add_argument("study", help="a study folder with data/")
    p.add_argument("--batch", default=None, help="the batch the study was built from (default: the one study.json names)")
    p.set_defaults(func=cmd_study_score)

