/* Who takes the study and where their session is kept: the participant and session ids, the session's token, the
 * store that saves the session after every trial. window.Stim3dSession, used by flow.js.
 *
 * - Participant: `?participant=ID` or Prolific's PROLIFIC_PID (JATOS: its worker id), else a small form asks; the
 *   id must be canonical (contract.check_participant). Session: Prolific's SESSION_ID, else a random id this
 *   browser keeps in localStorage per study and participant, so a reload resumes.
 * - With `stim3d study serve` (it answers api/ping) every session has a token: POST api/session answers it once,
 *   the page keeps it in localStorage per study, participant and session and sends it as `Authorization: Bearer`;
 *   without it nobody reads or writes the session, and a participant who starts again in another browser is
 *   refused (one session per participant, docs/study_collect.md).
 * - The store saves after every trial: PUT api/session with a server, jatos.submitResultData under JATOS, and
 *   always localStorage (without a server the completion page offers the session as a download).
 */
(() => {
  "use strict";

  const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;  // stim3d/scenes/names.py check_name
  const NAME_LIMIT = 120;
  /* contract.check_participant: a safe name ending in a letter or digit, short enough to name eval/human-<id>. */
  const PARTICIPANT_LIMIT = 114;
  const PARTICIPANT_RULE = "Use letters, digits, '.', '_' or '-', starting and ending with a letter or digit " +
                           `(at most ${PARTICIPANT_LIMIT} characters).`;

  const display = () => document.getElementById("stim3d-study");
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const validName = (v) => typeof v === "string" && NAME.test(v) && v.length <= NAME_LIMIT && !v.includes("..");
  const validParticipant = (v) => validName(v) && /[A-Za-z0-9]$/.test(v) && v.length <= PARTICIPANT_LIMIT;

  const fail = (message) => {
    display().innerHTML = `<div class="stim3d-page"><p class="stim3d-error" role="alert">${escapeHtml(message)}</p></div>`;
  };

  const getJson = async (url) => {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return response.json();
  };

  const remembered = (key) => {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  };

  const keep = (key, value) => {
    try { window.localStorage.setItem(key, value); } catch (e) { /* then a reload cannot resume */ }
  };

  /* -- who: participant and session ------------------------------------------------------------------- */

  const urlParameters = () => {
    const params = {};
    new URLSearchParams(window.location.search).forEach((value, key) => { params[key] = value; });
    if (window.jatos && jatos.urlQueryParameters) Object.assign(params, jatos.urlQueryParameters);
    return params;
  };

  /* The participant id typed into a form; `rejected`, an id from the link that is not canonical, is named. */
  const askParticipant = (rejected) => new Promise((resolve) => {
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

  const randomId = () => {
    const bytes = new Uint8Array(8);
    window.crypto.getRandomValues(bytes);
    return `s${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  };

  /* The session id: Prolific's SESSION_ID, else the one this browser made for this participant (a reload resumes). */
  const sessionId = (study, participant, params) => {
    if (params.SESSION_ID) return params.SESSION_ID;
    const key = `stim3d:${study.study_id}:${participant}:session`;
    let id = remembered(key);
    if (!validName(id)) {
      id = randomId();
      keep(key, id);
    }
    return id;
  };

  /* -- where the session is stored -------------------------------------------------------------------- */

  /* The session's token: kept where a reload of this browser finds it (the server keeps only its digest). */
  const tokenKey = (study, session) => `stim3d:${study.study_id}:${session.participant}:${session.session}:token`;

  const forgetToken = (study, session) => {
    try { window.localStorage.removeItem(tokenKey(study, session)); } catch (e) { /* then it is kept */ }
  };

  /* The token of this session: the one this browser kept, or a new one from POST api/session. Throws an Error
   * whose message is the page to show when the server refuses (a participant who started elsewhere). */
  const sessionToken = async (study, session) => {
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
    keep(key, answer.token);
    return { token: answer.token, started: true };
  };

  const hasServer = async (study) => {
    if (window.jatos) return false;
    try {
      const ping = await getJson("api/ping");
      return ping && ping.study === study.study_id;
    } catch (e) {
      return false;
    }
  };

  const makeStore = (study, session, server, token) => {
    const localKey = `stim3d:${study.study_id}:${session.participant}:${session.session}:data`;
    const authorised = { Authorization: `Bearer ${token}` };
    let chain = Promise.resolve();
    let lastError = null;
    const saveNow = () => {
      const body = JSON.stringify(session);
      try { window.localStorage.setItem(localKey, body); } catch (e) { /* quota: the server or download has it */ }
      if (window.jatos) return Promise.resolve(jatos.submitResultData(body)).catch((e) => { lastError = e; });
      if (!server) return Promise.resolve();
      return fetch("api/session", { method: "PUT", body, headers: { "Content-Type": "application/json", ...authorised } })
        .then((r) => {
          if (!r.ok) throw new Error(`saving failed: HTTP ${r.status}`);
          lastError = null;
        })
        .catch((e) => { lastError = e; });
    };
    return {
      save: () => {
        chain = chain.then(saveNow);
        return chain;
      },
      flushed: () => chain.then(() => lastError),
      stored: async () => {
        if (server) {
          const query = `participant=${encodeURIComponent(session.participant)}&session=${encodeURIComponent(session.session)}`;
          const response = await fetch(`api/session?${query}`, { cache: "no-store", headers: authorised });
          if (response.ok) return response.json();
          if (response.status === 403) return undefined;  // the token kept here is no longer the session's
          throw new Error(`The study could not read your session (HTTP ${response.status}).`);
        }
        try { return JSON.parse(window.localStorage.getItem(localKey) || "null"); } catch (e) { return null; }
      },
    };
  };

  /* The display as recorded with the session (contract.Environment): nothing identifying. */
  const environment = () => ({
    screen: [window.screen.width, window.screen.height],
    window: [window.innerWidth, window.innerHeight],
    device_pixel_ratio: window.devicePixelRatio || 1,
  });

  window.Stim3dSession = { display, escapeHtml, fail, getJson, validName, validParticipant, urlParameters,
                           askParticipant, sessionId, sessionToken, forgetToken, hasServer, makeStore, environment };
})();
