"""`stim3d eval`: ask a model (or a baseline) every question of a batch, then score and write the report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stim3d.cli.common import UsageError, number, positive, seed, whole
from stim3d.eval.adaptive import DEFAULT_TRIALS
from stim3d.eval.options import (
    MAX_CONCURRENCY,
    MAX_RETRIES,
    MAX_TEMPERATURE,
    MAX_TIMEOUT,
    MAX_TOKENS,
    EvalOptions,
    default,
)

# Settings a --config YAML may hold; a flag given on the command line wins over the file.
SETTINGS = {"model": str, "base_url": str, "temperature": float, "max_tokens": int, "system": str, "extra_body": dict,
            "downscale": float, "concurrency": int, "timeout": float, "retries": int, "api_key_env": str, "seed": int}


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The `EvalOptions` fields given: the --config file's, then the flags' (the rest keep EvalOptions' defaults)."""
    import yaml

    settings: dict[str, Any] = {}
    if args.config:
        path = Path(args.config)
        if not path.is_file():
            raise UsageError(f"--config {path}: no such file")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise UsageError(f"--config {path}: not YAML ({str(exc).splitlines()[0]})") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"--config {path}: expected a mapping of settings ({', '.join(SETTINGS)})")
        for key, value in loaded.items():
            kind = SETTINGS.get(str(key))
            if kind is None:
                raise UsageError(f"--config {path}: unknown setting {key!r}; settings: {', '.join(SETTINGS)}")
            fits = isinstance(value, kind) or (kind is float and isinstance(value, int))
            if not fits or isinstance(value, bool):  # YAML's true is not a number
                raise UsageError(f"--config {path}: {key} must be a {kind.__name__}, got {value!r}")
            settings[str(key)] = value
    for key in SETTINGS:
        value = getattr(args, key, None)
        if value is not None:
            settings[key] = value
    if "model" not in settings:
        raise UsageError("no model: give --model NAME (or baseline:constant, baseline:random, baseline:oracle)")
    if "downscale" in settings:
        settings["image_scale"] = settings.pop("downscale")
    return settings


def _extra_body(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, e.g. '{{\"top_p\": 0.9}}', got {text!r}")
    return value


def cmd_eval(args: argparse.Namespace) -> int:
    from stim3d.eval.run import run_eval
    from stim3d.render.batch.selection import parse_filters

    if args.staircase_trials is not None and not args.staircase:
        raise UsageError("--staircase-trials needs --staircase")
    options = EvalOptions.build(**_settings(args), filters=parse_filters(args.filter) or None, limit=args.limit,
                                dry_run=args.dry_run)
    if args.staircase:
        return _cmd_staircase(args, options)

    def progress(done: int, total: int, message: str) -> None:
        if done == total or "failed" in message or done % max(1, total // 20) == 0:
            print(f"[{done}/{total}] {message}", file=sys.stderr, flush=True)

    result = run_eval(args.batch, options, progress)
    if result.dry_run_request is not None:
        print(json.dumps(result.dry_run_request, indent=2))
        return 0
    from stim3d.scoring.report import format_report

    for warning in result.warnings:
        print(f"stim3d: warning: {warning}", file=sys.stderr)
    for question_id, reason in sorted(result.failed.items()):
        print(f"failed {question_id}: {reason}", file=sys.stderr)
    for line in format_report(result.report):
        print(line)
    print(result.summary())
    for path in result.files[:2]:
        print(f"wrote {path}")
    return 1 if result.failed else 0  # scored, but the failed questions count as missing: rerun to ask them again


def _cmd_staircase(args: argparse.Namespace, options: EvalOptions) -> int:
    """`--staircase`: a threshold per sweep question (stim3d/eval/staircase.py), one line each."""
    from stim3d.eval.staircase import run_staircases

    run = run_staircases(args.batch, options, trials=args.staircase_trials or DEFAULT_TRIALS)
    for line in run.summary_lines():
        print(line)
    print(f"wrote {run.path}")
    return 1 if run.failed else 0  # the tracks that stopped are reported; a rerun resumes them


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("eval", help="ask a model on an OpenAI-compatible endpoint (or a baseline) every question "
                                    "of a batch; responses, scores and report.html go to BATCH/eval/MODEL/")
    p.add_argument("batch", help="batch folder")
    p.add_argument("--model", help="model name as the server knows it, or baseline:constant|random|oracle")
    p.add_argument("--base-url", dest="base_url", help="the server's root, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--config", help="YAML file of these settings (keys: " + ", ".join(SETTINGS) + ")")
    p.add_argument("--temperature", type=number(0, MAX_TEMPERATURE),
                   help=f"sampling temperature, 0 to {MAX_TEMPERATURE:g} (default {default('temperature'):g})")
    p.add_argument("--max-tokens", dest="max_tokens", type=whole(1, MAX_TOKENS),
                   help=f"most tokens per answer, 1 to {MAX_TOKENS} (default {default('max_tokens')})")
    p.add_argument("--system", help="a system message sent before each question")
    p.add_argument("--extra-body", dest="extra_body", type=_extra_body, metavar="JSON",
                   help="more fields for the request body, e.g. '{\"top_p\": 0.9}'")
    p.add_argument("--downscale", type=number(0, 1, above_low=True),
                   help=f"send images scaled by this factor in (0, 1] (default {default('image_scale'):g})")
    p.add_argument("--limit", type=positive, help="only the first N questions (after --filter)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="only items whose difficulty (or parameter) KEY equals VALUE, as in `stim3d gallery`; repeatable")
    p.add_argument("--concurrency", type=whole(1, MAX_CONCURRENCY),
                   help=f"requests in flight, 1 to {MAX_CONCURRENCY} (default {default('concurrency')})")
    p.add_argument("--timeout", type=number(0, MAX_TIMEOUT, above_low=True, unit=" seconds",
                                            too_low="give a positive number of seconds"),
                   help=f"hard limit on one request, seconds, at most {MAX_TIMEOUT:g} (default {default('timeout'):g})")
    p.add_argument("--retries", type=whole(0, MAX_RETRIES),
                   help=f"retries of a request after 408, 429, 5xx, timeouts, 0 to {MAX_RETRIES} "
                        f"(default {default('retries')})")
    p.add_argument("--api-key-env", dest="api_key_env", metavar="NAME",
                   help="the environment variable holding the API key (the key itself is never written anywhere)")
    p.add_argument("--seed", type=seed, help=f"seed of baseline:random (default {default('seed')})")
    p.add_argument("--dry-run", action="store_true", help="print the first request (image shortened) and stop")
    p.add_argument("--staircase", action="store_true",
                   help="sweep folders: find each sweep question's threshold level adaptively (one question per "
                        "step) and write BATCH/eval/MODEL/staircase.json")
    p.add_argument("--staircase-trials", dest="staircase_trials", type=positive, metavar="N",
                   help=f"steps of each sweep's staircase (default {DEFAULT_TRIALS})")
    p.set_defaults(func=cmd_eval)
