"""The API key in no form on a terminal or in a file: echoes a server JSON-escapes, re-cases or clips are redacted
(stim3d/eval/redact.py), and a --base-url carrying credentials is refused without being repeated (eval/client.py)."""

from __future__ import annotations

import json

import pytest

from stim3d.eval.client import Endpoint, server_message
from stim3d.eval.options import EvalOptions
from stim3d.eval.redact import Redactor
from stim3d.eval.run import EvalError

SECRET = "sk-live-7f3a9c2e41d84b6f-Do-Not-Leak"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor.of_headers({"Authorization": f"Bearer {SECRET}"})


def _escaped(text: str) -> str:
    """Every character as a JSON \\uXXXX escape, as some servers write non-alphanumerics (here: all of them)."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize("echo", [
    f"Bearer {SECRET}", SECRET.upper(), SECRET.lower(), SECRET.replace("-", "\\u002d"), _escaped(SECRET),
    _escaped(SECRET).upper(), f"{SECRET[:12]}...{SECRET[-4:]}", SECRET[:-6], SECRET[9:],
])
def test_an_echoed_key_in_any_case_escaping_or_part_is_redacted_in_an_error_line(redactor, echo):
    """A 401 body echoing the key (raw text, or JSON whose string holds it escaped, or re-cased, or as a prefix or a
    suffix): the error line shows neither the key nor PARTIAL of its characters in a row."""
    for body in (f"invalid api key: {echo}", '{"error": {"message": "invalid api key: ECHO"}}'.replace("ECHO", echo),
                 '{"detail": [{"loc": "header", "input": "ECHO"}]}'.replace("ECHO", echo)):
        shown = server_message(body.encode(), redactor)
        assert "[redacted]" in shown, (body, shown)
        plain = json.loads(f'"{shown}"') if "\\u" in shown else shown  # what a reader decoding the line would see
        assert not any(SECRET.lower()[i:i + 8] in plain.lower() for i in range(len(SECRET) - 7)), (body, shown)


def test_ordinary_answers_and_other_tokens_are_left_alone(redactor):
    text = 'The answer is \\boxed{3}. {"bbox_2d": [10, 20, 30, 40]} sk-other-key-0000 https://example.com/v1'
    assert redactor.text(text) == text
    assert redactor.json({"content": text, "n": [1, 2]}) == {"content": text, "n": [1, 2]}


@pytest.mark.parametrize("url", [
    f"https://user:{SECRET}@api.example.com/v1", f"https://{SECRET}@api.example.com/v1",
    f"https://api.example.com/v1?key={SECRET}", f"https://api.example.com/v1#{SECRET}",
    f"https://api.example.com:{SECRET}/v1", f"ftp://{SECRET}.example.com/v1", SECRET,
])
def test_a_base_url_with_credentials_is_refused_without_repeating_it(url):
    with pytest.raises(EvalError) as refused:
        Endpoint.parse(url)
    message = str(refused.value)
    assert refused.value.field == "base_url" and message.startswith("base_url: ") and "\n" not in message
    assert SECRET not in message and SECRET[:8] not in message and "example.com" not in message


def test_a_base_url_too_long_is_refused_without_repeating_it():
    with pytest.raises(EvalError) as refused:
        EvalOptions.build(model="m", base_url=f"https://api.example.com/v1/{SECRET}" + "x" * 2048)
    assert str(refused.value).startswith("base_url: ") and SECRET[:8] not in str(refused.value)


def test_a_plain_base_url_still_parses():
    assert Endpoint.parse("http://127.0.0.1:8000/v1/") == Endpoint("http", "127.0.0.1", 8000, "/v1/chat/completions")
