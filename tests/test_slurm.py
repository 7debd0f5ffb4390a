"""The SLURM array recipe of docs/batches.md, run for real on a one-node SLURM on this machine.

scripts/slurm_local.sh starts munged, slurmctld and slurmd (loopback only, everything under one folder)
once per session and stops them at the end. The test then submits a tiny raster batch exactly as the doc
says, with the doc's files (examples/slurm/submit.sh: an array of 4 shards into one folder, then a merge
job that depends on the array), waits for both jobs with a deadline, and checks that the merged folder
equals a plain render item for item, byte for byte.

Without Debian's `slurm-wlm` and `munge` (or without root) SLURM cannot start: the test skips with the
reason, and under CI (CI=true; .ci/run installs the packages) it fails with it instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.batch_support import RASTER_CONFIG, assert_same_batch, complete_items, stim3d

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
RECIPE = ROOT / "examples" / "slurm"
# Its own folder and ports, so a local SLURM a user started with the defaults is neither used nor stopped.
SLURM_DIR = "/tmp/stim3d-slurm-pytest"
SLURM_PORT = "6837"
SHARDS = 4
ITEMS = 8
JOBS_TIMEOUT_S = 300  # about 35 s on a busy 2-core machine
START_TIMEOUT_S = 120


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _local_slurm(action: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "STIM3D_SLURM_DIR": SLURM_DIR, "STIM3D_SLURM_PORT": SLURM_PORT}
    return subprocess.run(["bash", str(SCRIPT), action], env=env, capture_output=True, text=True,
                          timeout=START_TIMEOUT_S)


@pytest.fixture(scope="session")
def slurm_env():
    """The environment a SLURM client needs (SLURM_CONF), with the local SLURM running; stopped at the end."""
    try:
        started = _local_slurm("start")
        if started.returncode != 0:
            reason = f"no local SLURM: {(started.stderr or started.stdout).strip()}"
            if _under_ci():
                pytest.fail(f"{reason} (.ci/run installs slurm-wlm and munge; this must not be skipped in CI)")
            pytest.skip(reason)
        yield {**os.environ, "SLURM_CONF": f"{SLURM_DIR}/etc/slurm.conf"}
    finally:
        _local_slurm("stop")


def test_the_doc_shows_the_recipe_files_verbatim():
    """What docs/batches.md shows is what the SLURM test runs: each recipe file, whole, in a fenced block."""
    doc = (ROOT / "docs" / "batches.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", doc, flags=re.S)
    for name in ("submit.sh", "shard.sbatch", "merge.sbatch"):
        assert (RECIPE / name).read_text() in blocks, f"docs/batches.md does not show examples/slurm/{name} as it is"


def _wait_for(jobs: list[str], env: dict[str, str]) -> None:
    """Until no job of `jobs` is pending or running; on the deadline, cancel them and fail."""
    deadline = time.monotonic() + JOBS_TIMEOUT_S
    while time.monotonic() < deadline:
        queue = subprocess.run(["squeue", "--noheader", "--format=%i %T", f"--jobs={','.join(jobs)}"], env=env,
                               capture_output=True, text=True, timeout=30)
        if queue.returncode == 0 and not queue.stdout.strip():
            return
        time.sleep(0.5)
    subprocess.run(["scancel", *jobs], env=env, capture_output=True, timeout=30)
    pytest.fail(f"SLURM jobs {jobs} not finished after {JOBS_TIMEOUT_S}s; cancelled")


def _tasks(job: str, env: dict[str, str]) -> list[tuple[str, str]]:
    """(JobState, RunTime) of each task of `job` (one for a plain job, one per array task), from slurmctld."""
    shown = subprocess.run(["scontrol", "--oneliner", "show", "job", job], env=env, capture_output=True, text=True,
                           timeout=30)
    return re.findall(r"JobState=(\S+).*?RunTime=(\S+)", shown.stdout)


@pytest.mark.slurm
@pytest.mark.raster
def test_the_docs_slurm_array_recipe_equals_a_plain_render(slurm_env, tmp_path):
    config = tmp_path / "batch.yaml"
    config.write_text(RASTER_CONFIG.format(count=ITEMS))
    began = time.monotonic()
    plain = stim3d("render", str(config), "--out", str(tmp_path / "plain"), "--quiet")
    plain_s = time.monotonic() - began
    assert plain.returncode == 0, plain.stderr

    # The jobs run this checkout's code with this interpreter (sbatch passes the environment on).
    env = {**slurm_env, "STIM3D": f"{sys.executable} -m stim3d", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "batch"
    began = time.monotonic()
    submitted = subprocess.run([str(RECIPE / "submit.sh"), str(config), str(out), str(SHARDS)], cwd=tmp_path,
                               env=env, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    array, merge = submitted.stdout.split()
    _wait_for([array, merge], env)
    slurm_s = time.monotonic() - began

    logs = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(tmp_path.glob("slurm-*.out")))
    shards, merged = _tasks(array, env), _tasks(merge, env)
    assert [state for state, _ in shards] == ["COMPLETED"] * SHARDS, logs
    assert [state for state, _ in merged] == ["COMPLETED"], logs
    assert len(complete_items(out)) == ITEMS, logs
    assert_same_batch(out, tmp_path / "plain")  # records.jsonl, each item's item.json, image.png, mask.png
    for item in complete_items(out):
        assert (out / "items" / item / "checksums.json").read_bytes() == \
            (tmp_path / "plain" / "items" / item / "checksums.json").read_bytes(), item
    print(f"\nSLURM: {SHARDS} shards and the merge of {ITEMS} items took {slurm_s:.1f}s from sbatch to done "
          f"(shards ran {', '.join(t for _, t in shards)}, the merge {merged[0][1]}); the plain render {plain_s:.1f}s")
