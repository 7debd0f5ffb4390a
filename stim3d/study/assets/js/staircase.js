/* stim3d study: the QUEST-style staircase of stim3d/eval/adaptive.py, the same maths in plain JavaScript.
 *
 * p(correct | x, t) = g + (1 - g - l) * F(s * (x - t)), F logistic; a posterior over t on GRID_POINTS
 * evenly spaced values spanning the levels; next level = the level nearest the posterior mean, a tie or
 * near-tie (distances within TIE_TOLERANCE times the level range) going to the lower level, so that a mean
 * at a midpoint picks the same level here and in Python whatever the CPU (their means may differ in the
 * last bits); estimate = posterior mean, SD, central 95 % credible interval on the grid, trials used.
 * tests/test_study_staircase.py runs this file in node and holds it to the Python class: the same levels,
 * the estimate to 1e-9.
 *
 *   const sc = Stim3dStaircase.create(manifest.spec);
 *   const level = sc.next(); ...; sc.update(level, response === trial.gold_text); sc.estimate();
 *   Stim3dStaircase.pickTrial(manifest, seed, participant, step, level) -> the trial id to show
 */
((root) => {
  "use strict";

  const { fnv1a32 } = typeof module !== "undefined" && module.exports ? require("./hash.js") : root.Stim3dHash;
  const GRID_POINTS = 401;
  const EPS = 1e-12;
  const CREDIBLE = 0.95;
  const TIE_TOLERANCE = 1e-9;  // relative to the level range (stim3d/eval/adaptive.py TIE_TOLERANCE)

  const logistic = (z) => {
    if (z >= 0) return 1 / (1 + Math.exp(-z));
    const ez = Math.exp(z);
    return ez / (1 + ez);
  };

  /* The level of ascending `levels` nearest `mean`; a tie or near-tie goes to the lower (adaptive.py nearest_level). */
  const nearestLevel = (levels, mean) => {
    const tolerance = TIE_TOLERANCE * (levels[levels.length - 1] - levels[0]);
    let best = 0;
    for (let i = 1; i < levels.length; i += 1) {
      if (Math.abs(levels[i] - mean) < Math.abs(levels[best] - mean) - tolerance) best = i;
    }
    return levels[best];
  };

  const check = (spec) => {
    if (!spec || !Array.isArray(spec.levels) || spec.levels.length < 2) {
      throw new Error("staircase spec: give at least two levels");
    }
    const levels = spec.levels.map(Number).sort((a, b) => a - b);
    levels.forEach((level, i) => {
      if (!Number.isFinite(level)) throw new Error("staircase spec: levels must be finite numbers");
      if (i > 0 && level === levels[i - 1]) throw new Error("staircase spec: a level is given twice");
    });
    const given = (key, fallback) => (spec[key] === undefined ? fallback : spec[key]);
    const out = {
      levels,
      guess: Number(given("guess", 0.05)),
      lapse: Number(given("lapse", 0.02)),
      slope: Number(given("slope", 20)),
      trials: Number(given("trials", 30)),
      prior: given("prior", "uniform"),
    };
    if (!(out.guess >= 0 && out.lapse >= 0 && out.guess + out.lapse < 1 && out.slope > 0)) {
      throw new Error("staircase spec: need guess >= 0, lapse >= 0, guess + lapse < 1, slope > 0");
    }
    if (out.prior !== "uniform" && out.prior !== "normal") throw new Error("staircase spec: prior is uniform or normal");
    return out;
  };

  const create = (rawSpec) => {
    const spec = check(rawSpec);
    const lo = spec.levels[0];
    const hi = spec.levels[spec.levels.length - 1];
    const step = (hi - lo) / (GRID_POINTS - 1);
    const mid = (lo + hi) / 2;
    const half = (hi - lo) / 2;
    const grid = Array.from({ length: GRID_POINTS }, (_, i) => (i === GRID_POINTS - 1 ? hi : lo + i * step));
    const logPost = grid.map((t) => {
      const z = (t - mid) / half;
      return spec.prior === "normal" ? -0.5 * (z * z) : 0;
    });
    const history = [];

    const posterior = () => {
      const max = Math.max(...logPost);
      const w = logPost.map((value) => Math.exp(value - max));
      let total = 0;
      for (const value of w) total += value;
      return w.map((value) => value / total);
    };

    const mean = (w) => {
      let m = 0;
      for (let i = 0; i < GRID_POINTS; i += 1) m += grid[i] * w[i];
      return m;
    };

    return {
      spec,
      grid,
      history,
      done: () => history.length >= spec.trials,
      next: () => nearestLevel(spec.levels, mean(posterior())),
      update: (level, correct) => {
        if (!spec.levels.includes(level)) throw new Error(`level ${level} is not one of the staircase's levels`);
        const span = 1 - spec.guess - spec.lapse;
        for (let i = 0; i < GRID_POINTS; i += 1) {
          const p = Math.min(Math.max(spec.guess + span * logistic(spec.slope * (level - grid[i])), EPS), 1 - EPS);
          logPost[i] += correct ? Math.log(p) : Math.log(1 - p);
        }
        history.push([level, !!correct]);
      },
      estimate: () => {
        const w = posterior();
        const m = mean(w);
        let v = 0;
        for (let i = 0; i < GRID_POINTS; i += 1) v += (grid[i] - m) * (grid[i] - m) * w[i];
        const tail = (1 - CREDIBLE) / 2;
        let low = GRID_POINTS - 1;
        let high = GRID_POINTS - 1;
        let cdf = 0;
        let gotLow = false;
        for (let j = 0; j < GRID_POINTS; j += 1) {
          cdf += w[j];
          if (!gotLow && cdf >= tail) { low = j; gotLow = true; }
          if (cdf >= 1 - tail) { high = j; break; }
        }
        return { threshold: m, sd: Math.sqrt(Math.max(0, v)), ci: [grid[low], grid[high]], trials: history.length };
      },
    };
  };

  /* The trial shown at `step` (from 0) for `level`: fnv1a32(seed|participant|step|key) among the level's trials. */
  const pickTrial = (manifest, seed, participant, step, level) => {
    const index = manifest.levels.indexOf(level);
    if (index < 0) throw new Error(`level ${level} is not in the staircase manifest`);
    const ids = manifest.trial_ids[index];
    return ids[fnv1a32(`${seed}|${participant}|${step}|${manifest.keys[index]}`) % ids.length];
  };

  const api = { create, pickTrial, nearestLevel, fnv1a32, GRID_POINTS, TIE_TOLERANCE };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  if (root) root.Stim3dStaircase = api;
})(typeof window !== "undefined" ? window : null);
