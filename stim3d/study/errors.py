"""The study's one user-facing error: a bad batch, study folder, option or submission, said in one line."""

from __future__ import annotations

from stim3d.errors import Stim3dError


class StudyError(Stim3dError, ValueError):
    """A study cannot be built, served or scored as asked; the message is one line naming what and why."""
