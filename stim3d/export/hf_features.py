"""Typed Hugging Face features for the imagefolder export, and the rows made to fit them.

Why: `datasets` infers a column's type from JSON, so `difficulty` held as one JSON
string stays a string and keys that exist in one family only break inference. The
export therefore declares its features in the dataset card (README.md's
`dataset_info`): `image` and `mask` as Image, `difficulty` as a struct over the
union of every row's keys, each typed (bool, int64, float64 or string; null where a
row lacks it), `answer_number` as int64 (null for non-count answers) and `objects`
as a list of structs. Rows are coerced to those types, so a key that is an int in
one family and a float in another loads as float64 everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

OBJECT_FEATURES = [
    {"name": "object_id", "dtype": "int32"},
    {"name": "shape", "dtype": "string"},
    {"name": "color", "dtype": "string"},
    {"name": "visibility", "dtype": "float32"},
    {"name": "occlusion", "dtype": "float32"},
    {"name": "truncation", "dtype": "float32"},
    {"name": "visible_px", "dtype": "float32"},
    {"name": "material", "dtype": "string"},
]
STRING_COLUMNS = ("id", "batch", "item_id", "question_id", "source_item_id", "source_question_id", "scene_id",
                  "family", "look", "split", "question", "prompt", "answer_type", "answer", "answer_json", "scoring_rule",
                  "difficulty_json")
INT_COLUMNS = ("width", "height")


def value_type(values: Iterable[Any]) -> str:
    """The one dtype that holds every non-null value: bool, int64, float64, else string."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds or kinds == {bool}:
        return "bool" if kinds else "string"
    if kinds <= {int}:
        return "int64"
    if kinds <= {int, float}:
        return "float64"
    return "string"


def difficulty_types(rows: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Every difficulty key of the export, sorted, with its dtype."""
    values: dict[str, list[Any]] = {}
    for row in rows:
        for key, value in row["difficulty"].items():
            values.setdefault(key, []).append(value)
    return {key: value_type(values[key]) for key in sorted(values)}


def coerce(value: Any, dtype: str) -> Any:
    if value is None:
        return None
    if dtype == "float64":
        return float(value)
    if dtype == "string" and not isinstance(value, str):
        return str(value)
    return value


def typed_rows(rows: list[dict[str, Any]], types: dict[str, str]) -> list[dict[str, Any]]:
    """Rows whose difficulty has every key of `types` (null where absent), each value of its column's type."""
    return [{**row, "difficulty": {key: coerce(row["difficulty"].get(key), dtype) for key, dtype in types.items()}}
            for row in rows]


def features(types: dict[str, str]) -> list[dict[str, Any]]:
    """The `dataset_info.features` list of the dataset card (the YAML form `datasets` reads)."""
    columns: list[dict[str, Any]] = [{"name": "image", "dtype": "image"}, {"name": "mask", "dtype": "image"}]
    columns += [{"name": name, "dtype": "string"} for name in STRING_COLUMNS]
    columns += [{"name": name, "dtype": "int32"} for name in INT_COLUMNS]
    columns.append({"name": "answer_number", "dtype": "int64"})
    columns.append({"name": "difficulty", "struct": [{"name": k, "dtype": t} for k, t in types.items()]})
    columns.append({"name": "objects", "list": OBJECT_FEATURES})
    return columns


ARROW_TYPES = {"string": "string", "int32": "int32", "int64": "int64", "float32": "float32", "float64": "float64",
               "bool": "bool_"}


def arrow_schema(feature_list: list[dict[str, Any]]):
    """The metadata file's pyarrow schema for `feature_list` (image columns are their `*file_name` paths)."""
    import pyarrow as pa

    def field_type(feature: dict[str, Any]):
        if "struct" in feature:
            return pa.struct([pa.field(f["name"], field_type(f)) for f in feature["struct"]])
        if "list" in feature:
            return pa.list_(pa.struct([pa.field(f["name"], field_type(f)) for f in feature["list"]]))
        return getattr(pa, ARROW_TYPES[feature["dtype"]])()

    fields = []
    for feature in feature_list:
        if feature.get("dtype") == "image":
            name = "file_name" if feature["name"] == "image" else f"{feature['name']}_file_name"
            fields.append(pa.field(name, pa.string()))
        else:
            fields.append(pa.field(feature["name"], field_type(feature)))
    return pa.schema(fields)


class PyarrowMissing(ImportError):
    """The imagefolder export writes parquet and pyarrow is not installed: one line naming the extra."""


def require_pyarrow() -> None:
    """Raise PyarrowMissing unless pyarrow imports. Checked before any file is written: a jsonl fallback would
    type each split on its own, and `datasets` then refuses splits whose columns differ."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        from stim3d.install_hint import install_hint

        raise PyarrowMissing('the imagefolder export writes metadata.parquet and needs pyarrow: '
                             f'{install_hint("export")}') from None


def write_metadata(folder, rows: list[dict[str, Any]], feature_list: list[dict[str, Any]]) -> str:
    """metadata.parquet with the declared schema (one schema in every split, as `datasets` requires).
    Returns the file name written."""
    from pathlib import Path

    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(feature_list)), Path(folder) / "metadata.parquet")
    return "metadata.parquet"
