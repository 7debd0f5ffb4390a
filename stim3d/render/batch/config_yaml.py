"""The bounded YAML reader of configs: duplicate keys refused, alias bombs and deep nesting stopped before reading.

A config is read by `yaml.SafeLoader` with two guards a plain `safe_load` lacks: a key
given twice in one mapping is an error (YAML would keep the last silently), and the
node graph is measured before it is constructed (MAX_NODES values after expanding
aliases, MAX_DEPTH levels), so a hostile file costs a bounded amount of work.
"""

from __future__ import annotations

from typing import Any

import yaml

from stim3d.errors import ConfigError

MAX_NODES = 1_000_000  # YAML values after expanding aliases (&a / *a): an alias bomb is refused before it is read
MAX_DEPTH = 64  # nesting of YAML lists and mappings; a config needs about 5


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (plain YAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: SafeLoader reports it below
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (the first one would be silently ignored)", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_size(root: yaml.Node, source: str) -> None:
    """ConfigError if the document nests deeper than MAX_DEPTH or expands (aliases counted at every use) beyond
    MAX_NODES values. Sizes are computed once per node, so a billion-leaf alias bomb is measured in microseconds."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            kids = _children(node)
            size[key] = min(MAX_NODES + 1, 1 + sum(size[id(kid)] for kid in kids))
            depth[key] = 1 + max((depth[id(kid)] for kid in kids), default=0)
            if size[key] > MAX_NODES:
                raise ConfigError(f"{source}: more than {MAX_NODES} values once its aliases (*name) are expanded; "
                                  "refused before reading further")
            if depth[key] > MAX_DEPTH:
                raise ConfigError(f"{source}: lists or mappings nested more than {MAX_DEPTH} deep; a config needs a few")
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise ConfigError(f"{source}: an alias refers to a list or mapping that contains it (line "
                              f"{node.start_mark.line + 1})")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in _children(node) if id(kid) not in size)


def read_yaml(text: str, source: str) -> Any:
    """The YAML document in `text`, refused (ConfigError) before it is built if it is too large or too deep."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node, source)
        return loader.construct_document(node)
    finally:
        loader.dispose()
