"""The API key: read from the variable the user names, and kept out of everything stim3d writes or prints.

The key goes into one place, the Authorization header. A server may echo it back
anywhere (an error body, a 200 body, a header) and in any form: JSON-escaped
(`\\u0073k-...`, `\\/`), upper- or lower-cased, or in part (`sk-live-****1f2e`). So
everything the client passes on from a response goes through `Redactor`, which
replaces the key and its `Bearer` form in any case and escaping, and then any run of
key characters sharing PARTIAL characters in a row with the key, by `[redacted]`,
before any message is clipped (a clip could otherwise cut the key in half and leave a
recognisable prefix). A key pasted as the *name* of the variable (`--api-key-env
sk-...`) is refused without being echoed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from stim3d.eval.errors import EvalError

MARK = "[redacted]"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
KEY_PREFIXES = ("sk-", "sk_", "hf_", "gsk_", "xai-", "pk-", "rk-", "AIza", "Bearer")
MAX_DEPTH = 64  # a JSON answer nested deeper is not an answer (client.py refuses it before this walks it)
PARTIAL = 8  # a run of key characters holding this many of the key's characters in a row is an echo of it
KEY_RUN = re.compile(rf"[A-Za-z0-9_\-.~+/=]{{{PARTIAL},}}")  # runs of what keys are made of (base64, URL-safe)


def looks_like_key(value: str) -> bool:
    """A value for --api-key-env that is a key, not a variable name: a known key prefix, or no valid name at all,
    or a long mix of lower case, upper case and digits (variable names are SHOUTED_WORDS)."""
    if value.startswith(KEY_PREFIXES) or not NAME.fullmatch(value):
        return True
    mixed = any(c.islower() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 24 and mixed


def shown_argv(argv: Iterable[str]) -> list[str]:
    """A command line as it may be logged: a key pasted as `--api-key-env`'s value replaced by MARK."""
    shown: list[str] = []
    follows = False
    for arg in argv:
        flag, equals, value = arg.partition("=")
        if follows and looks_like_key(arg):
            arg = MARK
        elif flag == "--api-key-env" and equals and looks_like_key(value):
            arg = f"{flag}={MARK}"
        shown.append(arg)
        follows = arg == "--api-key-env"
    return shown


def api_key(name: str | None) -> str | None:
    """The key held by environment variable `name` (None without a name); EvalError on `api_key_env` when what was
    given is a key rather than a variable name (not shown), or the variable is not set."""
    if name is None:
        return None
    if looks_like_key(name):
        raise EvalError("give the NAME of an environment variable holding the key, e.g. OPENAI_API_KEY; what was "
                        "given looks like a key itself (not shown)", field="api_key_env")
    value = os.environ.get(name)
    if not value or not value.strip():
        raise EvalError("that environment variable is not set", field="api_key_env", value=name)
    return value.strip()


def echo_pattern(secret: str) -> str:
    """A regex for `secret` as a server may echo it (compiled case-insensitively): each character as itself or as
    a JSON \\uXXXX escape, '/' also as '\\/'."""
    parts = []
    for char in secret:
        forms = [re.escape(char), re.escape(f"\\u{ord(char):04x}")]
        if char == "/":
            forms.append(re.escape("\\/"))
        parts.append(f"(?:{'|'.join(forms)})")
    return "".join(parts)


class Redactor:
    """Replaces each secret (and its Bearer form), echoed whole in any case and JSON escaping or in part, in text and
    in decoded JSON."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and len(s) >= 4}  # a 1-3 character "key" would redact ordinary words
        bearer = {f"Bearer {s}" for s in found}
        self.secrets = sorted(found | bearer, key=len, reverse=True)  # the Bearer form first
        self._whole = re.compile("|".join(map(echo_pattern, self.secrets)), re.IGNORECASE) if found else None
        self._pieces = {s.lower()[i:i + PARTIAL] for s in found for i in range(len(s) - PARTIAL + 1)}

    @classmethod
    def of_headers(cls, headers: dict[str, str]) -> Redactor:
        """The secrets in request headers: each Authorization value and its token."""
        values = [v for k, v in headers.items() if k.lower() in ("authorization", "api-key", "x-api-key")]
        return cls([*values, *(v.partition(" ")[2] for v in values)])

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        """`value` with every echo of a secret replaced by MARK: whole (any case, JSON-escaped), then any run of key
        characters that holds PARTIAL of a secret's characters in a row (a prefix, a suffix, a masked middle)."""
        if self._whole is None:
            return value
        value = self._whole.sub(MARK, value)
        return KEY_RUN.sub(self._partial, value) if self._pieces else value

    def _partial(self, run: re.Match[str]) -> str:
        word = run.group().lower()
        return MARK if any(word[i:i + PARTIAL] in self._pieces for i in range(len(word) - PARTIAL + 1)) else run.group()

    def json(self, value: Any, depth: int = 0) -> Any:
        """A copy of decoded JSON with every string (keys too) redacted; ValueError past MAX_DEPTH levels."""
        if not self.secrets:
            return value
        if depth > MAX_DEPTH:
            raise ValueError(f"the answer is nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v, depth + 1) for v in value]
        return value
