"""`EvalOptions`: every setting of one `evaluate` call, validated in one place with one-line errors.

Why a model and not checks scattered through the loop: the same bounds serve the
library (`stim3d.evaluate(...)` builds an `EvalOptions` from its keyword arguments),
the CLI (its argument types, stim3d/cli/common.py, read the limits below so a bad
flag is refused at parse time) and a `--config` file. A value outside its range,
`nan`, `inf` or `1e308` where a bounded number is expected, or an unknown field, is
one line naming the flag (`--timeout 1e+308: must be at most 3600`), never a traceback
deep in a worker thread.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stim3d.errors import Stim3dError

MAX_TEMPERATURE = 2.0  # the OpenAI range; servers refuse more
MAX_TOKENS = 131072  # longest answer asked for (128 Ki tokens: above any current model's output limit)
MAX_TIMEOUT = 3600.0  # one request may take at most an hour
MAX_CONCURRENCY = 64  # requests in flight
MAX_RETRIES = 20
MAX_BACKOFF = 60.0  # first wait between attempts, seconds
MAX_SEED = 2**63 - 1
MAX_LIMIT = 10**9
MAX_SYSTEM = 100_000  # characters of a system message
MAX_EXTRA_BODY = 100_000  # characters of the extra body as JSON

# The flag each field is set by: errors name what the user typed
FLAGS = {"image_scale": "--downscale", "base_url": "--base-url", "max_tokens": "--max-tokens",
         "extra_body": "--extra-body", "api_key_env": "--api-key-env", "filters": "--filter"}
SECRET_FIELDS = ("api_key_env", "base_url")  # never echoed: a key given there (by mistake, or in the URL) must not
# reach a terminal


class EvalError(Stim3dError, ValueError):
    """A caller's mistake (bad setting, bad URL, unknown baseline, unset key variable, no records): one line naming it."""


class EvalOptions(BaseModel):
    """What one evaluation asks, of whom, and how hard it tries."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model: str = Field(min_length=1, max_length=512)
    base_url: str | None = Field(None, max_length=2048)
    temperature: float | None = Field(0.0, ge=0.0, le=MAX_TEMPERATURE)
    max_tokens: int | None = Field(256, ge=1, le=MAX_TOKENS)
    system: str | None = Field(None, max_length=MAX_SYSTEM)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    image_scale: float = Field(1.0, gt=0.0, le=1.0)
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT)
    filters: dict[str, str] | None = None
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)
    timeout: float = Field(120.0, gt=0.0, le=MAX_TIMEOUT)
    retries: int = Field(5, ge=0, le=MAX_RETRIES)
    backoff: float = Field(0.5, ge=0.0, le=MAX_BACKOFF)
    api_key_env: str | None = None
    seed: int = Field(0, ge=0, le=MAX_SEED)
    dry_run: bool = False
    report: bool = True

    @field_validator("temperature", "max_tokens", "image_scale", "limit", "concurrency", "timeout", "retries",
                     "backoff", "seed", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        """A bool is no number (`true` in YAML); a huge int passed for a float is refused like `inf`."""
        if isinstance(value, bool):
            raise ValueError("must be a number, not true/false")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("extra_body")
    @classmethod
    def _json_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Fields sent as JSON as given: they must be JSON (no nan or inf) and of a reasonable size."""
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            raise ValueError("must be a JSON object of finite numbers, strings, lists and objects") from None
        if len(text) > MAX_EXTRA_BODY:
            raise ValueError(f"longer than {MAX_EXTRA_BODY} characters as JSON")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _a_name(cls, value: str | None) -> str | None:
        """The NAME of a variable; a key pasted here by mistake is refused (and, being secret, never echoed)."""
        from stim3d.eval.redact import looks_like_key

        if value is not None and looks_like_key(value):
            raise ValueError("give the NAME of an environment variable holding the key, e.g. OPENAI_API_KEY; "
                             "what was given looks like a key itself (not shown)")
        return value

    @classmethod
    def build(cls, **settings: Any) -> EvalOptions:
        """The options from keyword arguments; EvalError (one line) naming the first bad one."""
        try:
            return cls(**settings)
        except ValidationError as exc:
            raise EvalError(error_line(exc)) from None

    def settings(self) -> dict[str, Any]:
        """What decides the answers and how they were asked for, as recorded in scores.json and report.html."""
        return {"endpoint": self.base_url, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "system": self.system, "extra_body": dict(self.extra_body),
                "image_scale": self.image_scale, "seed": self.seed, "limit": self.limit,
                "filters": dict(self.filters) if self.filters else None, "concurrency": self.concurrency,
                "timeout": self.timeout, "retries": self.retries}


def error_line(exc: ValidationError) -> str:
    """`--flag VALUE: what is wrong` for the first error (the value is left out for a secret field)."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "settings"
    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
    message = str(first["msg"]).removeprefix("Value error, ")
    message = (message[:1].lower() + message[1:]).replace("input should be", "must be")
    if first["type"] == "extra_forbidden":
        return f"{name}: unknown setting; settings: {', '.join(EvalOptions.model_fields)}"
    if name in SECRET_FIELDS or "input" not in first:
        return f"{flag}: {message}"
    shown = first["input"]
    text = f"{shown:g}" if isinstance(shown, float) else repr(shown) if isinstance(shown, str) else str(shown)
    return f"{flag} {text[:60]}: {message}"

