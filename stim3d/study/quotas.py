"""What one client may ask of `stim3d study serve`: quotas per session and per address, and the host names it answers.

Why: the study's server may face the internet (behind a TLS reverse proxy,
docs/study_collect.md), where anyone can send requests. A genuine participant starts one
session and saves it once per trial; these limits sit far above that and far below what
fills a disk or a thread table: each refusal is a 429 with `Retry-After` (or 503 when every
connection slot is taken) and one line saying which limit and why.

- per session: the stored file's bytes (`session_bytes`) and the number of saves
  (`saves_per_trial` per trial the session can have, plus `SAVE_SLACK` for reloads);
  the trials themselves are bounded by the participant's plan (folder.py refuses any past it);
- per address: sessions started per minute (`sessions_per_minute`); behind a proxy the
  address is the one the proxy appends to `X-Forwarded-For`;
- per server and per address: concurrent connections (`connections`, `connections_per_address`),
  so a flood cannot start a thread per connection without end and one client cannot hold every
  slot (per address only when the server is not behind a proxy, whose own address all share);
- the `Host` header must be a loopback name or one the owner configured (`allowed_hosts`):
  a page from another site cannot reach a loopback server through DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass

from stim3d.study.errors import StudyError

WINDOW_S = 60.0  # the per-address window: sessions per minute
SAVE_SLACK = 16  # saves beyond saves_per_trial x trials: a page reloaded a few times, the final save
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


@dataclass(frozen=True)
class Limits:
    """The server's limits (defaults for a study of up to a few hundred trials; docs/study_collect.md)."""

    session_bytes: int = 512 << 10  # one stored session file; a 300-trial study with long answers is ~150 kB
    saves_per_trial: int = 2  # the page saves once per trial
    sessions_per_minute: int = 10  # per client address: a lab sharing one address starts a few per minute
    connections: int = 64  # at once, all clients together
    connections_per_address: int = 16  # at once, from one address (a browser opens at most 6 per host)

    def __post_init__(self) -> None:
        for name in ("session_bytes", "saves_per_trial", "sessions_per_minute", "connections",
                     "connections_per_address"):
            if getattr(self, name) < 1:
                raise StudyError(f"limit {name} = {getattr(self, name)}: must be at least 1")


class OverQuota(StudyError):
    """A request over one of the limits; `retry_after` seconds until it may succeed (None: it never will)."""

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Quotas:
    """The counts behind Limits, kept in memory for the server's life (thread-safe)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._starts: dict[str, deque[float]] = {}
        self._saves: Counter[tuple[str, str]] = Counter()
        self._open: Counter[str] = Counter()  # connections being served, per address ("" for all of them)

    def connect(self, address: str | None) -> bool:
        """Take a connection slot for `address` (None: count it only against `connections`); False when full."""
        with self._lock:
            if self._open[""] >= self.limits.connections:
                return False
            if address is not None and self._open[address] >= self.limits.connections_per_address:
                return False
            self._open[""] += 1
            if address is not None:
                self._open[address] += 1
        return True

    def disconnect(self, address: str | None) -> None:
        """Give back the slot `connect` took."""
        with self._lock:
            for key in ("", address) if address is not None else ("",):
                self._open[key] -= 1
                if not self._open[key]:
                    del self._open[key]

    def start(self, address: str) -> None:
        """Count a session started from `address`; OverQuota past `sessions_per_minute` in the last minute."""
        now = time.monotonic()
        with self._lock:
            if len(self._starts) > 10_000:  # forget idle addresses so the table stays small
                self._starts = {a: q for a, q in self._starts.items() if q and now - q[-1] < WINDOW_S}
            recent = self._starts.setdefault(address, deque())
            while recent and now - recent[0] >= WINDOW_S:
                recent.popleft()
            if len(recent) >= self.limits.sessions_per_minute:
                wait = int(WINDOW_S - (now - recent[0])) + 1
                raise OverQuota(f"too many sessions started from your address ({self.limits.sessions_per_minute} "
                                f"a minute); try again in {wait} s", wait)
            recent.append(now)

    def save(self, participant: str, session: str, trials: int) -> None:
        """Count one save of a session that can hold `trials` trials; OverQuota past its allowance."""
        allowed = self.limits.saves_per_trial * trials + SAVE_SLACK
        with self._lock:
            if self._saves[(participant, session)] >= allowed:
                raise OverQuota(f"session {session!r} was saved {allowed} times, the most a session of "
                                f"{trials} trials needs; nothing more is stored")
            self._saves[(participant, session)] += 1

    def check_bytes(self, session: str, size: int) -> None:
        """OverQuota when a session file of `size` bytes is over `session_bytes`."""
        if size > self.limits.session_bytes:
            raise OverQuota(f"session {session!r} would take {size} bytes, over the limit of "
                            f"{self.limits.session_bytes}; nothing more is stored")


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str | None) -> str | None:
    """The host name of a `Host` header without its port (`[::1]:8000` -> `::1`), lower case; None when absent."""
    if not header or not header.strip():
        return None
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    """Whether a request's `Host` names this server: a loopback name or address, or one of `allowed` (lower case)."""
    name = host_name(header)
    return name is not None and (is_loopback(name) or name in allowed)
