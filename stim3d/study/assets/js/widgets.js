/* stim3d's response widgets: the jsPsych 8 plugin `jsPsychStim3dResponse` (name "stim3d-response").
 *
 * One plugin for every answer type of stim3d/scoring/answers.py. Given one contract Trial
 * (stim3d/study/contract.py) it shows the image scaled to fit the window, the prompt, the
 * trial's instructions and the widget of the trial's answer type, and finishes with
 * {response, rt_ms, trial_id, role} (+ presented_ms when present_ms is given), where
 * `response` is text in exactly the grammar RESPONSE_FORMS names, so `stim3d study score`
 * reads a person's answer with the same parser as a model's.
 *
 * Spatial answers are kept in the image's OWN pixels: a click or a drag is mapped from the
 * displayed (scaled) image back through its bounding box, and cells are hit-tested against
 * trial.grid's boxes. Every control has an accessible name and works from the keyboard
 * (cells are overlaid buttons "Row r, Column c", moved between with the arrow keys).
 *
 * With present_ms the image shows for that long, then a noise mask for mask_ms, then the
 * widget: without the image for non-spatial types; for spatial types on a blank frame of
 * the image's size with the grid's cell outlines (cells and clicks) or the image's outline
 * (box), since a person cannot click on an image that is gone. docs/study_widgets.md.
 *
 * One file past 400 lines on purpose: the page loads each script with a plain <script> tag (no bundler, so a
 * study folder works from any static host), and a jsPsych plugin is one global; splitting it would need more
 * shared globals between files than it would save.
 */
