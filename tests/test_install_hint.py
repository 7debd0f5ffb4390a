"""Every install command stim3d prints comes from stim3d/install_hint.py and can work: stim3d is on no package
index, so a checkout is told `pip install -e '.[extra]'`, an install from a wheel or folder is told that wheel or
folder, and no message, doc or exported file says `pip install stim3d`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stim3d import install_hint as hint

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_is_told_to_install_itself_editable(monkeypatch, tmp_path):
    assert hint.source_checkout() == ROOT
    monkeypatch.chdir(ROOT)
    assert hint.install_hint("export") == "pip install -e '.[export]'"
    assert hint.install_hint() == "pip install -e '.'"
    monkeypatch.chdir(tmp_path)  # from elsewhere: the checkout's path, so the command works where it is typed
    assert hint.install_hint("blender") == f"pip install -e '{ROOT}[blender]'"


class FakeDistribution:
    def __init__(self, direct_url: dict | None):
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if name == "direct_url.json" and self.direct_url is not None else None


@pytest.mark.parametrize("direct_url, expected", [
    ({"url": "file:///tmp/wheels%20here/stim3d-1.0-py3-none-any.whl", "archive_info": {}},
     "pip install '/tmp/wheels here/stim3d-1.0-py3-none-any.whl[export]'"),
    ({"url": "file:///srv/stim3d-src", "dir_info": {}}, "pip install '/srv/stim3d-src[export]'"),
    ({"url": "https://example.invalid/stim3d.whl", "archive_info": {}}, None),  # not a local file: the wheel's name
    (None, None),
])
def test_an_installed_copy_is_told_the_wheel_or_folder_it_came_from(monkeypatch, direct_url, expected):
    from importlib import metadata

    monkeypatch.setattr(hint, "source_checkout", lambda: None)
    monkeypatch.setattr(metadata, "distribution", lambda name: FakeDistribution(direct_url))
    wheel = f"pip install 'stim3d-{hint.__version__}-py3-none-any.whl[export]'"
    assert hint.install_hint("export") == (expected or wheel)


def test_no_message_doc_or_exported_file_says_pip_install_stim3d():
    impossible = re.compile(r"pip install [\"']?stim3d(\[|[\"'`),]|\s|$)")
    assert impossible.search('pip install "stim3d[export]"') and impossible.search("`pip install stim3d` is")
    assert not impossible.search("pip install -e '.[export]'") and not impossible.search("pip install stim3d-1.whl")
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "stim3d").rglob("*.py"),
             *(ROOT / "scripts").glob("*.sh"), ROOT / "pyproject.toml"]
    offending = [f"{path.relative_to(ROOT)}:{n}" for path in files if path.name != "install_hint.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if impossible.search(line)]
    assert offending == []
