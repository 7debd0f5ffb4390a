"""The `describe` question: a rubric and a golden caption written from an item's exact ground truth.

Any family gets it (a task's `questions: [default, describe]` in the config; make_item
appends it). Everything is read from the composed item, never from the family's
code, so a plug-in family gets rubrics for free:

Must-Right (gate; a correct description cannot get these wrong):
- how many objects of each shape, and of each shape-colour pair; the colours present;
- a letters item (objects with a `letter` attribute): the letter string, the dots'
  shape and colour, instead of dot counts nobody describes;
- an assembly (objects with a `part_of` attribute, e.g. AVA's toy car; a composed or mesh object): that it is
  there, instead of counts of its parts; and the side it is seen from when the item
  records one (`difficulty.view`, AVA orientation), without which one fixed
  description would pass every image of that family;
- a grid (every object has `row` and `col`, the item reports `rows` and `cols`): its size;
- two groups (objects with `group` left/right and `rotation_deg`): which one is turned;
- an odd-one-out grid (an object with a true `odd` attribute): the odd cell;
- a sign (an object whose face carries a `texture` or a `text`, AVA texture and OCR): its pattern's class or
  the exact text, without which one description would pass every sign of those families.

Easy-Wrong (scored once the gate is passed; details models miss or invent):
- every object under heavy occlusion (occlusion >= HEAVY_OCCLUSION), with its visibility;
- left/right relations between uniquely named objects (colour + shape) whose visible
  boxes are apart by at least LATERAL_MARGIN of the image width, and front/behind
  relations whose depths differ by at least DEPTH_MARGIN_M; the margin is recorded in
  the fact; the MAX_RELATIONS smallest qualifying margins of each kind are kept
  (the least obvious facts that are still unambiguous);
- how many objects are partly out of view (truncation >= OUT_OF_VIEW), when any is;
- each primitive shape that is absent (weight ABSENCE_WEIGHT: saying nothing satisfies it).

The caption states every fact in the words the reference judge reads
(scoring/judges.py); tests check that it satisfies its own rubric. Pure Python.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from stim3d.scoring.rubric import Rubric, RubricItem

from .colors import COLOR_NAMES, PALETTE, nearest_palette_color
from .meshes import kind_name
from .model import SHAPES, Item, ObjectTruth, Question, SceneObject, round6

DESCRIBE_ID = "describe"
DESCRIBE_TEXT = "Describe the scene in detail: the objects, their shapes, colours, how many there are, and where they are."
HEAVY_OCCLUSION = 0.3  # share of an object's in-frame silhouette hidden by other objects
MIN_NAMED_VISIBILITY = 0.25  # an object in a relation must be this visible to be named at all
LATERAL_MARGIN = 0.03  # left/right: gap between the visible boxes, as a share of the image width
DEPTH_MARGIN_M = 1.0  # front/behind: difference of the visible pixels' mean depth, in metres
MAX_RELATIONS = 2  # per kind (left/right, front/behind)
OUT_OF_VIEW = 0.05  # truncation from which an object counts as partly out of view
ABSENCE_WEIGHT = 0.5
PLURAL = {"sphere": "spheres", "cube": "cubes", "cone": "cones", "cylinder": "cylinders", "torus": "tori"}
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def number(n: int) -> str:
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def noun(n: int, shape: str) -> str:
    return shape if n == 1 else PLURAL.get(shape, f"{shape}s")


def _be(n: int) -> str:
    return "is" if n == 1 else "are"


def _colour_order(name: str) -> tuple[int, str]:
    return (COLOR_NAMES.index(name) if name in COLOR_NAMES else len(COLOR_NAMES), name)


def _shape_order(name: str) -> tuple[int, str]:
    return (SHAPES.index(name) if name in SHAPES else len(SHAPES), name)


def colour_name(obj: SceneObject) -> str:
    """The palette name a viewer would use: the colour's own name, or the nearest palette colour (CIEDE2000)
    for a colour outside the palette (an odd-one-out's shifted colour is still "green")."""
    return obj.color.name if obj.color.name in PALETTE else nearest_palette_color(obj.color.srgb)


def _name(obj: SceneObject) -> str:
    return f"{colour_name(obj)} {obj.shape}"


def _key(obj: SceneObject) -> str:
    return f"{colour_name(obj)}_{obj.shape}"


# -- Must-Right ------------------------------------------------------------------------------------

def _counts(objects: list[SceneObject]) -> tuple[list[RubricItem], str]:
    shapes = Counter(o.shape for o in objects)
    pairs = Counter((o.shape, colour_name(o)) for o in objects)
    items = [RubricItem(id=f"count.{s}", statement=f"There {_be(n)} {number(n)} {noun(n, s)}.", type="count",
                        fact={"shape": s, "count": n})
             for s, n in sorted(shapes.items(), key=lambda kv: _shape_order(kv[0]))]
    ordered_pairs = sorted(pairs.items(), key=lambda kv: (_shape_order(kv[0][0]), _colour_order(kv[0][1])))
    items += [RubricItem(id=f"count.{c}_{s}", statement=f"There {_be(n)} {number(n)} {c} {noun(n, s)}.", type="count",
                         fact={"shape": s, "color": c, "count": n})
              for (s, c), n in ordered_pairs]
    items += [RubricItem(id=f"colour.{c}", statement=f"Something in the scene is {c}.", type="colour",
                         fact={"color": c, "present": True})
              for c in sorted({colour_name(o) for o in objects}, key=_colour_order)]
    phrases = [f"{number(n)} {c} {noun(n, s)}" for (s, c), n in ordered_pairs]
    listed = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    total = len(objects)
    return items, f"The scene shows {number(total)} {'object' if total == 1 else 'objects'}: {listed}."


def _letters(dots: list[SceneObject]) -> tuple[list[RubricItem], str]:
    by_index = {int(o.attributes.get("letter_index", 0)): str(o.attributes["letter"]) for o in dots}
    text = "".join(by_index[i] for i in sorted(by_index))
    shapes = sorted({o.shape for o in dots}, key=_shape_order)
    colours = sorted({colour_name(o) for o in dots}, key=_colour_order)
    kind = "digits" if text.isdigit() else "letters" if text.isalpha() else "characters"
    items = [RubricItem(id="letters", statement=f"The dots spell {text}.", type="attribute",
                        fact={"attribute": "letters", "value": text})]
    items += [RubricItem(id=f"shape.{s}", statement=f"The dots are {PLURAL.get(s, s + 's')}.", type="presence",
                         fact={"shape": s, "present": True}) for s in shapes]
    items += [RubricItem(id=f"colour.{c}", statement=f"The dots are {c}.", type="colour",
                         fact={"color": c, "present": True}) for c in colours]
    dots_text = " and ".join(f"{c}" for c in colours) + " " + " and ".join(PLURAL.get(s, s + "s") for s in shapes)
    return items, f"{dots_text[0].upper()}{dots_text[1:]}, set out as dots, spell the {kind} {text}."


def _kind(obj: SceneObject) -> str:
    """What a viewer calls a thing that is not one primitive: an assembly's `part_of`, a composed object's library
    name, a mesh file's stem (scenes/meshes.py)."""
    if "part_of" in obj.attributes:
        return str(obj.attributes["part_of"])
    return kind_name(obj)


def _assemblies(parts: list[SceneObject]) -> tuple[list[RubricItem], str]:
    """Things that are not one primitive (a `part_of` attribute, e.g. a toy car; a composed library object; a mesh
    file): described as the thing, not its parts."""
    kinds = sorted({_kind(o) for o in parts})
    items = [RubricItem(id=f"object.{k}", statement=f"There is a {k.replace('_', ' ')}.", type="presence",
                        fact={"object": k.replace("_", " "), "present": True}) for k in kinds]
    sourced = sorted((o for o in parts if o.source is not None), key=lambda o: o.id)
    if not sourced:  # assemblies of primitives (the toy car): their parts' colours are not the thing's
        listed = " and ".join(f"a {k.replace('_', ' ')}" for k in kinds)
        return items, f"The scene shows {listed}, built from simple shapes."
    colours = sorted({colour_name(o) for o in sourced}, key=_colour_order)
    items += [RubricItem(id=f"object_colour.{c}", statement=f"Something in the scene is {c}.", type="colour",
                         fact={"color": c, "present": True}) for c in colours]
    phrases = [f"a {colour_name(o)} {_kind(o).replace('_', ' ')}" for o in sourced]
    phrases += [f"a {k.replace('_', ' ')}" for k in sorted({_kind(o) for o in parts if o.source is None})]
    listed = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return items, f"The scene shows {listed}."


def _view(item: Item, parts: list[SceneObject]) -> tuple[list[RubricItem], str]:
    """The side an assembly is seen from (`difficulty.view`: front, back left, top, ...), when the item has one."""
    view = item.difficulty.get("view")
    kinds = sorted({_kind(o).replace("_", " ") for o in parts})
    if not isinstance(view, str) or len(kinds) != 1:
        return [], ""
    sentence = f"The {kinds[0]} is seen from the {view}."
    return [RubricItem(id="view", statement=sentence, type="attribute",
                       fact={"attribute": "view", "object": kinds[0], "value": view})], sentence


def _signs(item: Item) -> tuple[list[RubricItem], list[str]]:
    """What a sign's face shows (scenes/surfaces.py): the texture class or the text, read from its attributes."""
    items, sentences = [], []
    for obj in item.scene.objects:
        if "texture" in obj.attributes:
            texture = str(obj.attributes["texture"])
            sentence = f"A sign shows a {texture} pattern."
            items.append(RubricItem(id=f"sign_texture.{obj.id}", statement=sentence, type="attribute",
                                    fact={"attribute": "texture", "value": texture}))
        elif "text" in obj.attributes:
            text = str(obj.attributes["text"])
            sentence = f'A sign reads "{text}".'
            items.append(RubricItem(id=f"sign_text.{obj.id}", statement=sentence, type="attribute",
                                    fact={"attribute": "text", "value": text}))
        else:
            continue
        sentences.append(sentence)
    return items, sentences


def _grid(item: Item, objects: list[SceneObject]) -> tuple[list[RubricItem], str]:
    rows = item.difficulty.get("rows", item.params.get("rows"))
    cols = item.difficulty.get("cols", item.params.get("cols"))
    if not isinstance(rows, int) or not isinstance(cols, int) or isinstance(rows, bool):
        return [], ""
    if not all("row" in o.attributes and "col" in o.attributes for o in objects):
        return [], ""
    fact = {"attribute": "grid", "rows": rows, "cols": cols}
    sentence = f"They stand in a grid of {number(rows)} rows and {number(cols)} columns."
    return [RubricItem(id="grid", statement=sentence, type="attribute", fact=fact)], sentence


def _groups(objects: list[SceneObject]) -> tuple[list[RubricItem], str]:
    right = [o for o in objects if o.attributes.get("group") == "right" and "rotation_deg" in o.attributes]
    if not right or not any(o.attributes.get("group") == "left" for o in objects):
        return [], ""
    turned = "right" if any(float(o.attributes["rotation_deg"]) != 0.0 for o in right) else "none"
    if turned == "right":
        sentence = "They form two groups, one on the left and one on the right; the right group is turned relative to the left group."
    else:
        sentence = "They form two groups, one on the left and one on the right; both groups have the same orientations."
    item = RubricItem(id="turned_group", statement=sentence.split("; ")[1].capitalize(), type="attribute",
                      fact={"attribute": "turned_group", "value": turned})
    return [item], sentence


def _odd(objects: list[SceneObject]) -> tuple[list[RubricItem], str]:
    odd = [o for o in objects if o.attributes.get("odd") is True and "row" in o.attributes and "col" in o.attributes]
    if len(odd) != 1:
        return [], ""
    row, col = int(odd[0].attributes["row"]), int(odd[0].attributes["col"])
    sentence = f"The odd one out is at row {row}, column {col}."
    return [RubricItem(id="odd_cell", statement=sentence, type="attribute",
                       fact={"attribute": "odd_cell", "row": row, "col": col})], sentence


# -- Easy-Wrong ------------------------------------------------------------------------------------

def _occluded(named: dict[str, SceneObject], truths: dict[int, ObjectTruth]) -> tuple[list[RubricItem], list[str]]:
    items, sentences = [], []
    for key, obj in named.items():
        truth = truths[obj.id]
        if truth.visible_px > 0 and truth.occlusion >= HEAVY_OCCLUSION:
            percent = round(100 * truth.visibility)
            sentence = f"The {_name(obj)} is partly hidden (about {percent} % visible)."
            items.append(RubricItem(id=f"occluded.{key}", statement=sentence, type="attribute",
                                    fact={"attribute": "occluded", "object_id": obj.id, "shape": obj.shape,
                                          "color": colour_name(obj), "visibility": truth.visibility,
                                          "occlusion": truth.occlusion}))
            sentences.append(sentence)
    return items, sentences


def lateral_gap(a: ObjectTruth, b: ObjectTruth) -> float | None:
    """Pixels between a's visible box and b's when a lies wholly left of b (None when the boxes overlap in x)."""
    if a.bbox_visible is None or b.bbox_visible is None:
        return None
    gap = b.bbox_visible[0] - a.bbox_visible[2]
    return float(gap) if gap >= 0 else None


def _relations(named: dict[str, SceneObject], truths: dict[int, ObjectTruth], width: int) -> tuple[list[RubricItem], list[str]]:
    seen = [o for o in named.values() if truths[o.id].visibility >= MIN_NAMED_VISIBILITY]
    lateral, depth = [], []
    for a, b in combinations(sorted(seen, key=lambda o: o.id), 2):
        for left, right in ((a, b), (b, a)):
            gap = lateral_gap(truths[left.id], truths[right.id])
            if gap is not None and gap >= LATERAL_MARGIN * width:
                lateral.append((gap / width, left, right))
        da, db = truths[a.id].depth_centroid, truths[b.id].depth_centroid
        if da is not None and db is not None and abs(da - db) >= DEPTH_MARGIN_M:
            near, far = (a, b) if da < db else (b, a)
            depth.append((abs(da - db), near, far))
    items, sentences = [], []
    for kind, found, unit, phrase in (("left_of", lateral, "image_width", "to the left of"),
                                      ("in_front_of", depth, "m", "in front of")):
        for margin, x, y in sorted(found, key=lambda t: (t[0], t[1].id, t[2].id))[:MAX_RELATIONS]:
            sentence = f"The {_name(x)} is {phrase} the {_name(y)}."
            items.append(RubricItem(
                id=f"{kind}.{_key(x)}.{_key(y)}", statement=sentence, type="relation",
                fact={"relation": kind, "subject_id": x.id, "subject_shape": x.shape, "subject_color": colour_name(x),
                      "object_id": y.id, "object_shape": y.shape, "object_color": colour_name(y),
                      "margin": round6(margin), "margin_unit": unit}))
            sentences.append(sentence)
    return items, sentences


def _out_of_view(objects: list[SceneObject], truths: dict[int, ObjectTruth]) -> tuple[list[RubricItem], list[str]]:
    cut = [o for o in objects if truths[o.id].visible_px > 0 and truths[o.id].truncation >= OUT_OF_VIEW]
    if not cut:
        return [], []
    n = len(cut)
    sentence = f"{number(n).capitalize()} {'object is' if n == 1 else 'objects are'} partly out of view."
    return [RubricItem(id="out_of_view", statement=sentence, type="count",
                       fact={"state": "out_of_view", "count": n, "min_truncation": OUT_OF_VIEW})], [sentence]


def _absent(objects: list[SceneObject]) -> tuple[list[RubricItem], list[str]]:
    named = {word for o in objects if o.source is not None for word in _kind(o).split("_")}  # a traffic cone: a cone
    missing = [s for s in SHAPES if s not in {o.shape for o in objects} and s not in named]
    items = [RubricItem(id=f"absent.{s}", statement=f"There is no {s}.", type="absence",
                        fact={"shape": s, "present": False}, weight=ABSENCE_WEIGHT) for s in missing]
    if not missing:
        return items, []
    phrases = [f"no {s}" for s in missing]
    listed = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return items, [f"There is {listed}."]


# -- the rubric --------------------------------------------------------------------------------------

def build_rubric(item: Item) -> Rubric:
    """The rubric and golden caption of an item, from its scene and measured ground truth only."""
    objects = [o for o in item.scene.objects if o.countable]
    truths = {t.id: t for t in item.ground_truth.objects}
    parts = [o for o in objects if "part_of" in o.attributes or o.source is not None]
    dots = [o for o in objects if "letter" in o.attributes and o not in parts]
    rest = [o for o in objects if "letter" not in o.attributes and o not in parts]
    must, caption = [], []
    for group, describe in ((parts, _assemblies), (dots, _letters)):
        if group:
            found, sentence = describe(group)
            must += found
            caption.append(sentence)
    if parts:
        found, sentence = _view(item, parts)
        must += found
        caption += [sentence] if sentence else []
    found, sentences = _signs(item)
    must += found
    caption += sentences
    if rest:
        found, sentence = _counts(rest)
        must += found
        caption.append(sentence)
        for part in (_grid(item, rest), _groups(rest), _odd(rest)):
            must += part[0]
            caption += [part[1]] if part[1] else []
    pairs = Counter(_key(o) for o in objects)
    named = {_key(o): o for o in sorted(rest, key=lambda o: o.id) if pairs[_key(o)] == 1}
    easy = []
    for found, sentences in (_occluded(named, truths), _relations(named, truths, item.scene.camera.width),
                             _out_of_view(objects, truths), _absent(objects)):
        easy += found
        caption += sentences
    return Rubric(must_right=must, easy_wrong=easy, caption=" ".join(caption))


def describe_question(item: Item) -> Question:
    """The `describe` question of an item (its id is prefixed with the item id by make_item)."""
    return Question(question_id=DESCRIBE_ID, text=DESCRIBE_TEXT, answer_type="rubric", gold=build_rubric(item),
                    subject={"kind": "describe"})
