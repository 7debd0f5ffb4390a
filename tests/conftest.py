"""Session fixtures (batches rendered once per test process) and the CI rule for skipped renderer tests.

The rendered batches several test files share are session fixtures here: `reference_batch` (config and
folder of a one-worker raster run), `tiny_batch` (a Workbench batch for eval tests; `eval_batch` is a fresh
copy of it and `fake_model` a loopback model answering it), `study_batch`
(every answer type a person can answer, for the study tests) and `every_family_batch` (one item of every
registered family, for the study's all-families tests). Tests copy them before writing into them.

Under CI (environment variable CI=true, set by .ci/run), a skipped Blender or raster test fails the run.

A broken bpy install (or a missing EGL library) turns those tests into skips, and a
run of green dots and a few `s` would hide that the renderer was never exercised.
Locally, skips stay skips: a machine without Blender can still run the rest.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def reference_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from tests.batch_support import render_reference_batch

    return render_reference_batch(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="session")
def tiny_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.eval_server import render_tiny_batch

    return render_tiny_batch(tmp_path_factory.mktemp("eval_batch"))


@pytest.fixture
def eval_batch(tiny_batch: Path, tmp_path: Path) -> Path:
    """A fresh copy of `tiny_batch` (each eval test writes its own eval/ folder)."""
    shutil.copytree(tiny_batch, tmp_path / "batch")
    return tmp_path / "batch"


@pytest.fixture
def fake_model(eval_batch: Path) -> Iterator[Any]:
    """tests/eval_server.py's OpenAI-compatible model answering `eval_batch`'s questions, on 127.0.0.1."""
    from stim3d.scoring.records import read_records
    from tests.eval_server import FakeModel, running

    with running(FakeModel(read_records(eval_batch / "records.jsonl"))) as model:
        yield model


@pytest.fixture(scope="session")
def study_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.study_support import render_study_batch

    return render_study_batch(tmp_path_factory.mktemp("study-batch"))


@pytest.fixture(scope="session")
def every_family_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.study_support import render_every_family_batch

    return render_every_family_batch(tmp_path_factory.mktemp("every-family"))


RENDERER_MARKERS = ("bpy", "raster")
RENDERER_WORDS = ("bpy", "blender", "pyrender", "egl")

_skipped: list[str] = []


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _about_the_renderer(report: pytest.CollectReport | pytest.TestReport) -> bool:
    keywords = getattr(report, "keywords", {}) or {}
    return any(marker in keywords for marker in RENDERER_MARKERS) or any(
        word in _reason(report).lower() for word in RENDERER_WORDS
    )


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped and _about_the_renderer(report):
        _skipped.append(f"{report.nodeid}: {_reason(report)}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and _about_the_renderer(report):
        _skipped.append(f"{report.nodeid}: {_reason(report)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _under_ci() and _skipped:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _under_ci() and _skipped:
        terminalreporter.section("renderer tests skipped under CI (this fails the run)", red=True)
        for line in _skipped:
            terminalreporter.line(line)
