"""`stim3d study build --jatos`: the .jzip passes what JATOS's study import requires of an archive.

Read from JATOS v3.10.5 (github.com/JATOS/JATOS, tag v3.10.5, commit bf99ed9):
- modules/gui/app/services/gui/ImportExportService.java: `importStudy` unzips the upload (`unzipUploadedFile`,
  modules/common/app/utils/common/ZipUtil.java `unzip`: each entry resolved inside the target folder, else
  "Illegal name"; a file written twice fails), then `deserializeStudy`: exactly one file at the archive's root
  whose name ends in "jas" (IOUtils `findFiles(dir, "", "jas")`), else "File is not a valid JATOS study"; the
  study, each component and each batch validated. `moveStudyAssetsDir` takes the one directory at the root
  (IOUtils `findDirectories`) as the study assets and names it the study's dirName (none: an empty folder is
  made; more than one: refused).
- modules/gui/app/services/gui/StudyDeserializer.java: `version` (the first such key, read as an int) over
  Study.SERIAL_VERSION (3) is "too new"; 3 is read as the current format, `data` bound to the Study model with
  Jackson. The archive keeps to the properties the models declare, so it binds the same whether or not the
  mapper fails on an unknown property (Jackson's default is to fail).
- modules/common/app/models/common/Study.java, Component.java, Batch.java: the properties below.
- modules/gui/app/models/gui/StudyProperties.java, ComponentProperties.java, BatchProperties.java `validate`:
  a title (at most 255 characters), no HTML in any text (Jsoup with an empty safelist), a dirName with no
  character of IOUtils.REGEX_ILLEGAL_IN_FILENAME and none of INVALID_DIR_NAMES, an htmlFilePath matching the
  path pattern, batch limits of at least 1, worker types WorkerService knows.
JATOS generates UUIDs with java.util.UUID (the canonical lower-case 8-4-4-4-12 text) and finds a study and its
components by them: an import with a known study UUID updates that study, and a component UUID belonging to
another study is refused, so the UUIDs are checked to be canonical and distinct, stable for one study id and
different for another.
"""

from __future__ import annotations

import json
import re
import uuid
import zipfile
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

import pytest

from stim3d.study.build import BuildOptions, build_study

pytestmark = pytest.mark.bpy

COMPLETION = "https://app.prolific.com/submissions/complete?cc=C1A2B3C4"
# Study.java, Component.java, Batch.java: every property the import binds, with the aliases @JsonAlias declares.
STUDY_PROPERTIES = {"uuid", "title", "description", "active", "locked", "groupStudy", "linearStudy", "allowPreview",
                    "dirName", "comments", "studyInput", "jsonData", "endRedirectUrl", "studyEntryMsg",
                    "componentList", "batchList"}
COMPONENT_PROPERTIES = {"uuid", "title", "htmlFilePath", "reloadable", "active", "comments", "componentInput",
                        "jsonData"}
BATCH_PROPERTIES = {"uuid", "title", "active", "maxActiveMembers", "maxTotalMembers", "maxTotalWorkers",
                    "allowedWorkerTypes", "comments", "batchInput", "jsonData"}
ILLEGAL_IN_DIR_NAME = re.compile("[\\s\\n\\r\\t\\f*?\"\\\\\0/,`<>|:~!§$%&^°]")  # IOUtils.REGEX_ILLEGAL_IN_FILENAME
INVALID_DIR_NAMES = {"jatos", "publix", "public", "assets", "study_assets_root", "study_assets"}
HTML_FILE_PATH = re.compile(r"^[\w\d_-][\w\d/_-]*\.[\w\d_-]+$", re.ASCII)  # ComponentProperties
WORKER_TYPES = {"jatos", "ja", "personalsingle", "ps", "personalmultiple", "pm", "generalsingle", "gs",
                "generalmultiple", "gm", "mturk", "mt", "mturksandbox", "mts"}  # WorkerService, lower-cased


@pytest.fixture(scope="module")
def archives(study_batch, tmp_path_factory) -> tuple[Path, Path]:
    """A study's .jzip (built twice: study.jzip and again.jzip, the same study id) and another study's."""
    root = tmp_path_factory.mktemp("jatos")
    options = BuildOptions(pilot=True, practice=2, catch=2, jatos=True, completion_url=COMPLETION)
    for name in ("study", "again"):
        build_study(study_batch, root / name, options)
    build_study(study_batch, root / "other", options.model_copy(update={"practice": 1}))
    return root / "study.jzip", root / "other.jzip"


def no_markup(text: str | None) -> bool:
    """No HTML for Jsoup to find, stricter than JATOS's check: no tag and no character reference at all."""
    return text is None or not ("<" in text or "&" in text)


def uuids(jas: dict) -> list[str]:
    data = jas["data"]
    return [data["uuid"], *(c["uuid"] for c in data["componentList"]), *(b["uuid"] for b in data["batchList"])]


