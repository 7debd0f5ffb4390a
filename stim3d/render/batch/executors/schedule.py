"""The scheduling policy both executors share: retries, recycling, start-up deaths, abort (see the package docstring)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from stim3d.render.batch.executors.jobs import (
    ABORT_AFTER_FIRST_FAILURES,
    MAX_ATTEMPTS,
    STARTUP_DEATHS_ALLOWED,
    STARTUP_TIMEOUT,
    BatchAborted,
    Job,
    Outcome,
)

# -- the scheduling policy ----------------------------------------------------------------------

@dataclass
class WorkerEvent:
    handle: int
    kind: Literal["ready", "done", "died"]
    outcome: Outcome | None = None
    reason: str = ""


class WorkerPool(Protocol):
    """A transport for workers: start, send one job, wait for events, stop."""

    def start(self) -> int: ...
    def submit(self, handle: int, job: Job) -> None: ...
    def wait(self, timeout: float | None = None) -> list[WorkerEvent]: ...  # [] when `timeout` s pass first
    def stop(self, handle: int) -> None: ...
    def kill(self, handle: int) -> None: ...  # at once, whatever it is doing; no event follows
    def shutdown(self) -> None: ...


@dataclass
class Slot:
    state: Literal["starting", "idle", "busy"] = "starting"
    job: Job | None = None
    bound: Job | None = None  # a retry that must run in this fresh worker
    next: Job | None = None  # reserved for this worker's next turn; it composes it while rendering `job`
    done: int = 0
    since: float = field(default_factory=time.monotonic)  # worker start, then each send: timeouts count from here


@dataclass
class Schedule:
    pool: WorkerPool
    workers: int
    recycle_after: int
    on_outcome: Callable[[Outcome], None]
    item_timeout: float | None = None  # seconds one attempt may take before its worker is stopped; None: no limit
    startup_timeout: float = STARTUP_TIMEOUT  # seconds a worker may take to get ready before it is stopped
    pending: deque[Job] = field(default_factory=deque)
    retries: deque[Job] = field(default_factory=deque)  # jobs waiting for a fresh worker of their own
    slots: dict[int, Slot] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    startup_deaths: int = 0  # consecutive deaths before "ready"; reset when any worker gets ready
    rendered: int = 0
    early_failures: list[str] = field(default_factory=list)

    def spawn(self, bound: Job | None = None) -> None:
        """Start a worker; never more than `workers` exist at once (a retry waits for a free place)."""
        assert len(self.slots) < self.workers, "worker limit exceeded"
        self.slots[self.pool.start()] = Slot(bound=bound)

    def retire(self, handle: int) -> None:
        self.pool.stop(handle)
        self.unreserve(self.slots.pop(handle))

    def unreserve(self, slot: Slot) -> None:
        """Put a slot's reserved next job back at the front of the queue (it was never attempted)."""
        if slot.next is not None:
            self.pending.appendleft(slot.next)
            slot.next = None

    def steal(self) -> None:
        """Nothing is pending but another worker holds a reserved job: free it for an idle worker."""
        for slot in self.slots.values():
            if slot.next is not None:
                self.unreserve(slot)
                return

    def reserve(self, slot: Slot, job: Job) -> Job:
        """The job to send: `job`, carrying the plan of the pending job reserved as this worker's next."""
        if not self.pending or self.pending[0].plan is None or slot.done + 1 >= self.recycle_after:
            return job  # nothing to compose ahead, or this worker is recycled after this job
        slot.next = self.pending.popleft()
        return replace(job, ahead=slot.next.plan)

    def outstanding(self) -> bool:
        return bool(self.pending or self.retries) or any(
            s.state == "busy" or s.bound or s.next for s in self.slots.values())

    def finish(self, outcome: Outcome) -> None:
        outcome.attempts = self.attempts.get(outcome.item_id, 1)
        self.on_outcome(outcome)
        if outcome.status == "rendered":
            self.rendered += 1
        elif outcome.status != "infeasible" and not self.rendered:
            self.early_failures.append(f"{outcome.item_id}: {outcome.reason}")
            if len(self.early_failures) >= ABORT_AFTER_FIRST_FAILURES:
                raise BatchAborted(
                    f"the first {len(self.early_failures)} items all failed and none rendered; "
                    f"stopping (last: {self.early_failures[-1]})"
                )

    def attempt_failed(self, job: Job, outcome: Outcome) -> None:
        """A crash or an unexpected error: retry once in a fresh worker, else report."""
        if self.attempts.get(job.item_id, 1) < MAX_ATTEMPTS:
            self.attempts[job.item_id] = self.attempts.get(job.item_id, 1) + 1
            self.retries.append(job)
        else:
            if outcome.status == "crashed":
                outcome.reason = f"worker died while rendering it, {MAX_ATTEMPTS} times ({outcome.reason})"
            self.finish(outcome)

    def handle(self, event: WorkerEvent) -> None:
        slot = self.slots.get(event.handle)
        if slot is None:
            return
        if event.kind == "ready":
            slot.state = "idle"
            self.startup_deaths = 0
        elif event.kind == "done":
            job, outcome = slot.job, event.outcome
            assert job is not None and outcome is not None
            outcome.item_id = job.item_id
            slot.state, slot.job = "idle", None
            slot.done += 1
            if outcome.status == "error":
                self.retire(event.handle)  # its Blender state may be what failed
                self.attempt_failed(job, outcome)
            else:
                self.finish(outcome)
        else:  # died
            self.unreserve(self.slots.pop(event.handle))
            if slot.state == "starting":
                self.startup_failed(slot, event.reason)
            elif slot.state == "busy" and slot.job is not None:
                self.attempt_failed(slot.job, Outcome(slot.job.item_id, "crashed", reason=event.reason))

    def startup_failed(self, slot: Slot, reason: str) -> None:
        """A worker died or hung before it was ready.

        One such death (an out-of-memory kill, a signal) is not a broken setup while other workers
        start fine; several in a row with no worker getting ready is.
        """
        self.startup_deaths += 1
        if self.startup_deaths >= STARTUP_DEATHS_ALLOWED:
            raise BatchAborted(f"a worker process could not start ({self.startup_deaths} tries): {reason}")
        if slot.bound:
            self.retries.appendleft(slot.bound)

    def deadline(self, slot: Slot) -> float | None:
        """When `slot` runs out of time (time.monotonic()): its start-up, or its item under the item timeout."""
        if slot.state == "starting":
            return slot.since + self.startup_timeout
        if slot.state == "busy" and self.item_timeout is not None:
            return slot.since + self.item_timeout
        return None

    def time_left(self) -> float | None:
        """Seconds until the first worker runs out of time (None: nothing is timed)."""
        deadlines = [d for d in map(self.deadline, self.slots.values()) if d is not None]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def expire(self) -> None:
        """Stop each worker that has run out of time: a start-up or an item that takes too long.

        A hung render (a driver stuck, a scene Cycles never finishes) or a hung start-up (a deadlock
        while loading bpy) would otherwise hold the batch forever. The worker is killed, not asked: a
        hung one would not answer. A hung item counts as a failed attempt; a hung start-up as a
        start-up death.
        """
        now = time.monotonic()
        for handle, slot in list(self.slots.items()):
            deadline = self.deadline(slot)
            if deadline is None or now < deadline:
                continue
            self.pool.kill(handle)
            self.unreserve(self.slots.pop(handle))
            if slot.state == "starting":
                self.startup_failed(slot, f"not ready after {self.startup_timeout:g} s; it was stopped")
            elif slot.job is not None:
                self.attempt_failed(slot.job, Outcome(slot.job.item_id, "error", reason=(
                    f"took longer than the item timeout ({self.item_timeout:g} s); its worker was stopped")))

    def assign(self) -> None:
        for handle, slot in list(self.slots.items()):
            if slot.state != "idle":
                continue
            self.unreserve(slot)  # back to the front of the queue: taken again just below unless a retry comes first
            job = slot.bound
            if job is None and self.retries and slot.done == 0:
                job = self.retries.popleft()  # a worker that has rendered nothing yet is fresh
            if job is None and len(self.retries) > self.workers - len(self.slots):
                self.retire(handle)  # a retry needs a fresh worker: this one makes way for it
                continue
            if job is None and self.pending and slot.done >= self.recycle_after:
                self.retire(handle)  # its place is refilled below
                continue
            if job is None and not self.pending:
                self.steal()
            if job is None and self.pending:
                job = self.pending.popleft()
            if job is None:
                self.retire(handle)
                continue
            slot.state, slot.job, slot.bound, slot.since = "busy", job, None, time.monotonic()
            self.pool.submit(handle, self.reserve(slot, job))
        # Every worker counts against `workers`, a retry's fresh worker included: it takes the place
        # of the worker that died or was retired, and waits when no place is free.
        while self.retries and len(self.slots) < self.workers:
            self.spawn(bound=self.retries.popleft())
        while self.pending and len(self.slots) < self.workers:
            self.spawn()

    def run(self, jobs: Iterable[Job]) -> None:
        self.pending.extend(jobs)
        try:
            self.assign()
            while self.outstanding():
                for event in self.pool.wait(self.time_left()):
                    self.handle(event)
                self.expire()
                self.assign()
        finally:
            self.pool.shutdown()


def schedule(pool: WorkerPool, jobs: Iterable[Job], workers: int, recycle_after: int,
             on_outcome: Callable[[Outcome], None], item_timeout: float | None = None,
             startup_timeout: float = STARTUP_TIMEOUT) -> None:
    """Run `jobs` on `pool` with the policy in the package docstring; `on_outcome` gets each item's final result."""
    Schedule(pool, max(1, workers), max(1, recycle_after), on_outcome, item_timeout, startup_timeout).run(jobs)


