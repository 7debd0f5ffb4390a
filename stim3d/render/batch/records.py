"""Records of a rendered item: the hand-off contract (`stim3d.scoring.records`) filled from an item.

The contract itself, its JSON Schema and the readers live in `scoring/records.py`;
this module only knows how an item's questions, parameters and provenance map
onto it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stim3d.scenes.families import FAMILIES
from stim3d.scenes.look_contrast import min_contrast
from stim3d.scenes.model import DrawnLook, Item, StudioLook
from stim3d.scoring.records import DEFAULT_RULE, PROTOCOL, Answer, ImageRef, Record, RecordProvenance, Scalar, Scoring
from stim3d.scoring.rules import REGION_PARAMS, STRICT_CLICKS


def flatten(values: dict[str, Any], prefix: str = "") -> dict[str, Scalar]:
    """Nested dicts and sequences to one level: {"size_range": [0.7, 1.0]} -> {"size_range.0": 0.7, ...}."""
    flat: dict[str, Scalar] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            flat.update(flatten({str(i): v for i, v in enumerate(value)}, f"{name}."))
        else:
            flat[name] = value
    return flat


def difficulty_of(item: Item) -> dict[str, Scalar]:
    """The family's own difficulty dict and its rendered measures, completed with every parameter it does not report."""
    merged = flatten(item.difficulty)
    family = FAMILIES.get(item.family)
    if family is not None and family.rendered_difficulty is not None:
        merged.update(flatten(family.rendered_difficulty(item)))
    for key, value in flatten(item.params).items():
        merged.setdefault(key, value)
    if item.scene.look != StudioLook():  # how often the look was redrawn, and what still fails (summary.json)
        merged["look_redraws"] = item.scene.look.redraws
        merged["look_colour_failures"] = len(item.scene.look.colour_failures)
        merged["look_contrast_failures"] = len(item.scene.look.contrast_failures)
    least = min_contrast(item)
    if least is not None:  # every look, studio too: the least object-to-surroundings contrast (scenes/look_contrast.py)
        merged["min_contrast_de"] = least
    return merged


def _with_material(difficulty: dict[str, Scalar], material: str | None) -> dict[str, Scalar]:
    return difficulty if material is None else {**difficulty, "material": material}


def material_of(item: Item, subject: Mapping[str, Any]) -> str | None:
    """The look material a question is about (`stim3d score --by material`), None in studio.

    A question naming objects (`object_id`, or `red_object_id` and `blue_object_id`)
    is about their material; any other question is about the whole scene, whose
    objects outside the scatter families share one material per finish
    (scenes/looks.py). Several distinct materials read "mixed".
    """
    look = item.scene.look
    if not isinstance(look, DrawnLook):
        return None
    named = [subject[k] for k in ("object_id", "red_object_id", "blue_object_id") if isinstance(subject.get(k), int)]
    ids = [i for i in named if any(m.id == i for m in look.objects)] or [m.id for m in look.objects]
    materials = sorted({look.of(i).material for i in ids})
    return materials[0] if len(materials) == 1 else "mixed" if materials else None


def scoring_for(answer_type: str, difficulty: dict[str, Scalar], subject: Mapping[str, Any] | None = None,
                image_size: tuple[int, int] | None = None) -> Scoring:
    """The default rule for an answer type; cell rules get the grid size when the family reports it.

    Strict click answers (ROSE) also get the permitted region their question names in its
    `subject` (`region_row_min`, ...), which the R-OK rule (`region_ok`) reads. Box answers
    get the image `width` and `height`, so that a box answered in fractions can be scored.
    """
    params: dict[str, int | float] = {}
    if answer_type == "cell":
        params["tolerance"] = 1
    if answer_type in ("cell", "cell_set", *STRICT_CLICKS):
        rows, cols = difficulty.get("rows"), difficulty.get("cols")
        if isinstance(rows, int) and isinstance(cols, int):
            params.update(rows=rows, cols=cols)
    if answer_type in STRICT_CLICKS and subject:
        params.update({k: v for k, v in subject.items() if k in (*REGION_PARAMS, "region_exclude")
                       and isinstance(v, int)})
    if answer_type == "box" and image_size:
        params.update(width=image_size[0], height=image_size[1])
    return Scoring(rule=DEFAULT_RULE[answer_type], params=params)


def options_of(answer_type: str, subject: Mapping[str, Any]) -> list[str] | None:
    """A choice question's options, which families list in `subject["options"]` as "red|blue"."""
    return str(subject.get("options", "")).split("|") if answer_type == "choice" else None


OPEN_PROTOCOL = "Answer with its name in a word or two."


def protocol_of(answer_type: str, subject: Mapping[str, Any]) -> str:
    """The answer protocol a record's prompt ends with; a choice asked openly (`subject["form"] == "open"`, AVA object
    recognition's second form) lists no options, so it asks for a name instead of "one of the options"."""
    return OPEN_PROTOCOL if answer_type == "choice" and subject.get("form") == "open" else PROTOCOL[answer_type]


def records_for(item: Item, image_path: str, image_sha256: str) -> list[Record]:
    """The records of one rendered item, one per question, in question order."""
    if item.provenance is None:
        raise ValueError(f"item {item.item_id} has no provenance: it was never rendered")
    provenance = RecordProvenance(
        stim3d_version=item.provenance.stim3d_version,
        generator_revision=item.provenance.generator_revision,
        blender_version=item.provenance.blender_version,
        library_versions=item.provenance.library_versions,
        engine=item.provenance.engine,
        samples=item.provenance.samples,
        denoise=item.provenance.denoise,
        seed=item.seed,
        seed_entropy=item.seed_entropy,
        mask_agreement=item.provenance.mask_agreement,
    )
    image = ImageRef(path=image_path, sha256=image_sha256, width=item.scene.camera.width, height=item.scene.camera.height)
    difficulty = difficulty_of(item)
    # Variants of one item share difficulty.scene_id; a sweep level names its source item.
    shared = item.difficulty.get("scene_id", item.difficulty.get("source_item_id"))
    scene_id = shared if isinstance(shared, str) else item.item_id
    question_ids = [q.question_id for q in item.questions]
    return [
        Record(
            item_id=item.item_id,
            question_id=q.question_id,
            scene_id=scene_id,
            sibling_question_ids=[other for other in question_ids if other != q.question_id],
            family=item.family,
            split=item.split,
            image=image,
            prompt=f"{q.text} {protocol_of(q.answer_type, q.subject)}",
            question=q.text,
            answer=Answer(type=q.answer_type, gold=q.gold, options=options_of(q.answer_type, q.subject)),
            scoring=scoring_for(q.answer_type, difficulty, q.subject, (image.width, image.height)),
            subject=q.subject,
            difficulty=_with_material(difficulty, material_of(item, q.subject)),
            provenance=provenance,
        )
        for q in item.questions
    ]