class References(HTMLParser):
    """The src and href attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in ("src", "href") and value]


def unpacked(archive: Path, into: Path) -> tuple[dict, Path]:
    """The archive unpacked as ZipUtil.unzip does (each entry inside the target, none twice), its one .jas read, and
    the one directory at its root."""
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert len(names) == len(set(names))  # Files.copy refuses an entry written twice
        for name in names:
            path = PurePosixPath(name)
            assert not path.is_absolute() and ".." not in path.parts and "\\" not in name, name
        zf.extractall(into)
    files = [p for p in into.iterdir() if p.is_file()]
    folders = [p for p in into.iterdir() if p.is_dir()]
    jas_files = [p for p in files if p.name.endswith("jas")]
    assert len(jas_files) == 1 and len(folders) == 1 and files == jas_files, sorted(p.name for p in into.iterdir())
    text = jas_files[0].read_text(encoding="utf-8")
    return json.loads(text), folders[0]


def test_the_archive_is_one_jas_and_the_study_assets_under_its_dir_name(archives, tmp_path):
    jas, folder = unpacked(archives[0], tmp_path / "unpacked")
    assert list(jas) == ["version", "data"] and jas["version"] == "3" and int(jas["version"]) == 3
    data = jas["data"]
    dir_name = data["dirName"]
    assert folder.name == dir_name and (tmp_path / "unpacked" / f"{dir_name}.jas").is_file()
    assert 0 < len(dir_name) <= 255 and not ILLEGAL_IN_DIR_NAME.search(dir_name) and dir_name not in INVALID_DIR_NAMES
    assert (folder / "index.html").is_file() and (folder / "lib" / "jspsych" / "jspsych.js").is_file()


def test_the_study_components_and_batches_bind_and_validate(archives, tmp_path):
    jas, folder = unpacked(archives[0], tmp_path / "unpacked")
    data = jas["data"]
    assert set(data) <= STUDY_PROPERTIES, set(data) - STUDY_PROPERTIES
    assert data["title"].strip() and len(data["title"]) <= 255
    for key in ("title", "description", "comments", "endRedirectUrl", "studyEntryMsg"):
        assert no_markup(data.get(key)), key
    assert data["endRedirectUrl"] == COMPLETION
    assert all(isinstance(data[key], bool) for key in ("groupStudy", "linearStudy", "allowPreview"))
    assert data["componentList"] and data["batchList"]
    for component in data["componentList"]:
        assert set(component) <= COMPONENT_PROPERTIES, set(component) - COMPONENT_PROPERTIES
        assert component["title"].strip() and len(component["title"]) <= 255 and no_markup(component["title"])
        path = component["htmlFilePath"]
        assert HTML_FILE_PATH.match(path) and len(path) <= 255 and (folder / path).is_file()
        assert component["jsonData"] is None or json.loads(component["jsonData"]) is not None
    for batch in data["batchList"]:
        assert set(batch) <= BATCH_PROPERTIES, set(batch) - BATCH_PROPERTIES
        assert batch["title"].strip() and no_markup(batch["title"]) and no_markup(batch["comments"])
        assert all(batch[k] is None or batch[k] >= 1 for k in ("maxActiveMembers", "maxTotalMembers", "maxTotalWorkers"))
        assert batch["allowedWorkerTypes"] and {t.lower() for t in batch["allowedWorkerTypes"]} <= WORKER_TYPES


def test_the_component_page_loads_jatos_js_and_every_file_it_names_is_in_the_study_assets(archives, tmp_path):
    jas, folder = unpacked(archives[0], tmp_path / "unpacked")
    (component,) = jas["data"]["componentList"]
    page = folder / component["htmlFilePath"]
    references = References()
    references.feed(page.read_text(encoding="utf-8"))
    assert "jatos.js" in references.found  # JATOS serves jatos.js beside the component's page
    local = [r for r in references.found if r != "jatos.js" and not re.match(r"^([a-z][a-z0-9+.-]*:|/|#)", r)]
    assert local and all((page.parent / r.split("?")[0].split("#")[0]).is_file() for r in local), local
    assert {r for r in local if r.startswith("lib/jspsych/")} >= {"lib/jspsych/jspsych.js", "lib/jspsych/jspsych.css"}


def test_uuids_are_canonical_distinct_and_stable_for_the_study(archives, tmp_path):
    same, other = (unpacked(archive, tmp_path / archive.stem)[0] for archive in archives)
    ids = uuids(same)
    assert all(str(uuid.UUID(u)) == u for u in ids) and len(set(ids)) == len(ids)
    again, _ = unpacked(archives[0].with_name("again.jzip"), tmp_path / "again")
    assert uuids(again) == ids  # the study built again: importing it updates the study imported before
    assert not set(uuids(other)) & set(ids)  # another study: its own study, component and batch
