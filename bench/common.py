"""Shared helpers of the benchmarks: the machine, medians, tables, and the results file.

Every benchmark records the code it measured (git commit, stim3d version,
generator revisions), the command, the machine it ran on (CPU model, cores, bpy
version) and the load average before and after it, so a figure measured while
other work was running on the same cores, or at an older commit, says so in its file. A `--quick` run writes to a
scratch file, never over the committed `bench/results/<name>.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
QUICK_DIR = Path(tempfile.gettempdir()) / "stim3d-bench"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What the figures were measured on. bpy's version comes from its metadata (importing bpy is slow)."""
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "bpy_version": package_version("bpy"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "trimesh": package_version("trimesh"),
        "embreex": package_version("embreex"),
    }


def code() -> dict[str, Any]:
    """Which code was measured: the git commit of the checkout (None for an install), version, generator revisions.

    A results file written into bench/results/ does not change the code measured, so
    it does not make the checkout `-dirty` here: several benches run one after another
    in one clean checkout all record its commit.
    """
    from stim3d.render.provenance import code_identity
    from stim3d.scenes.families import FAMILIES

    identity = code_identity(set(FAMILIES))
    commit = identity["git_commit"]
    if commit and commit.endswith("-dirty") and not _dirty_outside_results():
        commit = commit.removesuffix("-dirty")
    return {"git_commit": commit, "stim3d_version": identity["stim3d_version"],
            "generator_revisions": identity["generator_revisions"]}


def _dirty_outside_results() -> bool:
    """Whether tracked files other than bench/results/ differ from the commit (True when git cannot tell)."""
    root = Path(__file__).resolve().parent.parent
    try:
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", ".",
                                  ":(exclude)bench/results"], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return True
    return bool(changed.stdout.strip())


def renderer_fingerprint() -> str:
    """A hash of the rendering code's source (render/backends/*.py), for caches of rendered references.

    A reference cached by scene and settings alone outlives a change to how a material
    or light is built, and a later run then compares new candidates with the old
    picture; keyed by this too, a changed backend renders its references again.
    """
    digest = hashlib.sha256()
    for path in sorted((Path(__file__).resolve().parent.parent / "stim3d" / "render" / "backends").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def load_average() -> float:
    """1-minute load average (how many runnable processes shared the cores)."""
    return round(os.getloadavg()[0], 2)


def progress(message: str) -> None:
    """Progress goes to stderr so that stdout holds only the tables."""
    print(message, file=sys.stderr, flush=True)


def wait_for_quiet(max_load: float, max_minutes: float, poll_seconds: float = 30.0) -> bool:
    """Wait until the 1-minute load average drops below `max_load` (at most `max_minutes`). True if it did."""
    deadline = time.monotonic() + 60.0 * max_minutes
    while True:
        load = load_average()
        if load < max_load:
            return True
        if time.monotonic() >= deadline:
            progress(f"load average still {load} after {max_minutes:g} min; measuring anyway (recorded as loaded)")
            return False
        progress(f"load average {load} >= {max_load}; waiting for the machine to quieten")
        time.sleep(poll_seconds)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def format_cell(value: Any) -> str:
    if isinstance(value, float):
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.3g}"
        return f"{value:.4g}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned text table on stdout."""
    cells = [[format_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))


DEVICES = ("cpu", "gpu")


def add_device(parser: argparse.ArgumentParser) -> None:
    """`--device cpu|gpu`: where Cycles renders (render.device). The result file records it (Run.device)."""
    parser.add_argument("--device", choices=DEVICES, default="cpu",
                        help="Cycles device: cpu, or gpu (whichever backend Blender finds; docs/performance.md)")


def parse_args(description: str, add: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="a small version that checks the script works (writes to a scratch file)")
    parser.add_argument("--out", type=Path, help="results file (default: bench/results/<name>.json; --quick: a scratch file)")
    if add is not None:
        add(parser)
    return parser.parse_args()


@dataclass
class Run:
    """One benchmark run: records the machine and load, and writes the results file at the end."""

    name: str
    quick: bool
    out: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    device: str | None = None  # the Cycles device of a bench that renders (--device); None for one that does not

    def __post_init__(self) -> None:
        self.code = code()  # the commit measured is the one checked out when the run starts
        self.load_start = load_average()
        self.started = time.perf_counter()
        self.loads = [self.load_start]

    def sample_load(self) -> None:
        """Note the load average now (call between measurements: the file keeps the maximum)."""
        self.loads.append(load_average())

    def path(self) -> Path:
        if self.out is not None:
            return self.out
        if self.quick:
            return QUICK_DIR / f"{self.name}.quick.json"
        return RESULTS_DIR / f"{self.name}.json"

    def finish(self, figures: dict[str, Any]) -> Path:
        self.sample_load()
        document = {
            "benchmark": self.name,
            "quick": self.quick,
            "command": " ".join(["python -m", f"bench.{self.name}", *map(path_label, sys.argv[1:])]),
            "code": self.code,
            "machine": machine(),
            **({"device": self.device} if self.device is not None else {}),
            "load_average": {"start": self.load_start, "end": self.loads[-1], "max_sampled": max(self.loads)},
            "wall_seconds": round(time.perf_counter() - self.started, 1),
            "settings": self.settings,
            "figures": figures,
        }
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2) + "\n")
        print(
            f"\ncommit {document['code']['git_commit']}; machine: {document['machine']['cpu_model']}, {document['machine']['cores']} cores, "
            f"bpy {document['machine']['bpy_version']}; load average {self.load_start} at start, "
            f"max {max(self.loads)} sampled; wrote {path}"
        )
        return path


def name_list(text: str, known: Sequence[str], option: str, bench: str) -> tuple[str, ...]:
    """A comma-separated option value (`--looks`, `--families`), each name checked against `known`: one line
    naming the bench, the option and what is unknown otherwise."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        raise SystemExit(f"bench.{bench}: --{option} {text!r}: unknown {', '.join(unknown) or 'empty'}; "
                         f"known: {', '.join(known)}")
    return names


def path_label(text: str) -> str:
    """An absolute path as its last component (`/work/suite_root2` -> `suite_root2`), anything else as it is.

    Result files are committed: they name no folder of the machine that measured them, only a
    label that tells one root from another (tests/test_bench_results.py checks every file).
    """
    return Path(text).name or text if text.startswith("/") else text
