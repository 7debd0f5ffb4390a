"""Names that become paths: item ids and splits are checked against a fixed character set when loaded.

An item id names its folder (`items/<item_id>/`), gallery thumbnails and exported
images; a split names an export folder. A value read from a config, an item.json
or a records.jsonl is therefore refused unless it is one harmless path component.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME_LIMIT = 120  # leaves room for a temporary sibling's suffix within a 255-byte file name


def check_name(value: str, what: str = "name") -> str:
    """`value` if it is safe as one path component; else ValueError naming what is allowed.

    Letters, digits, '.', '_' and '-', starting with a letter or digit, at most NAME_LIMIT
    characters: no '/', no '..', no absolute path, nothing hidden.
    """
    if not isinstance(value, str) or not _SAFE_NAME.fullmatch(value) or len(value) > NAME_LIMIT or ".." in value:
        raise ValueError(f"{what} {value!r}: use 1-{NAME_LIMIT} letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit (it becomes a file or folder name)")
    return value


ItemId = Annotated[str, AfterValidator(lambda v: check_name(v, "item id"))]
SplitName = Annotated[str, AfterValidator(lambda v: check_name(v, "split"))]
