/* The study page's flow (stim3d study build): who, consent, instructions, preload, practice, main, completion.
 *
 * Reads study.json and trials.json from this folder, derives the participant's plan (js/plan.js, the same as
 * contract.participant_plan), shows each trial through the widget plugin jsPsychStim3dResponse (js/widgets.js),
 * and keeps one Session (contract.Session) that is saved after every trial: PUT api/session when `stim3d study
 * serve` answers api/ping, jatos.submitResultData under JATOS, and always localStorage (a reload resumes); with no
 * server the completion page offers the Session as a download. Nothing identifying is recorded (docs/study.md).
 * With a server every session has a token (POST api/session answers it once; the page keeps it in localStorage
 * per study, participant and session and sends it as `Authorization: Bearer`): without it nobody reads or writes
 * the session, and a participant who starts again in another browser is refused (one session per participant).
 * The page's flow reads top to bottom in this one file (the staircase flow, the one separable part, is
 * js/staircase_flow.js); plain <script> tags, no bundler, so each file is a global scope.
 */
(function () {
  "use strict";

  const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;  // stim3d/scenes/names.py check_name
  const NAME_LIMIT = 120;
  const MAX_RT_MS = 3600000;
  const MAX_RESPONSE_CHARS = 4000;
  const SESSION_FORMAT = "stim3d-study-session/1";

  const display = () => document.getElementById("stim3d-study");
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const validName = (v) => typeof v === "string" && NAME.test(v) && v.length <= NAME_LIMIT && !v.includes("..");
  /* contract.check_participant: a safe name ending in a letter or digit, short enough to name eval/human-<id>. */
  const PARTICIPANT_LIMIT = 114;
  const PARTICIPANT_RULE = "Use letters, digits, '.', '_' or '-', starting and ending with a letter or digit " +
                           `(at most ${PARTICIPANT_LIMIT} characters).`;
  const validParticipant = (v) => validName(v) && /[A-Za-z0-9]$/.test(v) && v.length <= PARTICIPANT_LIMIT;

  function fail(message) {
    display().innerHTML = `<div class="stim3d-page"><p class="stim3d-error" role="alert">${escapeHtml(message)}</p></div>`;
  }

  async function getJson(url) {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return response.json();
  }

  /* -- who: participant and session ------------------------------------------------------------------- */

  function urlParameters() {
    const params = {};
    new URLSearchParams(window.location.search).forEach((value, key) => { params[key] = value; });
    if (window.jatos && jatos.urlQueryParameters) Object.assign(params, jatos.urlQueryParameters);
    return params;
  }

  /* The participant id typed into a form; `rejected`, an id from the link that is not canonical, is named. */
  function askParticipant(rejected) {
    return new Promise((resolve) => {
      display().innerHTML = `<form class="stim3d-page stim3d-form" id="stim3d-who">
        <h2>Welcome</h2>
        <label for="stim3d-participant">Participant ID</label>
        <input id="stim3d-participant" name="participant" autocomplete="off" required>
        <p class="stim3d-error" id="stim3d-who-error" role="alert">${rejected ? escapeHtml(
          `The participant ID in the link (${rejected}) cannot be used. ${PARTICIPANT_RULE}`) : ""}</p>
        <button type="submit" class="jspsych-btn">Continue</button></form>`;
      const input = document.getElementById("stim3d-participant");
      input.focus();
      document.getElementById("stim3d-who").addEventListener("submit", (event) => {
        event.preventDefault();
        const value = input.value.trim();
        if (validParticipant(value)) resolve(value);
        else document.getElementById("stim3d-who-error").textContent = PARTICIPANT_RULE;
      });
    });
  }

  function remembered(key) {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  }

  function randomId() {
    const bytes = new Uint8Array(8);
    window.crypto.getRandomValues(bytes);
    return "s" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /* The session id: Prolific's SESSION_ID, else the one this browser made for this participant (a reload resumes). */
  function sessionId(study, participant, params) {
    if (params.SESSION_ID) return params.SESSION_ID;
    const key = `stim3d:${study.study_id}:${participant}:session`;
    let id = remembered(key);
    if (!validName(id)) {
      id = randomId();
      try { window.localStorage.setItem(key, id); } catch (e) { /* then a reload starts a new session */ }
    }
    return id;
  }

  /* -- where the session is stored -------------------------------------------------------------------- */

  /* The session's token: kept where a reload of this browser finds it (the server keeps only its digest). */
  const tokenKey = (study, session) => `stim3d:${study.study_id}:${session.participant}:${session.session}:token`;

  /* The token of this session: the one this browser kept, or a new one from POST api/session. Throws an Error
   * whose message is the page to show when the server refuses (a participant who started elsewhere). */
  async function sessionToken(study, session) {
    const key = tokenKey(study, session);
    const kept = remembered(key);
    if (kept) return { token: kept, started: false };
    const response = await fetch("api/session", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ participant: session.participant, session: session.session }),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.status === 409) {
      throw new Error(`You have already started this study (participant ID ${session.participant}) in another ` +
                      "browser or on another device. Please go on there; if you cannot, contact the researcher.");
    }
    if (!response.ok || typeof answer.token !== "string") {
      throw new Error(`The study could not start your session (${answer.error || `HTTP ${response.status}`}).`);
    }
    try { window.localStorage.setItem(key, answer.token); } catch (e) { /* then a reload cannot resume */ }
    return { token: answer.token, started: true };
  }

  async function hasServer(study) {
    if (window.jatos) return false;
    try {
      const ping = await getJson("api/ping");
      return ping && ping.study === study.study_id;
    } catch (e) {
      return false;
    }
  }

  function makeStore(study, session, server, token) {
    const localKey = `stim3d:${study.study_id}:${session.participant}:${session.session}:data`;
    let chain = Promise.resolve();
    let lastError = null;
    function saveNow() {
      const body = JSON.stringify(session);
      try { window.localStorage.setItem(localKey, body); } catch (e) { /* quota: the server or download has it */ }
      if (window.jatos) return Promise.resolve(jatos.submitResultData(body)).catch((e) => { lastError = e; });
      if (!server) return Promise.resolve();
      return fetch("api/session", { method: "PUT", body,
                                    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` } })
        .then((r) => { if (!r.ok) throw new Error(`saving failed: HTTP ${r.status}`); lastError = null; })
        .catch((e) => { lastError = e; });
    }
    return {
      save() { chain = chain.then(saveNow); return chain; },
      flushed() { return chain.then(() => lastError); },
      async stored() {
        if (server) {
          const query = `participant=${encodeURIComponent(session.participant)}&session=${encodeURIComponent(session.session)}`;
          const response = await fetch(`api/session?${query}`,
                                       { cache: "no-store", headers: { Authorization: `Bearer ${token}` } });
          if (response.ok) return response.json();
          if (response.status === 403) return undefined;  // the token kept here is no longer the session's
          throw new Error(`The study could not read your session (HTTP ${response.status}).`);
        }
        try { return JSON.parse(window.localStorage.getItem(localKey) || "null"); } catch (e) { return null; }
      },
    };
  }

  /* -- the timeline ------------------------------------------------------------------------------------ */

  function environment() {
    return {
      screen: [window.screen.width, window.screen.height],
      window: [window.innerWidth, window.innerHeight],
      device_pixel_ratio: window.devicePixelRatio || 1,
    };
  }

  const normalise = (text) => String(text).trim().replace(/\s+/g, " ").toLowerCase();

  function feedbackHtml(trial, response) {
    if (normalise(response) === normalise(trial.gold_text)) {
      return `<div class="stim3d-feedback"><p class="stim3d-correct">Correct!</p></div>`;
    }
    return `<div class="stim3d-feedback"><p class="stim3d-wrong">Not quite.</p>
      <p>Your answer: ${escapeHtml(response)}</p><p>The answer was ${escapeHtml(trial.gold_text)}.</p></div>`;
  }

  function megabytes(bytes) { return (bytes / 1e6).toFixed(bytes < 1e5 ? 2 : 1); }

  /* The staircase hook: when study.json has `staircase`, js/staircase.js (window.Stim3dStaircase) and
   * js/staircase_flow.js (its `timeline`) build the adaptive steps that follow the plan, with the same
   * bookkeeping (`record`) as the fixed plan. Returns null when there is no staircase. */
  async function staircaseTimeline(context) {
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
  }

  /* Trials a participant answers: the plan, and a staircase's steps after it. */
  const totalTrials = (study, session) => session.plan.length + (study.staircase ? study.staircase.spec.trials : 0);

  /* ctx.trialNode(index): the widget trial of plan position `index`; ctx.record(index, trial, data): its result
   * appended to the session (focus losses counted from the trial's start) and saved. */
  function attachRecording(ctx) {
    const { jsPsych, study, session, store, byId } = ctx;
    const options = study.options;
    let blurs = 0;
    window.addEventListener("blur", () => { blurs += 1; });

    function trialNode(index) {
      const trial = byId[session.plan[index]];
      return {
        type: jsPsychStim3dResponse,
        trial,
        present_ms: options.present_ms,
        mask_ms: options.mask_ms,
        on_start: () => { blurs = 0; },
        on_finish: (data) => record(index, trial, data),
      };
    }

    function record(index, trial, data) {
      session.trials.push({
        index,
        trial_id: trial.trial_id,
        role: trial.role,
        response: String(data.response === undefined || data.response === null ? "" : data.response)
          .slice(0, MAX_RESPONSE_CHARS),
        rt_ms: Math.max(0, Math.min(MAX_RT_MS, Math.round(Number(data.rt_ms !== undefined ? data.rt_ms : data.rt) || 0))),
        focus_losses: blurs,
        presented_ms: options.present_ms ? Math.round(Number(data.presented_ms || options.present_ms)) : null,
      });
      session.environment = environment();
      jsPsych.progressBar.progress = Math.min(1, session.trials.length / totalTrials(study, session));
      store.save();
    }

    ctx.trialNode = trialNode;
    ctx.record = record;
  }

  function buildTimeline(ctx) {
    const { jsPsych, study, byId, session, consentHtml, todo } = ctx;
    const timeline = [];
    const resumed = session.trials.length > 0;
    const trialNode = ctx.trialNode;

    if (!resumed) {
      timeline.push({
        type: jsPsychHtmlButtonResponse,
        stimulus: `<div class="stim3d-consent" role="document">${consentHtml}</div>`,
        choices: ["I agree"],
      });
      timeline.push({
        type: jsPsychHtmlButtonResponse,
        stimulus: "<div class='stim3d-page'><p>You may switch to full screen to see the pictures without distraction " +
                  "(optional).</p></div>",
        choices: ["Full screen", "Stay in this window"],
        on_finish: (data) => {
          if (data.response === 0 && document.documentElement.requestFullscreen) {
            document.documentElement.requestFullscreen().catch(() => {});
          }
        },
      });
      timeline.push({ type: jsPsychInstructions, pages: study.instructions, show_clickable_nav: true,
                      button_label_next: "Next", button_label_previous: "Back" });
    } else {
      timeline.push({ type: jsPsychHtmlButtonResponse, choices: ["Continue"],
                      stimulus: `<div class='stim3d-page'><p>Welcome back: you answered ${session.trials.length} of ` +
                                `${totalTrials(study, session)} questions. Continue where you left off.</p></div>` });
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
                        stimulus: "<div class='stim3d-page'><p>The practice is over. From now on there is no " +
                                  "feedback. The main part starts now.</p></div>" });
      }
      timeline.push(trialNode(index));
      if (trial.role === "practice") {
        timeline.push({
          type: jsPsychHtmlButtonResponse,
          stimulus: () => feedbackHtml(trial, session.trials[session.trials.length - 1].response),
          choices: ["Continue"],
        });
      }
    }
    if (ctx.staircase) timeline.push(...ctx.staircase);
    // The progress bar exists once jsPsych runs: a resumed session starts it where it left off.
    timeline[0].on_load = () => { jsPsych.progressBar.progress = session.trials.length / totalTrials(study, session); };
    return timeline;
  }

  /* -- the end ------------------------------------------------------------------------------------------ */

  function download(session) {
    const blob = new Blob([JSON.stringify(session, null, 2)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `${session.participant}_${session.session}.json`;
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  async function finish(study, session, store, server) {
    session.complete = true;
    session.environment = environment();
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
    display().innerHTML = parts.join("") + "</div>";
    const button = document.getElementById("stim3d-download");
    if (button) button.addEventListener("click", () => download(session));
    if (saved && url) window.location.assign(url);
  }

  /* -- start ---------------------------------------------------------------------------------------------- */

  async function main() {
    if (window.jatos) await new Promise((resolve) => jatos.onLoad(resolve));
    let study, trials, consentHtml;
    try {
      [study, trials, consentHtml] = await Promise.all([
        getJson("study.json"), getJson("trials.json").then((t) => t.trials),
        fetch("consent.html", { cache: "no-store" }).then((r) => (r.ok ? r.text() : "")),
      ]);
    } catch (e) {
      fail(`The study's files could not be read (${e.message}). Open it through a web server, e.g. ` +
           "`stim3d study serve`, not as a file.");
      return;
    }
    const params = urlParameters();
    let participant = params.participant || params.PROLIFIC_PID ||
      (window.jatos && jatos.workerId ? `jatos-${jatos.workerId}` : null);
    if (!validParticipant(participant)) participant = await askParticipant(participant);
    const id = sessionId(study, participant, params);
    if (!validName(id)) { fail("The session id in the link is not valid."); return; }
    const plan = Stim3dPlan.participantPlan(trials, study.options.seed, participant, study.options.per_participant);
    const prolific = {};
    for (const key of ["STUDY_ID", "SESSION_ID"]) if (params[key]) prolific[key] = params[key];
    const session = { format: SESSION_FORMAT, study: study.study_id, participant, session: id,
                      prolific: Object.keys(prolific).length ? prolific : null, environment: environment(),
                      plan, trials: [], complete: false };
    const server = await hasServer(study);
    let stored = null;
    let store;
    try {
      let begun = server ? await sessionToken(study, session) : { token: null, started: false };
      store = makeStore(study, session, server, begun.token);
      if (!begun.started) stored = await store.stored();  // a session started just now has nothing stored
      if (stored === undefined) {  // the owner moved this session out of data/ to let the participant start over
        try { window.localStorage.removeItem(tokenKey(study, session)); } catch (e) { /* then it is kept */ }
        begun = await sessionToken(study, session);
        store = makeStore(study, session, server, begun.token);
        stored = null;
      }
    } catch (e) {
      fail(e.message);
      return;
    }
    if (stored && Array.isArray(stored.trials) && JSON.stringify(stored.plan) === JSON.stringify(plan)) {
      session.trials = stored.trials.filter((t) => t.index < plan.length && plan[t.index] === t.trial_id);
    }
    const answered = new Set(session.trials.map((t) => t.index));
    const todo = plan.map((_, i) => i).filter((i) => !answered.has(i));
    const byId = Object.fromEntries(trials.map((t) => [t.trial_id, t]));
    display().innerHTML = "";  // the "Loading the study…" placeholder
    const jsPsych = initJsPsych({ display_element: display(), show_progress_bar: true,
                                  auto_update_progress_bar: false, message_progress_bar: "Progress" });
    const ctx = { jsPsych, study, trials, byId, session, store, stored, consentHtml, todo, staircase: null };
    attachRecording(ctx);
    ctx.staircase = await staircaseTimeline(ctx).catch((e) => { fail(e.message); throw e; });
    const timeline = buildTimeline(ctx);
    await jsPsych.run(timeline);
    await finish(study, session, store, server);
  }

  window.Stim3dStudy = { main, feedbackHtml, validName, validParticipant };
  window.addEventListener("DOMContentLoaded", () => { main().catch((e) => fail(`Something went wrong: ${e.message}`)); });
})();
