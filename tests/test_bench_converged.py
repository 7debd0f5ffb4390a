"""The quality bar's estimates against the converged image (bench/render_quality.py): a benchmark reader relies on
them to say whether a render meets PSNR >= 38 dB and SSIM >= 0.99 when the reference is itself a Monte Carlo render.

A synthetic truth with edges, a sine pattern and flat areas; references are the truth plus independent noise, as
Cycles renders with other seeds are; the candidate is the truth plus a smaller error of its own."""

from __future__ import annotations

import numpy as np

from bench.looks_settings import by_reference_size, to_uint8
from bench.render_quality import psnr, psnr_converged, ssim, ssim_converged


def truth() -> np.ndarray:
    yy, xx = np.mgrid[0:120, 0:160]
    return np.stack([100 + 60 * np.sin(xx / 9) * (yy > 60), 120 + 0 * xx, 90 + 40 * (xx > 80)], -1).astype(float)


def renders(truth_image: np.ndarray, sd: float, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [to_uint8(truth_image + rng.normal(0.0, sd, truth_image.shape)).astype(float) for _ in range(count)]


def test_the_estimates_find_the_candidates_own_error_where_the_plain_figures_find_the_references():
    exact = truth()
    candidate = to_uint8(exact + np.random.default_rng(1).normal(0.0, 1.0, exact.shape))
    true_psnr, true_ssim = psnr(candidate, to_uint8(exact)), ssim(candidate, to_uint8(exact))
    a, b = renders(exact, 3.0, 2, seed=2)
    mean, noise = (a + b) / 2, (a - b) / 2
    assert psnr(candidate, to_uint8(mean)) < true_psnr - 5  # the plain figure measures the reference's noise
    assert abs(psnr_converged(candidate, mean, noise) - true_psnr) < 0.5
    assert ssim(candidate, to_uint8(mean)) < true_ssim - 0.02
    estimate = ssim_converged(candidate, mean, noise)
    assert true_ssim - 0.01 < estimate <= true_ssim + 0.001  # close, and never above the truth: a passing estimate passes


def test_the_estimates_stay_put_while_the_reference_converges_and_the_plain_figures_climb():
    exact = truth()
    candidate = to_uint8(exact + np.random.default_rng(3).normal(0.0, 1.0, exact.shape))
    rows = by_reference_size(candidate, renders(exact, 3.0, 8, seed=4), chunk=512)
    assert [r["reference_samples"] for r in rows] == [1024, 2048, 4096]
    assert rows[0]["psnr"] < rows[1]["psnr"] < rows[2]["psnr"]
    assert rows[0]["ssim"] < rows[1]["ssim"] < rows[2]["ssim"]
    assert max(r["psnr_converged"] for r in rows) - min(r["psnr_converged"] for r in rows) < 0.5
    assert max(r["ssim_converged"] for r in rows) - min(r["ssim_converged"] for r in rows) < 0.006


def test_a_candidate_equal_to_the_truth_is_reported_at_the_top_not_as_an_error():
    exact = truth()
    a, b = renders(exact, 2.0, 2, seed=5)
    assert psnr_converged(to_uint8(exact), (a + b) / 2, (a - b) / 2) > 50
