"""Scoring commands: score, schema."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stim3d.cli.common import UsageError, number, seconds, writable_file
from stim3d.errors import Stim3dError
from stim3d.render.batch.folder import RECORDS


def cmd_score(args: argparse.Namespace) -> int:
    import json

    from stim3d.files import write_text_atomic
    from stim3d.render.batch.summary import cell_key
    from stim3d.scoring.judge_plugins import TIMEOUT as JUDGE_TIMEOUT
    from stim3d.scoring.judge_plugins import load_judge
    from stim3d.scoring.records import read_records
    from stim3d.scoring.report import format_report, read_predictions, score
    from stim3d.scoring.rose_report import format_rose

    records_path = Path(args.records)
    if records_path.is_dir():
        records_path = records_path / RECORDS
    if args.compare:
        return _compare(records_path, args)
    if args.predictions is None:
        raise UsageError("give PREDICTIONS to score, or --compare FOLDER... to table several models")
    for path in (records_path, Path(args.predictions)):
        if path.is_dir():
            raise UsageError(f"{path}: is a folder; give the JSONL file")
        if not path.exists():
            raise UsageError(f"{path}: no such file")
    out = writable_file(Path(args.out) if args.out else Path(args.predictions).with_suffix(".scores.json"), "--out")
    try:
        stage = records_path
        records = read_records(records_path)
        if not records:
            raise UsageError(f"{records_path}: no records in it (an empty batch?); nothing to score")
        stage = Path(args.predictions)
        predictions, count = read_predictions(stage)
        judge_name, judge = load_judge(args.judge, args.judge_timeout or JUDGE_TIMEOUT)
        report = score(records, predictions, count, by=args.by, cell_of=cell_key, judge=judge, judge_name=judge_name)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{stage}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except ValueError as exc:  # ScoringInputError, a bad record or rule: one line naming it
        raise UsageError(str(exc).splitlines()[0]) from None
    write_text_atomic(out, json.dumps(report.to_dict(), indent=2) + "\n")  # the file first, whatever the terminal does
    for line in format_report(report) + format_rose(records, report.questions):
        print(line)
    print(f"wrote {out}")
    from stim3d.eval.report import write_report

    folder = Path(args.report) if args.report else out.with_name(out.name.removesuffix(".json") + ".report")
    write_report(folder, records, report, title=f"{Path(args.predictions).name} on {records_path.parent.resolve().name}")
    print(f"wrote {folder / 'report.html'}")
    return 0


def _compare(records_path: Path, args: argparse.Namespace) -> int:
    from stim3d.eval.compare import compare
    from stim3d.scoring.records import read_records

    if not records_path.is_file():
        raise UsageError(f"{records_path}: no such file")
    try:
        records = read_records(records_path)
        # a file, not a folder: a later `--compare OUT/eval/*/` must not take it for a model
        page_path = (Path(args.report) if args.report else records_path.parent / "eval") / "compare.html"
        page, reports = compare(records, [Path(p) for p in args.compare], page_path,
                                title=f"models on {records_path.parent.resolve().name}")
    except Stim3dError:
        raise  # already one line, naming its setting (cli/__init__.py shows it as the flag)
    except ValueError as exc:  # the scoring core's (a bad record)
        raise UsageError(str(exc).splitlines()[0]) from None
    width = max(len(name) for name in reports) + 2
    print(f"{'model':<{width}}{'n':>6} {'missing':>8} {'accuracy':>9} {'score':>6}")
    for name, report in reports.items():
        row = report.rows[0].to_dict()
        print(f"{name:<{width}}{row['n']:>6} {row['missing']:>8} {row['accuracy']:>9.3f} {row['score']:>6.3f}")
    print(f"wrote {page}")
    return 0

def cmd_schema(args: argparse.Namespace) -> int:
    from stim3d.files import write_text_atomic
    from stim3d.scoring.records import record_schema_text

    if args.config:
        import json

        from stim3d.render.batch.config_schema import NOT_DESCRIBED, config_schema_text

        text = config_schema_text()
        for name, reason in json.loads(text).get(NOT_DESCRIBED, {}).items():
            print(f"stim3d: warning: family {name}: params NOT DESCRIBED ({reason}); the schema leaves them open",
                  file=sys.stderr)
    else:
        text = record_schema_text()
    if args.out:
        write_text_atomic(writable_file(Path(args.out), "--out"), text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


_BIN_WIDTH = number(1e-6, 1e9, unit=" (a bin width)")


def by_key(text: str) -> str:
    """--by KEY[:WIDTH], its width bounded at parse time (finite, 1e-6 to 1e9): `x:1e-300` would overflow
    the binning of every value, `x:nan` would bin nothing."""
    name, colon, width = text.partition(":")
    try:
        float(width)
    except ValueError:
        return text  # not a number: scoring/report.py's check_by_keys names it
    if colon:
        try:
            _BIN_WIDTH(width)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{name}:{exc}") from None
    return text


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("score", help="score model predictions against a batch's records")
    p.add_argument("records", help="records.jsonl, or the batch folder holding it")
    p.add_argument("predictions", nargs="?", help='JSONL, one {"question_id": ..., "response": ...} per line')
    p.add_argument("--compare", nargs="+", metavar="SOURCE", help="instead of PREDICTIONS: several eval/<model>/ "
                   "folders (or predictions files) scored side by side, e.g. --compare OUT/eval/*/")
    p.add_argument("--report", metavar="DIR", help="folder for report.html and its figures (default: OUT.report/ "
                   "beside the JSON; with --compare: compare.html in RECORDS' batch/eval/)")
    p.add_argument("--by", action="append", default=[], metavar="KEY[:WIDTH]", type=by_key,
                   help="also break down by this difficulty key (e.g. min_visibility; least_visibility:0.1 bins "
                        "a number); answer_type, split and subject.NAME work too; repeatable")
    p.add_argument("--out", help="JSON file for the same report (default: PREDICTIONS with .scores.json)")
    p.add_argument("--judge", metavar="NAME", help="judge of rubric (describe) records: a name in entry-point group "
                   "stim3d.judges or module:function (default: the deterministic reference judge; docs/rubrics.md)")
    p.add_argument("--judge-timeout", type=seconds, metavar="SECONDS",
                   help="give up (one line, exit 2) when one call of a plug-in judge runs longer (default 120)")
    p.set_defaults(func=cmd_score)
    p = sub.add_parser("schema", help="print the JSON Schema of a hand-off record (or, with --config, of a config)")
    p.add_argument("--config", action="store_true",
                   help="the batch config's schema instead, with every family's params (for YAML language servers)")
    p.add_argument("--out", help="write it to this file (scoring/schema/record.schema.json is the checked-in copy)")
    p.set_defaults(func=cmd_schema)

