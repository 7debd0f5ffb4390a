"""Models in the loop: `stim3d eval` against an OpenAI-compatible endpoint, baselines, score reports.

client.py (the project's only network code), request.py (a record -> a chat request
and its hash), store.py (eval/<model>/responses.jsonl), baselines.py, run.py
(`evaluate`), stats.py, figures.py and report.py (report.html and its PNGs),
compare.py (`stim3d score --compare`), wrong.py (the gallery's `--filter wrong=MODEL`).
"""

from stim3d.eval.run import EvalError, EvalResult, evaluate

__all__ = ["EvalError", "EvalResult", "evaluate"]
