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
(function (root) {
  "use strict";

  var GRID_POINTS = 401;
  var EPS = 1e-12;
  var CREDIBLE = 0.95;
  var TIE_TOLERANCE = 1e-9;  // relative to the level range (stim3d/eval/adaptive.py TIE_TOLERANCE)

  function logistic(z) {
    if (z >= 0) return 1 / (1 + Math.exp(-z));
    var ez = Math.exp(z);
    return ez / (1 + ez);
  }

  // The level of ascending `levels` nearest `mean`; a tie or near-tie goes to the lower (adaptive.py nearest_level).
  function nearestLevel(levels, mean) {
    var tolerance = TIE_TOLERANCE * (levels[levels.length - 1] - levels[0]);
    var best = 0;
    for (var i = 1; i < levels.length; i++) {
      if (Math.abs(levels[i] - mean) < Math.abs(levels[best] - mean) - tolerance) best = i;
    }
    return levels[best];
  }

  function check(spec) {
    if (!spec || !Array.isArray(spec.levels) || spec.levels.length < 2) {
      throw new Error("staircase spec: give at least two levels");
    }
    var levels = spec.levels.map(Number).slice().sort(function (a, b) { return a - b; });
    for (var i = 0; i < levels.length; i++) {
      if (!isFinite(levels[i])) throw new Error("staircase spec: levels must be finite numbers");
      if (i > 0 && levels[i] === levels[i - 1]) throw new Error("staircase spec: a level is given twice");
    }
    var out = {
      levels: levels,
      guess: spec.guess === undefined ? 0.05 : Number(spec.guess),
      lapse: spec.lapse === undefined ? 0.02 : Number(spec.lapse),
      slope: spec.slope === undefined ? 20 : Number(spec.slope),
      trials: spec.trials === undefined ? 30 : Number(spec.trials),
      prior: spec.prior === undefined ? "uniform" : spec.prior,
    };
    if (!(out.guess >= 0 && out.lapse >= 0 && out.guess + out.lapse < 1 && out.slope > 0)) {
      throw new Error("staircase spec: need guess >= 0, lapse >= 0, guess + lapse < 1, slope > 0");
    }
    if (out.prior !== "uniform" && out.prior !== "normal") throw new Error("staircase spec: prior is uniform or normal");
    return out;
  }

  function create(rawSpec) {
    var spec = check(rawSpec);
    var lo = spec.levels[0];
    var hi = spec.levels[spec.levels.length - 1];
    var step = (hi - lo) / (GRID_POINTS - 1);
    var grid = new Array(GRID_POINTS);
    var logPost = new Array(GRID_POINTS);
    var mid = (lo + hi) / 2;
    var half = (hi - lo) / 2;
    for (var i = 0; i < GRID_POINTS; i++) {
      grid[i] = lo + i * step;
      if (i === GRID_POINTS - 1) grid[i] = hi;
      var z = (grid[i] - mid) / half;
      logPost[i] = spec.prior === "normal" ? -0.5 * (z * z) : 0;
    }
    var history = [];

    function posterior() {
      var max = -Infinity;
      for (var i = 0; i < GRID_POINTS; i++) if (logPost[i] > max) max = logPost[i];
      var w = new Array(GRID_POINTS);
      var total = 0;
      for (var j = 0; j < GRID_POINTS; j++) { w[j] = Math.exp(logPost[j] - max); total += w[j]; }
      for (var k = 0; k < GRID_POINTS; k++) w[k] = w[k] / total;
      return w;
    }

    function mean(w) {
      var m = 0;
      for (var i = 0; i < GRID_POINTS; i++) m += grid[i] * w[i];
      return m;
    }

    return {
      spec: spec,
      grid: grid,
      history: history,
      done: function () { return history.length >= spec.trials; },
      next: function () { return nearestLevel(spec.levels, mean(posterior())); },
      update: function (level, correct) {
        if (spec.levels.indexOf(level) < 0) throw new Error("level " + level + " is not one of the staircase's levels");
        var span = 1 - spec.guess - spec.lapse;
        for (var i = 0; i < GRID_POINTS; i++) {
          var p = spec.guess + span * logistic(spec.slope * (level - grid[i]));
          p = Math.min(Math.max(p, EPS), 1 - EPS);
          logPost[i] += correct ? Math.log(p) : Math.log(1 - p);
        }
        history.push([level, !!correct]);
      },
      estimate: function () {
        var w = posterior();
        var m = mean(w);
        var v = 0;
        for (var i = 0; i < GRID_POINTS; i++) v += (grid[i] - m) * (grid[i] - m) * w[i];
        var tail = (1 - CREDIBLE) / 2;
        var lo = GRID_POINTS - 1, hiIndex = GRID_POINTS - 1, cdf = 0, gotLo = false;
        for (var j = 0; j < GRID_POINTS; j++) {
          cdf += w[j];
          if (!gotLo && cdf >= tail) { lo = j; gotLo = true; }
          if (cdf >= 1 - tail) { hiIndex = j; break; }
        }
        return { threshold: m, sd: Math.sqrt(Math.max(0, v)), ci: [grid[lo], grid[hiIndex]], trials: history.length };
      },
    };
  }

  function fnv1a32(text) {
    var bytes = new TextEncoder().encode(text);
    var value = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) {
      value = Math.imul(value ^ bytes[i], 0x01000193) >>> 0;
    }
    return value >>> 0;
  }

  // The trial shown at `step` (from 0) for `level`: fnv1a32(seed|participant|step|key) among the level's trials.
  function pickTrial(manifest, seed, participant, step, level) {
    var index = manifest.levels.indexOf(level);
    if (index < 0) throw new Error("level " + level + " is not in the staircase manifest");
    var ids = manifest.trial_ids[index];
    return ids[fnv1a32(seed + "|" + participant + "|" + step + "|" + manifest.keys[index]) % ids.length];
  }

  var api = { create: create, pickTrial: pickTrial, nearestLevel: nearestLevel, fnv1a32: fnv1a32,
              GRID_POINTS: GRID_POINTS, TIE_TOLERANCE: TIE_TOLERANCE };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  if (root) root.Stim3dStaircase = api;
})(typeof window !== "undefined" ? window : null);
