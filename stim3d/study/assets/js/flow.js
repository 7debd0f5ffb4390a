/* The study page's flow (stim3d study build): who, the window's size, consent, instructions, preload, practice,
 * main, completion.
 *
 * Reads study.json and trials.json from this folder, derives the participant's plan (js/plan.js, the same as
 * contract.participant_plan), shows each trial through the widget plugin jsPsychStim3dResponse (js/widgets.js),
 * and keeps one Session (contract.Session) that js/session.js saves after every trial and offers as a download
 * when there is no server. With `min_window` in the study's options js/window_check.js holds the page until the
 * window is large enough. A pilot build (study.json `pilot`) shows the owner each trial's gold after the answer;
 * a real study's trials.json has no gold to show. Nothing identifying is recorded (docs/study.md).
 * The staircase flow is js/staircase_flow.js; plain <script> tags, no bundler, so each file is a global scope.
 */
(() => {
  "use strict";

  const MAX_RT_MS = 3600000;
  const MAX_RESPONSE_CHARS = 4000;
  const SESSION_FORMAT = "stim3d-study-session/1";
  const S = window.Stim3dSession;
  const { escapeHtml, fail } = S;

  const normalise = (text) => String(text).trim().replace(/\s+/g, " ").toLowerCase();
  const megabytes = (bytes) => (bytes / 1e6).toFixed(bytes < 1e5 ? 2 : 1);
  const page = (html) => `<div class='stim3d-page'>${html}</div>`;

  const feedbackHtml = (trial, response) => {
    if (normalise(response) === normalise(trial.gold_text)) {
      return `<div class="stim3d-feedback"><p class="stim3d-correct">Correct!</p></div>`;
    }
    return `<div class="stim3d-feedback"><p class="stim3d-wrong">Not quite.</p>
      <p>Your answer: ${escapeHtml(response)}</p><p>The answer was ${escapeHtml(trial.gold_text)}.</p></div>`;
  };

  /* A pilot build's page after a trial: the gold beside the answer, for the study's owner to check the stimulus. */
  const pilotHtml = (trial, response) => {
    const same = normalise(response) === normalise(trial.gold_text);
    return `<div class="stim3d-feedback stim3d-pilot" data-pilot-gold="${escapeHtml(trial.trial_id)}">
      <p class="stim3d-pilot-mark">Pilot build: the gold answer is shown to the study's owner, never in the real
      study.</p><p>Question ${escapeHtml(trial.question_id)} (${escapeHtml(trial.role)} trial,
      ${escapeHtml(trial.family)})</p>
      <p>Your answer: <strong>${escapeHtml(response)}</strong></p>
      <p>Gold answer: <strong class="stim3d-gold">${escapeHtml(trial.gold_text)}</strong>${same ? " (the same)" : ""}</p>
      </div>`;
  };

  /* The staircase hook: when study.json has `staircase`, js/staircase.js (window.Stim3dStaircase) and
   * js/staircase_flow.js (its `timeline`) build the adaptive steps that follow the plan, with the same
   * bookkeeping (`record`, `goldNode`) as the fixed plan. Returns null when there is no staircase. */
  const staircaseTimeline = async (context) => {
    if (!context.study.staircase) return null;
    for (const src of ["js/staircase.js", "js/staircase_flow.js"]) {
      if (src === "js/staircase.js" ? window.Stim3dStaircase : window.Stim3dStaircase.timeline) continue;
      await new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = src;
        script.onload = resolve;
        script.onerror = () => reject(new Error(`${src} is missing: rebuild the study`));
        document.head.appendChild(script);
      });
    }
    return window.Stim3dStaircase.timeline(context);
  };

  /* Trials a participant answers: the plan, and a staircase's steps after it. */
  const totalTrials = (study, session) => session.plan.length + (study.staircase ? study.staircase.spec.trials : 0);

  /* ctx.trialNode(index): the widget trial of plan position `index`; ctx.record(index, trial, data): its result
   * appended to the session (focus losses counted from the trial's start) and saved; ctx.goldNode(trialOf): in a
   * pilot build the page showing the gold of the trial just answered (trialOf() names it), else null. */
  const attachRecording = (ctx) => {
    const { jsPsych, study, session, store, byId } = ctx;
    const options = study.options;
    let blurs = 0;
    window.addEventListener("blur", () => { blurs += 1; });

    const record = (index, trial, data) => {
      const response = data.response === undefined || data.response === null ? "" : data.response;
      const rt = Number(data.rt_ms !== undefined ? data.rt_ms : data.rt) || 0;
      session.trials.push({
        index,
        trial_id: trial.trial_id,
        role: trial.role,
        response: String(response).slice(0, MAX_RESPONSE_CHARS),
        rt_ms: Math.max(0, Math.min(MAX_RT_MS, Math.round(rt))),
        focus_losses: blurs,
        presented_ms: options.present_ms ? Math.round(Number(data.presented_ms || options.present_ms)) : null,
      });
      session.environment = S.environment();
      jsPsych.progressBar.progress = Math.min(1, session.trials.length / totalTrials(study, session));
      store.save();
    };

    ctx.trialNode = (index) => {
      const trial = byId[session.plan[index]];
      return {
        type: jsPsychStim3dResponse,
        trial,
        present_ms: options.present_ms,
        mask_ms: options.mask_ms,
        on_start: () => { blurs = 0; },
        on_finish: (data) => record(index, trial, data),
      };
    };
    ctx.record = record;
    ctx.goldNode = (trialOf) => (!study.pilot ? null : {
      type: jsPsychHtmlButtonResponse,
      stimulus: () => pilotHtml(trialOf(), session.trials[session.trials.length - 1].response),
      choices: ["Continue"],
    });
  };

  const openingPages = (study, consentHtml) => [
    { type: jsPsychHtmlButtonResponse, choices: ["I agree"],
      stimulus: `<div class="stim3d-consent" role="document">${consentHtml}</div>` },
    {
      type: jsPsychHtmlButtonResponse,
      stimulus: page("<p>You may switch to full screen to see the pictures without distraction (optional).</p>"),
      choices: ["Full screen", "Stay in this window"],
      on_finish: (data) => {
        if (data.response === 0 && document.documentElement.requestFullscreen) {
          document.documentElement.requestFullscreen().catch(() => {});
        }
      },
    },
    { type: jsPsychInstructions, pages: study.instructions, show_clickable_nav: true, button_label_next: "Next",
      button_label_previous: "Back" },
  ];

  const buildTimeline = (ctx) => {
    const { jsPsych, study, byId, session, consentHtml, todo } = ctx;
    const timeline = [];
    if (session.trials.length === 0) timeline.push(...openingPages(study, consentHtml));
    else {
      timeline.push({ type: jsPsychHtmlButtonResponse, choices: ["Continue"],
                      stimulus: page(`<p>Welcome back: you answered ${session.trials.length} of ` +
                                     `${totalTrials(study, session)} questions. Continue where you left off.</p>`) });
    }
    const images = [...new Set(todo.map((i) => byId[session.plan[i]].image))];
    const bytes = images.reduce((sum, image) => sum + (study.stimuli_bytes[image] || 0), 0);
    timeline.push({ type: jsPsychPreload, images, show_progress_bar: true, continue_after_error: false,
                    message: `<p>Loading ${images.length} pictures (${megabytes(bytes)} MB)…</p>` });

    // "The main part starts now" comes once, after the last practice trial (also when a reload fell between the two).
    let practiceDone = !session.plan.some((id) => byId[id].role === "practice") ||
      session.trials.some((t) => t.role !== "practice");
    for (const index of todo) {
      const trial = byId[session.plan[index]];
      if (trial.role !== "practice" && !practiceDone) {
        practiceDone = true;
        timeline.push({ type: jsPsychHtmlButtonResponse, choices: ["Start"],
                        stimulus: page("<p>The practice is over. From now on there is no feedback. The main part " +
                                       "starts now.</p>") });
      }
      timeline.push(ctx.trialNode(index));
      if (trial.role === "practice") {
        timeline.push({
          type: jsPsychHtmlButtonResponse,
          stimulus: () => feedbackHtml(trial, session.trials[session.trials.length - 1].response),
          choices: ["Continue"],
        });
      } else {
        const gold = ctx.goldNode(() => trial);
        if (gold) timeline.push(gold);
      }
    }
    if (ctx.staircase) timeline.push(...ctx.staircase);
    // The progress bar exists once jsPsych runs: a resumed session starts it where it left off.
    timeline[0].on_load = () => { jsPsych.progressBar.progress = session.trials.length / totalTrials(study, session); };
    return timeline;
  };

  /* -- the end ------------------------------------------------------------------------------------------ */

  const download = (session) => {
    const blob = new Blob([JSON.stringify(session, null, 2)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `${session.participant}_${session.session}.json`;
    document.body.appendChild(link);
    link.click();
    link.remove();
  };

  const finish = async (study, session, store, server) => {
    session.complete = true;
    session.environment = S.environment();
    store.save();
    const error = await store.flushed();
    const url = study.options.completion_url;
    if (window.jatos) {
      jatos.endStudy(JSON.stringify(session));  // JATOS redirects to the study's end URL (the completion URL)
      return;
    }
    const saved = server && !error;
    const parts = ["<div class='stim3d-page'><h2>Thank you!</h2><p>You have finished the study.</p>"];
    if (saved) parts.push("<p>Your answers are saved.</p>");
    else parts.push("<p>Please save your answers and send the file to the researcher:</p>" +
                    "<p><button type='button' class='jspsych-btn' id='stim3d-download'>Download your data</button></p>");
    if (url) parts.push(`<p><a id="stim3d-complete" href="${escapeHtml(url)}">Return to complete the study</a></p>`);
    S.display().innerHTML = `${parts.join("")}</div>`;
    const button = document.getElementById("stim3d-download");
    if (button) button.addEventListener("click", () => download(session));
    if (saved && url) window.location.assign(url);
  };

  /* -- start ---------------------------------------------------------------------------------------------- */

  /* The session's token and store, and what the server (or this browser) already holds of the session. */
  const openSession = async (study, session, server) => {
    let begun = server ? await S.sessionToken(study, session) : { token: null, started: false };
    let store = S.makeStore(study, session, server, begun.token);
    let stored = begun.started ? null : await store.stored();  // a session started just now has nothing stored
    if (stored === undefined) {  // the owner moved this session out of data/ to let the participant start over
      S.forgetToken(study, session);
      begun = await S.sessionToken(study, session);
      store = S.makeStore(study, session, server, begun.token);
      stored = null;
    }
    return { store, stored };
  };

  const main = async () => {
    if (window.jatos) await new Promise((resolve) => jatos.onLoad(resolve));
    let study;
    let trials;
    let consentHtml;
    try {
      [study, trials, consentHtml] = await Promise.all([
        S.getJson("study.json"), S.getJson("trials.json").then((t) => t.trials),
        fetch("consent.html", { cache: "no-store" }).then((r) => (r.ok ? r.text() : "")),
      ]);
    } catch (e) {
      fail(`The study's files could not be read (${e.message}). Open it through a web server, e.g. ` +
           "`stim3d study serve`, not as a file.");
      return;
    }
    const params = S.urlParameters();
    let participant = params.participant || params.PROLIFIC_PID ||
      (window.jatos && jatos.workerId ? `jatos-${jatos.workerId}` : null);
    if (!S.validParticipant(participant)) participant = await S.askParticipant(participant);
    const id = S.sessionId(study, participant, params);
    if (!S.validName(id)) { fail("The session id in the link is not valid."); return; }
    const plan = Stim3dPlan.participantPlan(trials, study.options.seed, participant, study.options.per_participant);
    const prolific = {};
    for (const key of ["STUDY_ID", "SESSION_ID"]) if (params[key]) prolific[key] = params[key];
    const session = { format: SESSION_FORMAT, study: study.study_id, participant, session: id,
                      prolific: Object.keys(prolific).length ? prolific : null, environment: S.environment(),
                      plan, trials: [], complete: false };
    const server = await S.hasServer(study);
    let opened;
    try {
      opened = await openSession(study, session, server);
    } catch (e) {
      fail(e.message);
      return;
    }
    const { store, stored } = opened;
    if (stored && Array.isArray(stored.trials) && JSON.stringify(stored.plan) === JSON.stringify(plan)) {
      session.trials = stored.trials.filter((t) => t.index < plan.length && plan[t.index] === t.trial_id);
    }
    const answered = new Set(session.trials.map((t) => t.index));
    const todo = plan.map((_, i) => i).filter((i) => !answered.has(i));
    const byId = Object.fromEntries(trials.map((t) => [t.trial_id, t]));
    S.display().innerHTML = "";  // the "Loading the study…" placeholder
    await window.Stim3dWindow.guard(study.options.min_window || null);
    const jsPsych = initJsPsych({ display_element: S.display(), show_progress_bar: true,
                                  auto_update_progress_bar: false, message_progress_bar: "Progress" });
    const ctx = { jsPsych, study, trials, byId, session, store, stored, consentHtml, todo, staircase: null };
    attachRecording(ctx);
    ctx.staircase = await staircaseTimeline(ctx).catch((e) => { fail(e.message); throw e; });
    await jsPsych.run(buildTimeline(ctx));
    await finish(study, session, store, server);
  };

  window.Stim3dStudy = { main, feedbackHtml, pilotHtml };
  window.addEventListener("DOMContentLoaded", () => { main().catch((e) => fail(`Something went wrong: ${e.message}`)); });
})();
