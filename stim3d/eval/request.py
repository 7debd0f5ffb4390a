"""Building the chat-completions request for one record, and the hash that names it.

The request is the OpenAI-compatible shape every local and hosted server reads:
one user message whose content is the image (a base64 PNG data URL) and then the
record's `prompt`, exactly as in the record (question plus answer protocol), after
an optional system message. Sampling settings and any extra body fields come from
`RequestOptions`.

`request_hash` names a request by everything that decides the answer: the model,
the messages (the image by its sha256 and downscale factor, not its bytes) and the
settings. A stored response is reused only under the same hash, so changing the
prompt, the system message, the temperature or the image scale asks again.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from stim3d.scoring.records import Record


@dataclass(frozen=True)
class RequestOptions:
    """Everything but the record that goes into a request: `EvalOptions.request()` (options.py) makes it from
    settings already checked there, where the defaults and bounds are."""

    model: str
    temperature: float | None
    max_tokens: int | None
    system: str | None
    extra_body: dict[str, Any]
    image_scale: float  # 0 < scale <= 1: the image is downscaled by this factor before sending


def request_body(record: Record, options: RequestOptions, image_url: str) -> dict[str, Any]:
    """The JSON body for `record`, with `image_url` as the image (a data URL, or a placeholder for hashing)."""
    messages: list[dict[str, Any]] = []
    if options.system:
        messages.append({"role": "system", "content": options.system})
    messages.append({"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": image_url}},
        {"type": "text", "text": record.prompt},
    ]})
    body: dict[str, Any] = {"model": options.model, "messages": messages}
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    body.update(options.extra_body)
    return body


def request_hash(record: Record, options: RequestOptions) -> str:
    """16 hex digits naming the request: same hash, same question to the same model with the same settings."""
    image = f"sha256:{record.image.sha256};scale={options.image_scale:g}"
    text = json.dumps(request_body(record, options, image), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def image_data_url(path: Path, scale: float = 1.0) -> str:
    """The PNG at `path` as a data URL, downscaled by `scale` (Lanczos) when below 1."""
    data = Path(path).read_bytes()
    if scale < 1:
        with Image.open(io.BytesIO(data)) as image:
            size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
            buffer = io.BytesIO()
            image.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(buffer, format="PNG")
            data = buffer.getvalue()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def shown_request(body: dict[str, Any], keep: int = 48) -> dict[str, Any]:
    """A copy of `body` for printing: each data URL cut to its first `keep` characters and its length."""
    def cut(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v) for v in value]
        if isinstance(value, str) and value.startswith("data:") and len(value) > keep:
            return f"{value[:keep]}... ({len(value)} characters)"
        return value
    return cut(body)
