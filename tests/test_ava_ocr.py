"""AVA-3D text (OCR), composition and scoring (no rendering): determinism, the gold on the marked sign,
every character whole in an independent ray cast, the recorded cap height in pixels, and ANLS on
hand-counted cases. The rendered side is in tests/test_ava_ocr_render.py.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from stim3d.scenes.families.ava.ava_ocr import RANDOM_ALPHABET, WORDS, AvaOcrParams, character_samples
from stim3d.scenes.families.ava.ava_sign import face_points_px
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.surfaces import font_metrics, text_boxes
from stim3d.scenes.visibility import measure
from stim3d.scoring.answers import answer_text, canonical_gold, parse
from stim3d.scoring.records import Answer
from stim3d.scoring.rules import applicable_rules, apply, levenshtein

FRAME = Frame(320, 240)


def items(n: int, seed: int = 6, **params):
    return [make_item("ava_ocr", params, [seed, 0, i], f"ava_ocr-{i}", FRAME) for i in range(n)]


def sign_of(item):
    (sign,) = [o for o in item.scene.objects if o.attributes.get("marker") == "red"]
    return sign


def test_composition_is_deterministic():
    (a,), (b,) = items(1, seed=12), items(1, seed=12)
    assert a.to_json() == b.to_json()


def test_gold_is_the_marked_sign_s_text_words_and_random_strings_both_drawn():
    kinds = Counter()
    for item in items(12):
        question, sign = item.questions[0], sign_of(item)
        assert question.answer_type == "text" and question.gold == sign.attributes["text"]
        text, kind = question.gold, item.difficulty["text_kind"]
        kinds[kind] += 1
        assert text in WORDS if kind == "word" else set(text) <= set(RANDOM_ALPHABET)
        assert item.difficulty["n_chars"] == len(text)
    assert kinds["word"] >= 3 and kinds["random"] >= 3


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_every_character_is_whole_in_an_independent_ray_cast_and_tall_enough(share):
    occluded = 0
    for item in items(8, occluder_share=share):
        occluded += item.difficulty["occlusion"] > 0.01
        sign, camera = sign_of(item), item.scene.camera
        text, height = sign.attributes["text"], sign.attributes["text_height_m"]
        ids = measure(item.scene).instance_map
        samples = character_samples(text, height)
        px = face_points_px(sign, camera, samples[..., 0], samples[..., 1])
        assert (ids[np.floor(px[..., 1]).astype(int), np.floor(px[..., 0]).astype(int)] == sign.id).all()
        boxes = text_boxes(text, height)
        assert boxes[:, 0].min() >= -0.5 * sign.size and boxes[:, 2].max() <= 0.5 * sign.size  # on the face
        top = face_points_px(sign, camera, np.zeros(1), np.array([height / 2]))[0]
        bottom = face_points_px(sign, camera, np.zeros(1), np.array([-height / 2]))[0]
        assert item.difficulty["char_height_px"] <= np.linalg.norm(top - bottom) + 1e-6
        assert item.difficulty["char_height_px"] >= 0.012 * FRAME.width
    assert occluded >= (3 if share == 1.0 else 0)  # an occluder hides part of the sign, never a character


def test_character_boxes_tile_the_line_at_the_font_s_advance():
    advance, cap, top, bottom = font_metrics()
    assert 0.55 < advance < 0.65 and 0.7 < cap < 0.75  # DejaVu Sans Mono Bold's proportions
    boxes = text_boxes("AB7", 0.2)
    widths = boxes[:, 2] - boxes[:, 0]
    assert np.allclose(widths, advance / cap * 0.2) and np.allclose(boxes[1:, 0], boxes[:-1, 2])
    assert boxes[0, 0] == pytest.approx(-boxes[-1, 2])  # centred


def test_bad_parameters_are_one_line_errors():
    with pytest.raises(ValueError, match="length must be"):
        AvaOcrParams(length=(5, 2))
    with pytest.raises(ValueError, match="fill and contrast"):
        AvaOcrParams(fill=(0.5, 1.5))


# -- scoring: ANLS and exact, counted by hand -----------------------------------------------------------

@pytest.mark.parametrize("pred, gold, distance, expected", [
    ("APPLE", "APPLE", 0, 1.0),
    ("apple", "APPLE", 0, 1.0),               # case ignored
    ("APPLY", "APPLE", 1, 1 - 1 / 5),         # one substitution over 5
    ("ZEBRAS", "ZEBRA", 1, 1 - 1 / 6),        # one insertion; the longer string has 6
    ("KTXA", "K7XA", 1, 0.75),
    ("K7", "K7XA", 2, 0.0),                   # 2 / 4 = 0.5: at the threshold, 0
    ("HOSTEL", "HOTEL", 1, 1 - 1 / 6),
    ("XYZ", "ABC", 3, 0.0),
    ("KITTEN", "SITTING", 3, 1 - 3 / 7),      # 3 / 7 = 0.43 < 0.5: 0.571
])
def test_anls_on_hand_counted_cases(pred, gold, distance, expected):
    assert levenshtein(pred.lower(), gold.lower()) == distance
    assert apply("anls", pred, gold, {}) == pytest.approx(expected)
    assert apply("exact", pred, gold, {}) == float(pred.lower() == gold.lower())


def test_text_answers_are_scored_by_anls_and_exact_and_an_unparsed_answer_gets_zero():
    assert applicable_rules("text", {}) == ["exact", "anls"]
    assert apply("anls", None, "APPLE", {}) == 0.0
    with pytest.raises(ValueError):
        Answer(type="text", gold="  ")
    answer = Answer(type="text", gold="K7XA")
    assert parse("text", answer_text("text", answer.gold)).value == canonical_gold("text", answer.gold)


@pytest.mark.parametrize("response, read", [
    ("APPLE", "APPLE"),
    ("The sign says \"GARDEN\".", "GARDEN"),
    ("It reads: HF3", "HF3"),
    ("\\boxed{T87H}", "T87H"),
    ("Answer: mouse.", "mouse"),
    ("I think the text is written in blue.\nSUMMER", "SUMMER"),
    ("  two   words  ", "two words"),
])
def test_the_text_parser_reads_the_answer_span(response, read):
    assert parse("text", response).value == read


def test_an_empty_text_answer_is_invalid():
    assert not parse("text", '""').valid and not parse("text", "   ").valid


def test_a_text_record_says_1_6_and_other_records_keep_1_5():
    from stim3d.render.batch.records import records_for
    from stim3d.scenes.model import Provenance

    provenance = Provenance(stim3d_version="test", engine="raster", samples=1, device="cpu", denoise=False)
    (text_item,) = items(1)
    other = make_item("ava_color", {}, [1, 0, 0], "ava_color-0", FRAME)
    (record,) = records_for(text_item.model_copy(update={"provenance": provenance}), "items/x/image.png", "0" * 64)
    assert record.schema_version == "1.6" and record.scoring.rule == "anls"
    (kept,) = records_for(other.model_copy(update={"provenance": provenance}), "items/x/image.png", "0" * 64)
    assert kept.schema_version == "1.5"