var jsPsychStim3dResponse = (function (jspsych) {
  "use strict";

  const ParameterType = jspsych.ParameterType;
  const info = {
    name: "stim3d-response",
    version: "1.0.0",
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
  const CLICKS = new Set(["cell", "cell_set", "strict_cell_set", "strict_cell_set_count"]);
  const MAX_DIGITS = 9; // the parsers read at most 9 digits as a number
  const MAX_TEXT = 4000; // contract.MAX_RESPONSE_CHARS
  const MAX_RT_MS = 3600000; // contract.MAX_RT_MS: a longer pause is recorded as this, never rejected
  const SVG = "http://www.w3.org/2000/svg";

  // -- the response texts (contract.RESPONSE_FORMS) -------------------------------------------------

  // A typed text as the scoring core reads it (scoring/parsers_actions.py parse_text): the markdown marks it drops
  // and the double quotes it would read as "the quoted part only" removed, white space collapsed, quotes and end
  // punctuation trimmed from the ends (its _EDGES). What the page submits is then exactly what scoring reads.
  const TEXT_DROPPED = /[*`_"\u201c\u201d]/g;
  const TEXT_EDGES = /^[\s'\u2018\u2019.,;:!?]+|[\s'\u2018\u2019.,;:!?]+$/g;
  const MAX_TYPED = 200; // a sign's text or an object's name; far below contract.MAX_RESPONSE_CHARS
  const cellText = (c) => `Row ${c.row}, Column ${c.col}`;
  const NO_CELL_TEXT = "Row 0, Column 0"; // a cell answer's "none" (scoring/rules.py NO_CELL)
  const clickText = (c) => `CLICK(R${c.row},C${c.col}); `;
  const formats = {
    integer: (n) => String(n),
    strict_count: (n) => `COUNT(${n})`,
    cell: (cells) => (cells.length === 1 ? cellText(cells[0]) : null),
    cell_set: (cells, none) => (cells.length ? cells.map(cellText).join("; ") : none ? "none" : null),
    strict_cell_set: (cells) => cells.map(clickText).join("") + "DONE",
    strict_cell_set_count: (cells, count) => (count === null ? null : cells.map(clickText).join("") + `SUBMIT(${count})`),
    box: (b) => `[${b.join(", ")}]`,
    text: (typed) => {
      const t = typed.replace(TEXT_DROPPED, "").replace(/\s+/g, " ").replace(TEXT_EDGES, "");
      return t || null;
    },
  };

  /** The cell of `grid` under the image point (x, y): the box holding it, the nearest centre among overlaps. */
  function cellAt(grid, x, y) {
    let best = null;
    let bestDistance = Infinity;
    for (const cell of grid.cells) {
      const [x0, y0, x1, y1] = cell.box;
      if (x < x0 || x >= x1 || y < y0 || y >= y1) continue;
      const d = (x - (x0 + x1) / 2) ** 2 + (y - (y0 + y1) / 2) ** 2;
      if (d < bestDistance) {
        best = cell;
        bestDistance = d;
      }
    }
    return best;
  }

  /** A non-negative whole number of at most 9 digits, or null ("007" -> 7). */
  function wholeNumber(text) {
    const t = String(text).trim();
    return new RegExp(`^\\d{1,${MAX_DIGITS}}$`).test(t) ? parseInt(t, 10) : null;
  }

  /** A non-negative decimal (a comma read as the decimal point), written back as typed, or null. */
  function decimal(text) {
    const t = String(text).trim().replace(",", ".");
    return /^\d{1,9}(\.\d{1,6})?$/.test(t) || /^\.\d{1,6}$/.test(t) ? (t[0] === "." ? "0" + t : t) : null;
  }

  /** 32-bit FNV-1a of a string (contract.fnv1a32): seeds the mask's noise, so a trial's mask is always the same. */
  function fnv1a32(text) {
    let h = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    return h;
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  function button(label, attrs) {
    return el("button", Object.assign({ type: "button", text: label }, attrs || {}));
  }

  const isTyping = (t) => t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "button"));

  // -- the stage: the scaled image, its overlay and cell buttons ------------------------------------

  /** The image (or a blank frame of its size) scaled to fit the window; maps display points to image pixels. */
  class Stage {
    constructor(trial, onImagePoint) {
      this.trial = trial;
      this.W = trial.width;
      this.H = trial.height;
      this.root = el("div", { class: "stim3d-stage" });
      this.image = el("img", { class: "stim3d-image", src: trial.image, alt: "The picture for this question",
                               draggable: "false" });
      this.frame = el("div", { class: "stim3d-frame", hidden: true, "aria-hidden": "true" });
      this.svg = document.createElementNS(SVG, "svg");
      this.svg.setAttribute("class", "stim3d-overlay");
      this.svg.setAttribute("viewBox", `0 0 ${this.W} ${this.H}`);
      this.svg.setAttribute("preserveAspectRatio", "none");
      this.svg.setAttribute("aria-hidden", "true");
      this.root.append(this.image, this.frame, this.svg);
      this.onImagePoint = onImagePoint;
      this.fit = () => this.resize();
      window.addEventListener("resize", this.fit);
    }

    /** Scale to the trial's width and about 60% of the window's height (small images grow up to 2x). */
    resize() {
      const trial = this.root.closest(".stim3d-trial");
      const available = trial ? trial.clientWidth : window.innerWidth;
      const scale = Math.min(available / this.W, (window.innerHeight * 0.6) / this.H, 2);
      this.root.style.width = `${Math.max(1, Math.floor(this.W * scale))}px`;
      this.root.style.height = `${Math.max(1, Math.floor(this.H * scale))}px`;
    }

    /** A viewport point in the image's own pixels (unclamped). */
    toImage(clientX, clientY) {
      const r = this.root.getBoundingClientRect();
      return { x: ((clientX - r.left) / r.width) * this.W, y: ((clientY - r.top) / r.height) * this.H };
    }

    /** Image pixels -> CSS percentages of the stage (for the overlaid buttons). */
    place(node, box) {
      const [x0, y0, x1, y1] = box;
      Object.assign(node.style, { left: `${(100 * x0) / this.W}%`, top: `${(100 * y0) / this.H}%`,
                                  width: `${(100 * (x1 - x0)) / this.W}%`, height: `${(100 * (y1 - y0)) / this.H}%` });
    }

    rect(box, cls, label) {
      const [x0, y0, x1, y1] = box;
      const r = document.createElementNS(SVG, "rect");
      for (const [k, v] of Object.entries({ x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: cls })) {
        r.setAttribute(k, v);
      }
      this.svg.appendChild(r);
      if (label !== undefined) {
        const t = document.createElementNS(SVG, "text");
        t.setAttribute("x", (x0 + x1) / 2);
        t.setAttribute("y", (y0 + y1) / 2);
        t.setAttribute("class", "stim3d-order");
        t.setAttribute("font-size", Math.max(10, Math.min(x1 - x0, y1 - y0) * 0.45));
        t.textContent = label;
        this.svg.appendChild(t);
      }
    }

    clear(cls) {
      for (const node of Array.from(this.svg.querySelectorAll(`.${cls}`))) node.remove();
      for (const node of Array.from(this.svg.querySelectorAll("text"))) node.remove();
    }

    /** After a timed presentation: a blank frame in place of the image, the grid's outlines drawn on it. */
    showFrame() {
      this.image.hidden = true;
      this.frame.hidden = false;
      this.root.classList.add("stim3d-framed");
      for (const cell of (this.trial.grid && this.trial.grid.cells) || []) this.rect(cell.box, "stim3d-outline");
    }

    destroy() {
      window.removeEventListener("resize", this.fit);
    }
  }

  /** Cell buttons over the stage (keyboard) and clicks on the stage (mouse), both calling onCell(cell). */
  function cellButtons(stage, grid, onCell) {
    const layer = el("div", { class: "stim3d-cells", role: "group", "aria-label": "Grid cells" });
    const buttons = new Map();
    const key = (r, c) => `${r},${c}`;
    for (const cell of grid.cells) {
      const b = button("", { class: "stim3d-cell", "aria-label": cellText(cell), "aria-pressed": "false",
                             tabindex: "-1", "data-row": cell.row, "data-col": cell.col });
      stage.place(b, cell.box);
      b.addEventListener("click", (e) => {
        e.stopPropagation();
        onCell(cell);
      });
      buttons.set(key(cell.row, cell.col), b);
      layer.appendChild(b);
    }
    const first = buttons.get(key(grid.cells[0].row, grid.cells[0].col));
    if (first) first.tabIndex = 0;
    layer.addEventListener("keydown", (e) => {
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      const at = e.target.dataset;
      if (!moves[e.key] || at.row === undefined) return;
      e.preventDefault();
      const next = buttons.get(key(+at.row + moves[e.key][0], +at.col + moves[e.key][1]));
      if (!next) return;
      for (const b of buttons.values()) b.tabIndex = -1;
      next.tabIndex = 0;
      next.focus();
    });
    stage.root.appendChild(layer);
    stage.root.classList.add("stim3d-clickable");
    stage.root.addEventListener("click", (e) => {
      const p = stage.toImage(e.clientX, e.clientY);
      const cell = cellAt(grid, p.x, p.y);
      if (cell) onCell(cell);
    });
    return (selected) => {
      const on = new Set(selected.map((c) => key(c.row, c.col)));
      for (const [k, b] of buttons) b.setAttribute("aria-pressed", on.has(k) ? "true" : "false");
    };
  }

  // -- the widgets: each builds its controls and offers value() -> response text or null --------------

  /** A whole-number entry with a keypad (0-9, minus, plus, delete); digits typed anywhere go into it. */
  function numberPad(body, changed, label) {
    const input = el("input", { type: "text", inputmode: "numeric", autocomplete: "off", class: "stim3d-entry",
                                "aria-label": label, maxlength: MAX_DIGITS, id: "stim3d-number" });
    const pad = el("div", { class: "stim3d-keypad", role: "group", "aria-label": "Keypad" });
    const set = (v) => {
      input.value = v;
      changed();
    };
    for (const d of "1234567890") pad.appendChild(button(d, { "aria-label": `Digit ${d}`, "data-key": d }));
    pad.appendChild(button("\u2212", { "aria-label": "One less" }));
    pad.appendChild(button("+", { "aria-label": "One more" }));
    pad.appendChild(button("\u232b", { "aria-label": "Delete last digit" }));
    pad.addEventListener("click", (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      const n = wholeNumber(input.value);
      if (b.dataset.key !== undefined) set((input.value + b.dataset.key).replace(/^0+(?=\d)/, "").slice(0, MAX_DIGITS));
      else if (b.textContent === "+") set(String(n === null ? 1 : Math.min(n + 1, 999999999)));
      else if (b.textContent === "\u2212") set(String(n === null || n === 0 ? 0 : n - 1));
      else set(input.value.slice(0, -1));
    });
    input.addEventListener("input", () => {
      input.value = input.value.replace(/\D/g, "").slice(0, MAX_DIGITS);
      changed();
    });
    body.append(el("label", { for: input.id, text: label }), input, pad);
    return {
      value: () => wholeNumber(input.value),
      key: (e) => {
        if (/^[0-9]$/.test(e.key)) set((input.value + e.key).replace(/^0+(?=\d)/, "").slice(0, MAX_DIGITS));
        else if (e.key === "Backspace") set(input.value.slice(0, -1));
        else return false;
        return true;
      },
      focus: () => input.focus(),
    };
  }

  /** Buttons of which one is chosen (aria-pressed); keys pick them too. */
  function choiceButtons(body, changed, labels, keys, groupLabel) {
    const group = el("div", { class: "stim3d-choices", role: "group", "aria-label": groupLabel, tabindex: "-1" });
    let chosen = null;
    const buttons = labels.map((label, i) => {
      const b = button(label, { "aria-pressed": "false", "aria-keyshortcuts": keys[i].toUpperCase(), class: "stim3d-choice" });
      b.addEventListener("click", () => pick(i));
      group.appendChild(b);
      return b;
    });
    function pick(i) {
      chosen = i;
      buttons.forEach((b, j) => b.setAttribute("aria-pressed", j === i ? "true" : "false"));
      changed();
    }
    body.appendChild(group);
    return {
      chosen: () => chosen,
      key: (e) => {
        const i = keys.indexOf(e.key.toLowerCase());
        if (i < 0) return false;
        pick(i);
        return true;
      },
      focus: () => group.focus(), // not a button: Enter must submit, not press the first option
    };
  }

  function textEntry(body, changed, label, opts) {
    const id = "stim3d-text";
    const input = opts.area
      ? el("textarea", { id, rows: 5, maxlength: MAX_TEXT, class: "stim3d-entry stim3d-area" })
      : el("input", { id, type: "text", autocomplete: "off", maxlength: opts.max || 40, class: "stim3d-entry",
                      inputmode: opts.inputmode || "text", autocapitalize: opts.upper ? "characters" : "off" });
    input.addEventListener("input", () => {
      if (opts.filter) input.value = opts.filter(input.value);
      changed();
    });
    body.append(el("label", { for: id, text: label }), input);
    return { input, focus: () => input.focus() };
  }

  /** The cell-clicking widgets: cell, cell_set and ROSE's strict click types. */
  function cellWidget(body, changed, trial, stage) {
    const type = trial.answer_type;
    const grid = trial.grid;
    if (!grid || !grid.cells || !grid.cells.length) throw new Error(`stim3d-response: ${type} needs trial.grid`);
    let cells = [];
    let none = false;
    const history = [];
    const strict = type.startsWith("strict_");
    const list = el("ol", { class: "stim3d-clicks", "aria-label": strict ? "Your clicks, in order" : "Selected cells" });
    const status = el("p", { class: "stim3d-status", "aria-live": "polite" });
    const undo = button("Undo", { "aria-label": "Undo the last change" });
    const tools = el("div", { class: "stim3d-tools" }, [undo]);
    let noneButton = null;
    let count = null;
    const mark = cellButtons(stage, grid, (cell) => {
      history.push({ cells: cells.slice(), none });
      const i = cells.findIndex((c) => c.row === cell.row && c.col === cell.col);
      if (i >= 0) cells.splice(i, 1);
      else if (type === "cell") cells = [cell];
      else cells.push(cell);
      none = false;
      draw(i >= 0 ? `Removed ${cellText(cell)}` : `Selected ${cellText(cell)}`);
    });
    undo.addEventListener("click", () => {
      if (!history.length) return;
      ({ cells, none } = history.pop());
      draw("Undone");
    });
    if (type === "cell_set" || type === "cell") { // odd_grid's "no odd cell" is Row 0, Column 0 (NO_CELL)
      noneButton = button("None of the cells", { "aria-pressed": "false" });
      noneButton.addEventListener("click", () => {
        history.push({ cells: cells.slice(), none });
        cells = [];
        none = true;
        draw("No cell selected: the answer is none");
      });
      tools.appendChild(noneButton);
    }
    body.append(tools, list, status);
    if (type === "strict_cell_set_count") {
      count = textEntry(body, changed, "How many cells do you submit?", { inputmode: "numeric", max: MAX_DIGITS,
                                                                         filter: (v) => v.replace(/\D/g, "") });
    }
    function draw(message) {
      stage.clear("stim3d-selected");
      cells.forEach((c, i) => stage.rect(c.box, "stim3d-selected", strict ? String(i + 1) : undefined));
      mark(cells);
      list.replaceChildren(...cells.map((c) => el("li", { text: strict ? `CLICK(R${c.row},C${c.col})` : cellText(c) })));
      if (noneButton) noneButton.setAttribute("aria-pressed", none ? "true" : "false");
      undo.disabled = !history.length;
      status.textContent = message || "";
      changed();
    }
    draw();
    return {
      value: () => {
        if (type === "cell_set") return formats.cell_set(cells, none);
        if (type === "cell" && none) return NO_CELL_TEXT;
        if (type === "strict_cell_set_count") return formats.strict_cell_set_count(cells, wholeNumber(count.input.value));
        return formats[type](cells);
      },
      focus: () => (stage.root.querySelector(".stim3d-cell[tabindex='0']") || undo).focus(),
    };
  }

  /** A box dragged on the image (kept in image pixels, x1/y1 exclusive, clamped) or typed in four fields. */
  function boxWidget(body, changed, trial, stage) {
    const W = trial.width;
    const H = trial.height;
    const names = [["x0", "Left edge x0"], ["y0", "Top edge y0"], ["x1", "Right edge x1 (exclusive)"],
                   ["y1", "Bottom edge y1 (exclusive)"]];
    const fields = names.map(([name, label]) => {
      const input = el("input", { id: `stim3d-box-${name}`, type: "text", inputmode: "numeric", autocomplete: "off",
                                  maxlength: 6, class: "stim3d-entry stim3d-coord" });
      input.addEventListener("input", () => {
        input.value = input.value.replace(/\D/g, "");
        draw();
      });
      return el("span", { class: "stim3d-field" }, [el("label", { for: input.id, text: label }), input]);
    });
    const inputs = fields.map((f) => f.querySelector("input"));
    const clear = button("Clear box", { "aria-label": "Clear the box" });
    const status = el("p", { class: "stim3d-status", "aria-live": "polite" });
    clear.addEventListener("click", () => {
      inputs.forEach((i) => (i.value = ""));
      draw();
    });
    body.append(el("fieldset", { class: "stim3d-box-fields" }, [el("legend", { text: "The box in image pixels (" +
      `${W} x ${H}; drag on the picture or type)` }), ...fields]), el("div", { class: "stim3d-tools" }, [clear]), status);
    const clampX = (v) => Math.min(W, Math.max(0, Math.round(v)));
    const clampY = (v) => Math.min(H, Math.max(0, Math.round(v)));
    const box = () => {
      const v = inputs.map((i) => wholeNumber(i.value));
      if (v.some((x) => x === null)) return null;
      return v[0] < v[2] && v[1] < v[3] && v[2] <= W && v[3] <= H ? v : null;
    };
    function draw() {
      stage.clear("stim3d-box");
      const b = box();
      if (b) stage.rect(b, "stim3d-box");
      const typed = inputs.every((i) => i.value !== "");
      status.textContent = b ? `Box [${b.join(", ")}]` : typed ? `Not a box inside the ${W} x ${H} picture` : "";
      changed();
    }
    let start = null;
    const setFrom = (p) => {
      const [ax, bx] = [clampX(start.x), clampX(p.x)].sort((a, b) => a - b);
      const [ay, by] = [clampY(start.y), clampY(p.y)].sort((a, b) => a - b);
      [ax, ay, bx, by].forEach((v, i) => (inputs[i].value = String(v)));
      draw();
    };
    stage.root.classList.add("stim3d-drawable");
    stage.root.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      stage.root.setPointerCapture(e.pointerId);
      start = stage.toImage(e.clientX, e.clientY);
    });
    stage.root.addEventListener("pointermove", (e) => start && setFrom(stage.toImage(e.clientX, e.clientY)));
    const end = (e) => {
      if (!start) return;
      setFrom(stage.toImage(e.clientX, e.clientY));
      start = null;
    };
    stage.root.addEventListener("pointerup", end);
    stage.root.addEventListener("pointercancel", () => (start = null));
    return { value: () => (box() ? formats.box(box()) : null), focus: () => inputs[0].focus() };
  }

  function buildWidget(body, changed, trial, stage) {
    const type = trial.answer_type;
    if (type === "integer" || type === "strict_count") {
      const pad = numberPad(body, changed, "Your answer (a whole number)");
      return { value: () => (pad.value() === null ? null : formats[type](pad.value())), key: pad.key, focus: pad.focus };
    }
    if (type === "yes_no") {
      const c = choiceButtons(body, changed, ["Yes", "No"], ["y", "n"], "Yes or no");
      return { value: () => (c.chosen() === null ? null : ["yes", "no"][c.chosen()]), key: c.key, focus: c.focus };
    }
    if (type === "choice") {
      const options = trial.options || [];
      if (!options.length) throw new Error("stim3d-response: a choice trial needs options");
      const c = choiceButtons(body, changed, options, options.map((_, i) => String(i + 1)), "Options");
      return { value: () => (c.chosen() === null ? null : options[c.chosen()]), key: c.key, focus: c.focus };
    }
    if (type === "letters") {
      const t = textEntry(body, changed, "The letters, in reading order", {
        upper: true, filter: (v) => v.toUpperCase().replace(/[^A-Z]/g, "") });
      return { value: () => t.input.value || null, focus: t.focus };
    }
    if (type === "number") {
      const t = textEntry(body, changed, "Your answer in metres", { inputmode: "decimal", max: 16,
                                                                   filter: (v) => v.replace(/[^0-9.,]/g, "") });
      return { value: () => decimal(t.input.value), focus: t.focus };
    }
    if (type === "text") { // AVA's OCR (the text on a sign) and an object named in the open (its name)
      const t = textEntry(body, changed, "Your answer", { max: MAX_TYPED });
      return { value: () => formats.text(t.input.value), focus: t.focus };
    }
    if (type === "rubric") {
      const t = textEntry(body, changed, "Your description", { area: true });
      return { value: () => (t.input.value.trim() ? t.input.value.trim() : null), focus: t.focus };
    }
    if (CLICKS.has(type)) return cellWidget(body, changed, trial, stage);
    if (type === "box") return boxWidget(body, changed, trial, stage);
    throw new Error(`stim3d-response: unknown answer type ${JSON.stringify(type)}`);
  }

  // -- timing: presentation, mask ---------------------------------------------------------------------

  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));

  /** Wait `ms` counted in animation frames (so the screen really changed); returns the frame time at the end. */
  async function holdFor(ms, startedAt) {
    let now = startedAt;
    while (now - startedAt < ms - 8) now = await nextFrame(); // within half a 60 Hz frame of the target
    return now;
  }

  /** A grey noise pattern for the mask, seeded by the trial id (the same trial always gets the same mask). */
  function mask(trial, stage) {
    const canvas = el("canvas", { class: "stim3d-mask", width: 64, height: Math.max(1, Math.round((64 * stage.H) / stage.W)),
                                  "aria-hidden": "true" });
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(canvas.width, canvas.height);
    let s = fnv1a32(trial.trial_id) || 1;
    for (let i = 0; i < img.data.length; i += 4) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const v = (s >>> 0) % 256;
      img.data[i] = img.data[i + 1] = img.data[i + 2] = v;
      img.data[i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    return canvas;
  }

  // -- the plugin ------------------------------------------------------------------------------------

  /** The trial's page: prompt, the stage (picture), then the instructions, the widget's body and Submit. */
  function layout(trial) {
    const type = trial.answer_type;
    const root = el("div", { class: "stim3d-trial", "data-answer-type": type });
    const prompt = el("p", { class: "stim3d-prompt", id: "stim3d-prompt", text: trial.prompt || "" });
    const instructions = el("p", { class: "stim3d-instructions", id: "stim3d-instructions",
                                   text: trial.instructions || "" });
    const stage = new Stage(trial);
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
    return { root, stage, stageBox, body, submit, answer };
  }

  class Stim3dResponsePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    async trial(display, params, onLoad) {
      const trial = params.trial;
      if (!trial || !trial.answer_type || !trial.trial_id) throw new Error("stim3d-response: no trial given");
      const timed = params.present_ms !== null && params.present_ms !== undefined;
      const { root, stage, stageBox, body, submit, answer } = layout(trial);
      display.replaceChildren(root);
      stage.resize();

      let widget = null;
      const changed = () => {
        submit.disabled = !widget || widget.value() === null;
      };
      widget = buildWidget(body, changed, trial, stage);
      changed();
      let started = null; // when the widget showed: keys and Submit do nothing before
      let presented = null;
      let resolveTrial = null;
      const done = new Promise((resolve) => (resolveTrial = resolve));
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
      submit.addEventListener("click", finish);
      document.addEventListener("keydown", onKey);
      if (onLoad) onLoad();

      presented = await present(params, trial, { root, stage, stageBox, answer });
      root.dataset.ready = "true"; // the page (and tests) may answer from now on
      started = performance.now();
      widget.focus();
      return done;
    }
  }

  /** Show the trial once its picture is decoded; timed: picture, mask, then the answer. Returns presented_ms. */
  async function present(params, trial, { root, stage, stageBox, answer }) {
    const timed = params.present_ms !== null && params.present_ms !== undefined;
    root.style.visibility = "hidden";
    answer.hidden = timed; // nothing but the picture until the mask is gone
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
    answer.hidden = false;
    return Math.round(hidden - shown);
  }
  Stim3dResponsePlugin.info = info;
  /** The pure parts, for tests and for the page (e.g. writing a gold as a response would). */
  Stim3dResponsePlugin.formats = formats;
  Stim3dResponsePlugin.cellAt = cellAt;
  return Stim3dResponsePlugin;
})(jsPsychModule);
