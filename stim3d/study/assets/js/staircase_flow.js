/* The staircase part of a sweep study (stim3d study build --staircase): the steps after the fixed plan.
 *
 * flow.js calls Stim3dStaircase.timeline(ctx) when study.json has `staircase` and appends what it returns
 * after the plan's trials. Each step (docs/study_staircase.md), the same as stim3d/study/staircase.py
 * session_steps, which the server and `stim3d study score` use to check the stored steps:
 *   level = staircase.next(); trial = pickTrial(manifest, seed, participant, step, level);
 *   show it with the widget plugin (no feedback); correct = response === trial.gold_text; update.
 * Step k is stored in the session as a TrialResult at index plan.length + k with its `level`, and the session
 * is saved after every step by flow.js's `record` (server, JATOS or localStorage, else the download at the end).
 * A reload replays the stored steps through a fresh staircase and continues after the last one. A pilot build
 * shows the owner each step's gold after the answer (flow.js `goldNode`).
 */
(() => {
  "use strict";

  const api = window.Stim3dStaircase;  // js/staircase.js, loaded before this file

  /* The stored steps that still follow this participant's staircase (a step that does not stops the replay). */
  const restoreSteps = (ctx, staircase, stored) => {
    const { study, session, byId } = ctx;
    const start = session.plan.length;
    if (!stored || !Array.isArray(stored.trials) || JSON.stringify(stored.plan) !== JSON.stringify(session.plan)) return;
    const steps = stored.trials.filter((t) => t.index >= start).sort((a, b) => a.index - b.index);
    for (let k = 0; k < steps.length && !staircase.done(); k += 1) {
      const level = staircase.next();
      const id = api.pickTrial(study.staircase, study.options.seed, session.participant, k, level);
      const step = steps[k];
      if (step.index !== start + k || step.trial_id !== id || !byId[id]) break;
      staircase.update(level, step.response === byId[id].gold_text);
      session.trials.push(step);
    }
  };

  const timeline = async (ctx) => {
    const { jsPsych, study, session, store, byId } = ctx;
    const manifest = study.staircase;
    const seed = study.options.seed;
    const staircase = api.create(manifest.spec);
    const start = session.plan.length;
    const total = start + manifest.spec.trials;
    restoreSteps(ctx, staircase, "stored" in ctx ? ctx.stored : await store.stored().catch(() => null));
    if (staircase.done()) return [];

    let blurs = 0;
    window.addEventListener("blur", () => { blurs += 1; });
    let current = null;  // {step, level, trial} of the step on screen, chosen once per step
    const prepare = () => {
      const step = staircase.history.length;
      if (!current || current.step !== step) {
        const level = staircase.next();
        const trial = byId[api.pickTrial(manifest, seed, session.participant, step, level)];
        if (!trial) throw new Error(`the staircase's trial for level ${level} is not in trials.json: rebuild the study`);
        current = { step, level, trial };
      }
      return current;
    };
    const stepNode = {
      type: jsPsychStim3dResponse,
      trial: () => prepare().trial,  // evaluated by jsPsych when the step starts: it depends on the answers so far
      present_ms: study.options.present_ms,
      mask_ms: study.options.mask_ms,
      on_start: () => { blurs = 0; },
      on_finish: (data) => {
        const { step, level, trial } = prepare();
        ctx.record(start + step, trial, data);
        // record() queued the save; it runs after this handler, so the step's own fields are in it.
        const result = session.trials[session.trials.length - 1];
        result.level = level;
        result.focus_losses = blurs;
        staircase.update(level, result.response === trial.gold_text);
        jsPsych.progressBar.progress = Math.min(1, session.trials.length / total);
      },
    };

    const nodes = [];
    const images = [...new Set(manifest.trial_ids.flat().map((id) => byId[id].image))];
    nodes.push({ type: jsPsychPreload, images, show_progress_bar: true, continue_after_error: false,
                 message: `<p>Loading ${images.length} pictures…</p>` });
    const onlyPractice = session.plan.length > 0 && session.plan.every((id) => byId[id].role === "practice");
    if (staircase.history.length === 0 && onlyPractice) {
      nodes.push({ type: jsPsychHtmlButtonResponse, choices: ["Start"],
                   stimulus: "<div class='stim3d-page'><p>The practice is over. From now on there is no " +
                             "feedback. The main part starts now.</p></div>" });
    }
    const gold = ctx.goldNode(() => current.trial);  // the step just answered (prepare() moves on later)
    nodes.push({ timeline: gold ? [stepNode, gold] : [stepNode], conditional_function: () => !staircase.done(),
                 loop_function: () => !staircase.done() });
    return nodes;
  };

  if (api) api.timeline = timeline;
})();
