"""`stim3d study`: the same items in front of people, in a browser, scored like models.

The human side of every comparison the seed benchmarks make (DYSM, ROSE, OddGridBench,
PerceptionRubrics report people beside models). Three steps, each a plain function the
`stim3d study` command calls:

- `build` (build.py): a batch -> a self-contained static study folder: the page, jsPsych at a
  pinned version, stim3d's own jsPsych plugins (one response widget per answer type of
  scoring/answers.py, each producing exactly the text the scoring core parses), the stimuli
  and a manifest naming the batch and stim3d's version;
- `serve` (serve.py, the server's life and its folder lock; handler.py, each request; sessions.py, the
  session store): the study's page over HTTP and each session's data stored under `STUDY/data/` (the only
  server in stim3d; loopback by default);
- `score` (score.py): the sessions -> the same responses, scores and reports as `stim3d eval`,
  under `human:<participant>` and pooled as `human`, after documented exclusions.

The contract between the page and the Python side (the trial spec, the session file, the
participant's plan) is written once in contract.py and docs/study.md.
"""

from stim3d.study.errors import StudyError

__all__ = ["StudyError"]
