/* Each participant's plan: the same trial ids, in the same order, as stim3d/study/contract.py participant_plan.
 *
 * participantPlan ranks main trials by the hash (hash.js fnv1a32) of "seed|participant|select|trial_id" (ties by
 * id), keeps the first perParticipant, orders them by the hash of "seed|participant|order|trial_id", then puts the
 * k-th catch trial (from 0) at (2(k+1)n + c + 1) // (2(c + 1)) among the n main trials, and the practice trials
 * first. Integer arithmetic only, so Python and JavaScript agree (tests/test_study_build.py runs this file in node
 * against participant_plan).
 */
((root) => {
  "use strict";

  const { fnv1a32 } = typeof module !== "undefined" && module.exports ? require("./hash.js") : root.Stim3dHash;

  const compareRank = (a, b) => {
    if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;  // trial ids are ASCII (check_name): code units = code points
  };

  const participantPlan = (trials, seed, participant, perParticipant) => {
    const rank = (purpose, id) => [fnv1a32(`${seed}|${participant}|${purpose}|${id}`), id];
    const sortBy = (ids, purpose) => ids
      .map((id) => ({ id, key: rank(purpose, id) }))
      .sort((a, b) => compareRank(a.key, b.key))
      .map((entry) => entry.id);
    const main = trials.filter((t) => t.role === "main").map((t) => t.trial_id);
    let chosen = sortBy(main, "select");
    if (perParticipant !== null && perParticipant !== undefined) chosen = chosen.slice(0, perParticipant);
    const ordered = sortBy(chosen, "order");
    const catches = trials.filter((t) => t.role === "catch").map((t) => t.trial_id);
    const slots = catches.length + 1;
    for (let k = catches.length - 1; k >= 0; k -= 1) {
      const at = Math.floor((2 * (k + 1) * chosen.length + slots) / (2 * slots));
      ordered.splice(at, 0, catches[k]);
    }
    const practice = trials.filter((t) => t.role === "practice").map((t) => t.trial_id);
    return practice.concat(ordered);
  };

  const api = { fnv1a32, participantPlan };
  root.Stim3dPlan = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
