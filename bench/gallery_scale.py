"""Gallery at scale: how long `stim3d gallery` takes for thousands of items, first build and rebuild.

One tiny Workbench item is rendered, then copied under new ids into batches of
N items (the gallery reads only item folders). For each N: the first build (every
thumbnail and overlay made), a rebuild (everything reused), and a rebuild after
one item's image changed (one thumbnail remade). Timing is measured here, not
asserted in tests (tests/test_gallery.py checks what is made and reused).

    python -m bench.gallery_scale [--quick] [--sizes 1000,5000]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stim3d.views.gallery import build_gallery

from .common import Run, parse_args, print_table, progress

CONFIG = """\
seed: 1
render: {engine: workbench, width: 160, height: 120}
tasks:
  - family: shape_count
    count: 1
"""


def copy_batch(source: Path, target: Path, copies: int) -> None:
    """A batch of `copies` items made of one rendered item under new ids."""
    folder = sorted((source / "items").iterdir())[0]
    item = json.loads((folder / "item.json").read_text())
    for n in range(copies):
        item_id = f"copy-{n:05d}"
        dest = target / "items" / item_id
        dest.mkdir(parents=True)
        for name in ("image.png", "mask.png"):
            shutil.copyfile(folder / name, dest / name)
        (dest / "item.json").write_text(json.dumps({**item, "item_id": item_id}))


def timed_build(folder: Path) -> tuple[float, object]:
    started = time.perf_counter()
    report = build_gallery(folder)
    return time.perf_counter() - started, report


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: p.add_argument("--sizes", default="1000,5000"))
    sizes = [50, 200] if args.quick else [int(n) for n in args.sizes.split(",")]
    run = Run("gallery_scale", args.quick, args.out, settings={"sizes": sizes, "image": "160x120", "workers": "default"})
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "one.yaml").write_text(CONFIG)
        subprocess.run([sys.executable, "-m", "stim3d", "render", str(root / "one.yaml"), "--out", str(root / "one"),
                        "--quiet"], check=True)
        rows, figures = [], {}
        for size in sizes:
            progress(f"gallery of {size} items")
            folder = root / f"n{size}"
            copy_batch(root / "one", folder, size)
            first, report = timed_build(folder)
            run.sample_load()
            again, _ = timed_build(folder)
            image = folder / "items" / "copy-00007" / "image.png"
            thumb = folder / "gallery" / "thumbs" / "copy-00007.jpg"
            later = thumb.stat().st_mtime_ns + 10**9  # re-rendered after its thumbnail was made
            os.utime(image, ns=(later, later))
            one_changed, changed = timed_build(folder)
            run.sample_load()
            figures[str(size)] = {"first_build_s": round(first, 2), "rebuild_s": round(again, 2),
                                  "one_changed_s": round(one_changed, 2), "thumbs_made_first": report.thumbs_made,
                                  "thumbs_made_after_change": changed.thumbs_made}
            rows.append([size, first, first / size * 1000, again, one_changed])
            shutil.rmtree(folder)
    print_table("gallery build time (seconds)", ["items", "first build", "ms/item", "rebuild", "one changed"], rows)
    run.finish(figures)


if __name__ == "__main__":
    main()
