/* stim3d's response widgets: the jsPsych 8 plugin `jsPsychStim3dResponse` (name "stim3d-response").
 *
 * One plugin for every answer type of stim3d/scoring/answers.py. Given one contract Trial
 * (stim3d/study/contract.py) it shows, top to bottom, the prompt, the picture scaled to fit the
 * window (stage.js), the trial's instructions, the answer controls of its type (answer_widgets.js)
 * and Submit, and finishes with {response, rt_ms, trial_id, role} (+ presented_ms when present_ms
 * is given), where `response` is text in exactly the grammar RESPONSE_FORMS names (responses.js),
 * so `stim3d study score` reads a person's answer with the same parser as a model's.
 *
 * With present_ms the image shows for that long, then a noise mask for mask_ms, then the
 * controls: without the image for non-spatial types; for spatial types on a blank frame of
 * the image's size with the grid's cell outlines (cells and clicks) or the image's outline
 * (box), since a person cannot click on an image that is gone. docs/study_widgets.md.
 *
 * Loaded after hash.js, responses.js, stage.js and answer_widgets.js (plain <script> tags, no bundler: a study
 * folder works from any static host); this file defines the one global jsPsych looks the plugin up by.
 */
const jsPsychStim3dResponse = ((jspsych) => {
  "use strict";

  const { el, button, mask } = window.Stim3dStage;
  const { MAX_RT_MS, formats, cellAt } = window.Stim3dResponses;
  const { buildWidget } = window.Stim3dAnswerWidgets;
  const ParameterType = jspsych.ParameterType;
  const info = {
    name: "stim3d-response",
    version: "1.1.0",
    parameters: {
      /** One contract Trial (an entry of trials.json). */
      trial: { type: ParameterType.OBJECT, default: undefined },
      /** Show the image this long (ms), then the mask, then the widget; null: the image stays. */
      present_ms: { type: ParameterType.INT, default: null },
      /** How long the mask shows after a timed presentation (ms). */
      mask_ms: { type: ParameterType.INT, default: 500 },
    },
    data: {
      response: { type: ParameterType.STRING },
      rt_ms: { type: ParameterType.INT },
      trial_id: { type: ParameterType.STRING },
      role: { type: ParameterType.STRING },
      presented_ms: { type: ParameterType.INT },
    },
  };

  const SPATIAL = new Set(["cell", "cell_set", "strict_cell_set", "strict_cell_set_count", "box"]);
  const isTyping = (t) => t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "button"));
  // On a touch screen, focusing an entry opens the on-screen keyboard over the picture: there the participant
  // taps the entry (or the keypad) when ready; with a mouse the keyboard goes where the answer starts.
  const touchFirst = () => typeof window.matchMedia === "function" && window.matchMedia("(pointer: coarse)").matches;

  // -- timing: presentation, mask ---------------------------------------------------------------------

  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));

  /** Wait `ms` counted in animation frames (so the screen really changed); returns the frame time at the end. */
  const holdFor = async (ms, startedAt) => {
    let now = startedAt;
    while (now - startedAt < ms - 8) now = await nextFrame(); // within half a 60 Hz frame of the target
    return now;
  };

  /** Show the trial once its picture is decoded; timed: picture, mask, then the answer. Returns presented_ms. */
  const present = async (params, trial, { root, stage, stageBox, answer }) => {
    const timed = params.present_ms !== null && params.present_ms !== undefined;
    root.style.visibility = "hidden";
    // Nothing but the picture until the mask is gone; the controls keep their room, so the picture stays put.
    answer.style.visibility = timed ? "hidden" : "";
    await stage.image.decode().catch(() => {
      throw new Error(`stim3d-response: cannot load the image ${trial.image}`);
    });
    root.style.visibility = "";
    if (!timed) return null;
    const shown = await nextFrame(); // the frame that paints the picture
    const hidden = await holdFor(params.present_ms, shown);
    const noise = mask(trial, stage);
    stage.root.appendChild(noise);
    stage.image.hidden = true;
    await holdFor(params.mask_ms, await nextFrame());
    noise.remove();
    if (SPATIAL.has(trial.answer_type)) stage.showFrame();
    else stageBox.hidden = true;
    answer.style.visibility = "";
    return Math.round(hidden - shown);
  };

  // -- the plugin ------------------------------------------------------------------------------------

  /** The trial's page: the prompt, the stage (picture), then the instructions, the widget's body and Submit. */
  const layout = (trial) => {
    const type = trial.answer_type;
    const root = el("div", { class: "stim3d-trial", "data-answer-type": type });
    const prompt = el("p", { class: "stim3d-prompt", id: "stim3d-prompt", text: trial.prompt || "" });
    const instructions = el("p", { class: "stim3d-instructions", id: "stim3d-instructions",
                                   text: trial.instructions || "" });
    const stage = new window.Stim3dStage.Stage(trial);
    const stageBox = el("div", { class: "stim3d-stage-box" }, [stage.root]);
    const body = el("div", { class: "stim3d-widget", role: "group", "aria-labelledby": "stim3d-instructions" });
    // A button clicked with the mouse keeps the focus where it was, so the Enter that follows submits
    // instead of pressing that button again (a keypad digit typed twice, Undo undoing twice).
    body.addEventListener("mousedown", (e) => e.target.closest("button") && e.preventDefault());
    const submit = button(type === "strict_cell_set" ? "Done" : "Submit", { class: "stim3d-submit",
                                                                           "aria-keyshortcuts": "Enter" });
    submit.disabled = true;
    const actions = el("div", { class: "stim3d-actions" }, [submit]);
    const answer = el("div", { class: "stim3d-answer" }, [instructions, body, actions]);
    root.append(prompt, stageBox, answer);
    return { root, prompt, stage, stageBox, body, submit, answer };
  };

  class Stim3dResponsePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    async trial(display, params, onLoad) {
      const trial = params.trial;
      if (!trial || !trial.answer_type || !trial.trial_id) throw new Error("stim3d-response: no trial given");
      const timed = params.present_ms !== null && params.present_ms !== undefined;
      const { root, prompt, stage, stageBox, body, submit, answer } = layout(trial);
      display.replaceChildren(root);

      let widget = null;
      const changed = () => {
        submit.disabled = !widget || widget.value() === null;
      };
      widget = buildWidget(body, changed, trial, stage);
      changed();
      stage.watch([prompt, answer]); // fitted now that the controls are laid out, and again when they change
      let started = null; // when the widget showed: keys and Submit do nothing before
      let presented = null;
      let resolveTrial = null;
      const done = new Promise((resolve) => { resolveTrial = resolve; });
      const onKey = (e) => {
        if (started === null) return;
        if (e.key === "Enter") {
          const t = e.target;
          if (t && t.tagName === "TEXTAREA" && !(e.ctrlKey || e.metaKey)) return; // a new line in a description
          if (t && t.tagName === "BUTTON" && t !== submit) return; // Enter presses the focused button
          e.preventDefault();
          finish();
          return;
        }
        if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target) || !widget.key) return;
        if (widget.key(e)) e.preventDefault();
      };
      const finish = () => {
        const response = started === null ? null : widget.value();
        if (response === null) return;
        const data = { response, rt_ms: Math.min(MAX_RT_MS, Math.round(performance.now() - started)),
                       trial_id: trial.trial_id, role: trial.role };
        if (timed) data.presented_ms = presented;
        document.removeEventListener("keydown", onKey);
        stage.destroy();
        display.replaceChildren();
        this.jsPsych.finishTrial(data);
        resolveTrial(data);
      };
      submit.addEventListener("click", finish);
      document.addEventListener("keydown", onKey);
      if (onLoad) onLoad();

      presented = await present(params, trial, { root, stage, stageBox, answer });
      root.dataset.ready = "true"; // the page (and tests) may answer from now on
      started = performance.now();
      if (!touchFirst()) widget.focus();
      return done;
    }
  }

  Stim3dResponsePlugin.info = info;
  /** The pure parts, for tests and for the page (e.g. writing a gold as a response would). */
  Stim3dResponsePlugin.formats = formats;
  Stim3dResponsePlugin.cellAt = cellAt;
  return Stim3dResponsePlugin;
})(jsPsychModule);
