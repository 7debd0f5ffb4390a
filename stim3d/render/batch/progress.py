"""Showing a running batch: a live bar on a terminal, plain lines in logs.

`BatchProgress` is the `progress` callback of `render_batch` (it receives
`batch.ProgressEvent`s) and chooses one of three modes:

- `live`: a rich progress bar on a terminal: items done / total, failed,
  remaining, rate (items per minute), elapsed and ETA; each failure is printed
  above the bar as it happens;
- `lines`: one line per finished item (stderr is not a terminal, e.g. a
  Kubernetes or SLURM log): counts, rate and ETA on every line, so `tail` tells where a run is;
- `quiet`: failures only, plus a status line at most every `interval` seconds.

Rate and ETA count only items rendered in this run (skipped ones are instant).
Retries (an item tried again after its worker died or raised) are counted on
the status line. When the stream closes (`stim3d render ... 2>&1 | head`), the
display goes silent and the batch keeps rendering: progress is never a reason
to stop work.
This module is the command line's presentation layer: it prints; the library does not.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Literal, TextIO

from stim3d.render.batch.driver import ProgressEvent

Mode = Literal["live", "lines", "quiet"]


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class BatchProgress:
    """Context manager and callable: `with BatchProgress(quiet=...) as progress: render_batch(..., progress=progress)`."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None, mode: Mode | None = None,
                 interval: float = 30.0):
        self.stream = stream or sys.stderr
        self.mode: Mode = mode or ("quiet" if quiet else "live" if self.stream.isatty() else "lines")
        self.interval = interval
        self._started = time.monotonic()
        self._last_line = self._started
        self._total = 0
        self._skipped = 0
        self._progress: Any = None  # a rich Progress once the bar starts (rich is imported only then)
        self._task: Any = None
        self.closed = False  # the stream's reader went away; nothing more is written

    # -- rate and ETA from this run's own clock -----------------------------------------------
    def rate_per_minute(self, done: int) -> float | None:
        elapsed = time.monotonic() - self._started
        return done / elapsed * 60 if done and elapsed > 0 else None

    def eta_seconds(self, done: int) -> float | None:
        rate = self.rate_per_minute(done)
        return (self._total - done) / rate * 60 if rate else None

    def status_text(self, event: ProgressEvent) -> str:
        rate = self.rate_per_minute(event.done)
        rate_text = f"{rate:.1f} items/min" if rate is not None else "- items/min"
        retried = f"  retried {event.retries}" if event.retries else ""
        return (f"done {event.done}/{event.total}  failed {event.failed}{retried}  remaining {event.total - event.done}  "
                f"{rate_text}  ETA {format_duration(self.eta_seconds(event.done))}")

    # -- the callback -------------------------------------------------------------------------
    def __call__(self, event: ProgressEvent) -> None:
        if self.closed:
            return
        try:
            self._show(event)
        except (BrokenPipeError, OSError):
            self._went_away()

    def _went_away(self) -> None:
        """The reader closed the stream: stop displaying, and point the stream at /dev/null so later writes are harmless."""
        self.closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (a StringIO in tests)
            pass
        live, self._progress = self._progress, None
        if live is not None:
            try:
                live.stop()  # its refresh thread; what it still draws goes to /dev/null
            except OSError:
                pass

    def _show(self, event: ProgressEvent) -> None:
        if event.kind == "start":
            self._start(event)
            return
        if self.mode == "live":
            self._live_update(event)
            return
        failed_line = f"failed {event.item_id}: {event.reason.splitlines()[0] if event.reason else ''}"
        if self.mode == "lines":
            if event.status == "failed":
                self._print(failed_line)
                if event.done == event.total:  # the log's last line always carries the totals
                    self._print(self.status_text(event))
            else:
                self._print(f"[{event.done}/{event.total}] {event.item_id} {event.status} {event.seconds:.1f}s | "
                            f"{self.status_text(event)}")
            return
        if event.status == "failed":
            self._print(failed_line)
        now = time.monotonic()
        if now - self._last_line >= self.interval or event.done == event.total:
            self._last_line = now
            self._print(self.status_text(event))

    def _start(self, event: ProgressEvent) -> None:
        self._total, self._skipped = event.total, event.skipped
        self._started = self._last_line = time.monotonic()
        skipped = f" ({event.skipped} already complete, skipped)" if event.skipped else ""
        if self.mode != "live":
            self._print(f"rendering {event.total} items{skipped}")
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream)
        if skipped:
            console.print(f"{event.skipped} items already complete, skipped")
        self._progress = Progress(
            TextColumn("rendering"), BarColumn(), MofNCompleteColumn(),
            TextColumn("failed [red]{task.fields[failed]}[/]"), TextColumn("remaining {task.fields[remaining]}"),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
            console=console, transient=False, refresh_per_second=4,
        )
        self._progress.start()
        self._task = self._progress.add_task("render", total=event.total, failed=0, remaining=event.total,
                                             rate="- items/min", eta="?")

    def _live_update(self, event: ProgressEvent) -> None:
        assert self._progress is not None
        if event.status == "failed":
            from rich.markup import escape

            reason = escape(event.reason.splitlines()[0]) if event.reason else ""
            self._progress.console.print(f"[red]failed[/] {escape(event.item_id)}: {reason}", highlight=False)
        rate = self.rate_per_minute(event.done)
        self._progress.update(self._task, completed=event.done, failed=event.failed,
                              remaining=event.total - event.done,
                              rate=f"{rate:.1f} items/min" if rate is not None else "- items/min",
                              eta=format_duration(self.eta_seconds(event.done)))

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._progress is not None:
            try:
                self._progress.stop()
            except (BrokenPipeError, OSError):
                self._went_away()
            self._progress = None

    def __enter__(self) -> BatchProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
