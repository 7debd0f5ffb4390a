"""The study server's session store: sessions started with a token, checked, merged and written under STUDY/data/.

Sessions need their token. `start_session` makes one (secrets.token_urlsafe, shown once; the store keeps only its
SHA-256 in data/<participant>/<session>.token); every later read or write of that session must send it
(`authorised`). Why: the ids are in the page's link (a Prolific id, a name), so anyone who knows or guesses them
could otherwise read a session or finish someone else's. One session per participant: a participant id that
already started is refused (SessionConflict), so a participant who comes back in another browser (no token
there) is told to go on where they started; nothing lists the sessions.

`store_session` checks a whole session so far against the study (folder.py: study id, the participant's plan,
every trial in its place with its role; a staircase study's steps replayed by staircase.py `session_steps`),
merges it with the stored copy (stored trials win, `complete` is sticky) and writes it atomically to
`data/<participant>/<session>.json`. Nothing else is ever written, and never outside data/: both ids are single
safe path components, the target must resolve inside data/, and a data/ that is a symbolic link is refused.
Files are the owner's only (0600, in 0700 folders). The caller's lock serialises each read-merge-write.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from stim3d.files import atomic_path, remove_temporaries
from stim3d.study.contract import ParticipantId, Session, SessionId
from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder, first_line, merge_sessions
from stim3d.study.quotas import Quotas

LogFn = Callable[[str], None]
TOKEN_SUFFIX = ".token"  # data/<participant>/<session>.token: the SHA-256 of the session's token
TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 256 bits, 43 characters
FORBIDDEN = "no session of yours here: send the token this session was started with (Authorization: Bearer ...)"


def quiet(line: str) -> None:
    """The library's default log: nothing (the CLI passes one that prints to stderr)."""


class SessionStart(BaseModel):
    """The body of `POST /api/session`: the ids the page chose (checked as a session's ids are)."""

    model_config = ConfigDict(extra="forbid")
    participant: ParticipantId
    session: SessionId


class SessionConflict(StudyError):
    """The participant already started a session (in another browser, or a page that lost its token)."""


class NotYours(StudyError):
    """A read or write of a session without its token (or with another one)."""


def token_path(study: StudyFolder, participant: str, session: str) -> Path:
    """data/<participant>/<session>.token, beside the session it guards."""
    return study.session_path(participant, session).with_suffix(TOKEN_SUFFIX)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def write_private(path: Path, data: bytes) -> None:
    """Write `path` atomically, readable and writable by its owner only (0600 whatever the umask): sessions and
    token digests are the participants' data, not the machine's other users'."""
    with atomic_path(path) as tmp:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o600)


def _private_folder(path: Path) -> None:
    """Create `path` (and its parent up to data/) owner-only, 0700."""
    for folder in (path.parent, path):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)


def start_session(study: StudyFolder, participant: str, session: str, lock: threading.Lock) -> str:
    """Start `session` of `participant` and return its token (the server keeps only its digest).

    One session per participant: SessionConflict when the participant's folder already holds a session or a
    token, whichever browser started it (docs/study_collect.md: a participant who returns in another browser is
    refused, and told to go on where they started)."""
    path = token_path(study, participant, session)
    with lock:
        folder = path.parent
        if folder.is_dir() and any(not p.name.startswith(".") for p in folder.iterdir()):
            raise SessionConflict(f"participant {participant!r} has already started this study (one session per "
                                  "participant: go on in the browser it started in)")
        _private_folder(folder)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        write_private(path, (_digest(token) + "\n").encode("ascii"))
    return token


def authorised(study: StudyFolder, participant: str, session: str, token: str | None) -> bool:
    """Whether `token` is the one `session` of `participant` was started with (False for any id that is not a
    started session: a client learns nothing about which sessions exist)."""
    if not token:
        return False
    try:
        stored = token_path(study, participant, session).read_text(encoding="ascii").strip()
    except (StudyError, OSError, UnicodeDecodeError):
        return False
    return hmac.compare_digest(stored, _digest(token))


def store_session(study: StudyFolder, data: Any, token: str | None, lock: threading.Lock,
                  log: LogFn = quiet, quotas: Quotas | None = None) -> tuple[int, bool]:
    """Check `data` as a session of `study` sent with its `token` (NotYours otherwise), merge it with the stored
    copy, write it; (trials stored, complete). With `quotas`, OverQuota past the session's saves or bytes."""
    try:
        ids = Session.model_validate(data)
    except ValidationError as exc:
        raise StudyError(f"not a session: {first_line(exc)}") from None
    if not authorised(study, ids.participant, ids.session, token):
        raise NotYours(FORBIDDEN)
    session = study.parse_session(data)
    if quotas is not None:
        steps = study.manifest.staircase["spec"]["trials"] if study.manifest.staircase else 0
        quotas.save(session.participant, session.session, len(session.plan) + steps)
    with lock:
        path = study.session_path(session.participant, session.session)
        stored = None
        if path.is_file():
            try:
                stored = Session.model_validate_json(path.read_bytes())
            except ValueError as exc:
                raise OSError(f"{path}: the stored session is unreadable ({first_line(exc)}); move it aside") from None
        merged = merge_sessions(stored, session)
        if study.manifest.staircase is not None:
            study.check_session(merged)  # a step sent after a different stored answer would break the chain
        text = (merged.model_dump_json(indent=2) + "\n").encode("utf-8")
        if quotas is not None:
            quotas.check_bytes(session.session, len(text))
        write_private(path, text)
    log(f"stored {session.participant}/{session.session}: {len(merged.trials)} of {len(merged.plan)} trials"
        + (", complete" if merged.complete else ""))
    return len(merged.trials), merged.complete


def remove_data_temporaries(study: StudyFolder) -> int:
    """Delete the temporary files (stim3d/files.py atomic_path's) in data/ and each participant's folder there;
    how many. Only a server holding the folder lock calls it, so none is being written."""
    try:
        data = study.data_dir
    except StudyError:
        return 0  # a data/ that is a link is refused anyway; nothing of it is touched
    if not data.is_dir():
        return 0
    folders = [data, *(p for p in data.iterdir() if p.is_dir() and not p.is_symlink())]
    return sum(remove_temporaries(folder) for folder in folders)
