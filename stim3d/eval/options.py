"""`EvalOptions`: every setting of one evaluation, its default and its bounds, validated in one place.

Why a model and not checks scattered through the loop: the same model serves the
library (`stim3d.evaluate(...)` builds one from its keyword arguments; `run_eval` and
`run_staircases` take one), the command (it builds one from its flags and `--config`
file; its argument types read the limits below so a bad flag is refused at parse time,
and its help reads the defaults from `default`). A value outside its range, `nan`,
`inf` or `1e308` where a bounded number is expected, or an unknown field, is one
EvalError naming the field (`timeout 1e+308: must be less than or equal to 3600`; the command
names the flag), never a traceback deep in a worker thread.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stim3d.eval.errors import EvalError

if TYPE_CHECKING:
    from stim3d.eval.request import RequestOptions

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

RESERVED = ("model", "messages")  # the request fields stim3d builds from the record: extra_body may not set them
SECRET_FIELDS = ("api_key_env", "base_url")  # never echoed: a key given there (by mistake, or in the URL) must not
# reach a terminal


class EvalOptions(BaseModel):
    """What one evaluation asks, of whom, and how hard it tries: each field's default is the one every caller gets."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    # the model name the server knows, or baseline:constant, baseline:random, baseline:oracle
    model: str = Field(min_length=1, max_length=512)
    # the server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1 (baselines need none)
    base_url: str | None = Field(None, max_length=2048)
    temperature: float | None = Field(0.0, ge=0.0, le=MAX_TEMPERATURE)  # None: not sent (the server's own)
    max_tokens: int | None = Field(256, ge=1, le=MAX_TOKENS)  # None: not sent
    system: str | None = Field(None, max_length=MAX_SYSTEM)  # a system message sent before each question
    extra_body: dict[str, Any] = Field(default_factory=dict)  # fields added to the JSON body as given
    image_scale: float = Field(1.0, gt=0.0, le=1.0)  # each image is downscaled by it before sending; 1: as rendered
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT)  # only the first `limit` selected questions
    filters: dict[str, str] | None = None  # only items whose difficulty (or parameter) KEY equals VALUE
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)  # requests in flight
    timeout: float = Field(120.0, gt=0.0, le=MAX_TIMEOUT)  # hard seconds per attempt
    retries: int = Field(5, ge=0, le=MAX_RETRIES)  # after the first attempt (408, 429, 5xx, timeouts)
    backoff: float = Field(0.5, ge=0.0, le=MAX_BACKOFF)  # first wait between attempts, seconds
    api_key_env: str | None = None  # the NAME of the variable holding the key (sent as a Bearer token, never stored)
    seed: int = Field(0, ge=0, le=MAX_SEED)  # seed of baseline:random
    dry_run: bool = False  # build the first request and return it without sending or writing
    report: bool = True  # write scores.json and report.html into BATCH/eval/<model-slug>/

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

    @field_validator("extra_body", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("extra_body")
    @classmethod
    def _json_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Fields sent as JSON as given: they must be JSON (no nan or inf), of a reasonable size, and leave the
        model and the messages to stim3d (a record's question must be what is asked)."""
        clash = [k for k in RESERVED if k in value]
        if clash:
            raise ValueError(f"may not set {clash[0]!r}: stim3d builds it from the record")
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
            raise option_error(exc) from None

    def request(self) -> RequestOptions:
        """What of these options goes into each request (and so into its hash)."""
        from stim3d.eval.request import RequestOptions

        return RequestOptions(model=self.model, temperature=self.temperature, max_tokens=self.max_tokens,
                              system=self.system, extra_body=dict(self.extra_body), image_scale=self.image_scale)

    def settings(self) -> dict[str, Any]:
        """What decides the answers and how they were asked for, as recorded in scores.json and report.html."""
        return {"endpoint": self.base_url, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "system": self.system, "extra_body": dict(self.extra_body),
                "image_scale": self.image_scale, "seed": self.seed, "limit": self.limit,
                "filters": dict(self.filters) if self.filters else None, "concurrency": self.concurrency,
                "timeout": self.timeout, "retries": self.retries}


def option_error(exc: ValidationError) -> EvalError:
    """The first error as an EvalError on its field: `timeout 1e+308: must be less than or equal to 3600` (the
    value is left out for a secret field)."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "settings"
    message = str(first["msg"]).removeprefix("Value error, ")
    message = (message[:1].lower() + message[1:]).replace("input should be", "must be")
    if first["type"] == "extra_forbidden":
        return EvalError(f"unknown setting; settings: {', '.join(EvalOptions.model_fields)}", field=name)
    if name in SECRET_FIELDS or "input" not in first:
        return EvalError(message, field=name)
    shown = first["input"]
    text = f"{shown:g}" if isinstance(shown, float) else repr(shown) if isinstance(shown, str) else str(shown)
    return EvalError(message, field=name, value=text[:60])


def default(name: str) -> Any:
    """The default of the setting `name`, as every caller gets it (the command's help states it from here)."""
    return EvalOptions.model_fields[name].get_default(call_default_factory=True)

