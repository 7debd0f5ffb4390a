/* The answer controls of each answer type, under the picture: the number pad, choice buttons, text entries, cells
 * clicked on the picture (cell, cell_set, ROSE's strict click types) and a box dragged on it. Each builder appends
 * its controls to the trial's body and returns {value, key?, focus}: value() is the response text (responses.js)
 * or null while the answer is incomplete, key(e) takes a key pressed anywhere on the page (true when used), focus()
 * puts the keyboard where the answer starts. Every control has an accessible name; the tests drive them by it.
 * window.Stim3dAnswerWidgets.buildWidget(body, changed, trial, stage); docs/study_widgets.md.
 */
(() => {
  "use strict";

  const { el, button, cellButtons } = window.Stim3dStage;
  const { MAX_DIGITS, MAX_TEXT, MAX_TYPED, NO_CELL_TEXT, cellText, formats, wholeNumber, decimal } = window.Stim3dResponses;
  const CLICKS = new Set(["cell", "cell_set", "strict_cell_set", "strict_cell_set_count"]);
  const withDigit = (value, digit) => (value + digit).replace(/^0+(?=\d)/, "").slice(0, MAX_DIGITS);

  /** A whole-number entry with a keypad (0-9, minus, plus, delete); digits typed anywhere go into it. */
  const numberPad = (body, changed, label) => {
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
      if (b.dataset.key !== undefined) set(withDigit(input.value, b.dataset.key));
      else if (b.textContent === "+") set(String(n === null ? 1 : Math.min(n + 1, 999999999)));
      else if (b.textContent === "\u2212") set(String(n === null || n === 0 ? 0 : n - 1));
      else set(input.value.slice(0, -1));
    });
    input.addEventListener("input", () => {
      input.value = input.value.replace(/\D/g, "").slice(0, MAX_DIGITS);
      changed();
    });
    body.append(el("div", { class: "stim3d-row" }, [el("label", { for: input.id, text: label }), input]), pad);
    return {
      value: () => wholeNumber(input.value),
      key: (e) => {
        if (/^[0-9]$/.test(e.key)) set(withDigit(input.value, e.key));
        else if (e.key === "Backspace") set(input.value.slice(0, -1));
        else return false;
        return true;
      },
      focus: () => input.focus(),
    };
  };

  /** Buttons of which one is chosen (aria-pressed); keys pick them too. */
  const choiceButtons = (body, changed, labels, keys, groupLabel) => {
    const group = el("div", { class: "stim3d-choices", role: "group", "aria-label": groupLabel, tabindex: "-1" });
    let chosen = null;
    const pick = (i) => {
      chosen = i;
      buttons.forEach((b, j) => b.setAttribute("aria-pressed", j === i ? "true" : "false"));
      changed();
    };
    const buttons = labels.map((label, i) => {
      const b = button(label, { "aria-pressed": "false", "aria-keyshortcuts": keys[i].toUpperCase(),
                                class: "stim3d-choice" });
      b.addEventListener("click", () => pick(i));
      group.appendChild(b);
      return b;
    });
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
  };

  const textEntry = (body, changed, label, opts) => {
    const id = opts.id || "stim3d-text";
    const input = opts.area
      ? el("textarea", { id, rows: 4, maxlength: MAX_TEXT, class: "stim3d-entry stim3d-area" })
      : el("input", { id, type: "text", autocomplete: "off", maxlength: opts.max || 40, class: "stim3d-entry",
                      inputmode: opts.inputmode || "text", autocapitalize: opts.upper ? "characters" : "off" });
    input.addEventListener("input", () => {
      if (opts.filter) input.value = opts.filter(input.value);
      changed();
    });
    body.append(el("div", { class: opts.area ? "stim3d-column" : "stim3d-row" },
                   [el("label", { for: id, text: label }), input]));
    return { input, focus: () => input.focus() };
  };

  /** The cell-clicking widgets: cell, cell_set and ROSE's strict click types. */
  const cellWidget = (body, changed, trial, stage) => {
    const type = trial.answer_type;
    const grid = trial.grid;
    if (!grid || !grid.cells || !grid.cells.length) throw new Error(`stim3d-response: ${type} needs trial.grid`);
    let cells = [];
    let none = false;
    const history = [];
    const strict = type.startsWith("strict_");
    const list = el("ol", { class: `stim3d-clicks${strict ? " stim3d-ordered" : ""}`,
                            "aria-label": strict ? "Your clicks, in order" : "Selected cells" });
    const status = el("p", { class: "stim3d-status", "aria-live": "polite" });
    const undo = button("Undo", { "aria-label": "Undo the last change" });
    const tools = el("div", { class: "stim3d-tools" }, [undo]);
    let noneButton = null;
    let count = null;
    const draw = (message) => {
      stage.clear("stim3d-selected");
      cells.forEach((c, i) => stage.rect(c.box, "stim3d-selected", strict ? String(i + 1) : undefined));
      mark(cells);
      list.replaceChildren(...cells.map((c) => el("li", { text: cellText(c) })));
      if (noneButton) noneButton.setAttribute("aria-pressed", none ? "true" : "false");
      undo.disabled = !history.length;
      status.textContent = message || "";
      changed();
    };
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
    tools.appendChild(list);
    body.append(tools, status);
    if (type === "strict_cell_set_count") {
      count = textEntry(body, changed, "How many did you click?", { inputmode: "numeric", max: MAX_DIGITS,
                                                                         filter: (v) => v.replace(/\D/g, "") });
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
  };

  /** A box dragged on the image (kept in image pixels, x1/y1 exclusive, clamped) or typed in four fields. */
  const boxWidget = (body, changed, trial, stage) => {
    const W = trial.width;
    const H = trial.height;
    const names = [["x0", "Left edge x0"], ["y0", "Top edge y0"], ["x1", "Right edge x1 (exclusive)"],
                   ["y1", "Bottom edge y1 (exclusive)"]];
    const status = el("p", { class: "stim3d-status", "aria-live": "polite" });
    const clampX = (v) => Math.min(W, Math.max(0, Math.round(v)));
    const clampY = (v) => Math.min(H, Math.max(0, Math.round(v)));
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
    const box = () => {
      const v = inputs.map((i) => wholeNumber(i.value));
      if (v.some((x) => x === null)) return null;
      return v[0] < v[2] && v[1] < v[3] && v[2] <= W && v[3] <= H ? v : null;
    };
    const draw = () => {
      stage.clear("stim3d-box");
      const b = box();
      if (b) stage.rect(b, "stim3d-box");
      const typed = inputs.every((i) => i.value !== "");
      status.textContent = b ? `Box [${b.join(", ")}]` : typed ? `Not a box inside the ${W} x ${H} picture` : "";
      changed();
    };
    const clear = button("Clear box", { "aria-label": "Clear the box" });
    clear.addEventListener("click", () => {
      inputs.forEach((i) => { i.value = ""; });
      draw();
    });
    const legend = el("legend", { text: `Or type its edges in picture pixels (${W} x ${H})` });
    body.append(el("fieldset", { class: "stim3d-box-fields" }, [legend, ...fields]),
                el("div", { class: "stim3d-tools" }, [clear, status]));
    let start = null;
    const setFrom = (p) => {
      const [ax, bx] = [clampX(start.x), clampX(p.x)].sort((a, b) => a - b);
      const [ay, by] = [clampY(start.y), clampY(p.y)].sort((a, b) => a - b);
      [ax, ay, bx, by].forEach((v, i) => { inputs[i].value = String(v); });
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
    stage.root.addEventListener("pointerup", (e) => {
      if (!start) return;
      setFrom(stage.toImage(e.clientX, e.clientY));
      start = null;
    });
    stage.root.addEventListener("pointercancel", () => { start = null; });
    return { value: () => (box() ? formats.box(box()) : null), focus: () => inputs[0].focus() };
  };

  /** The widget of the trial's answer type, built into `body`; `changed()` is called whenever its answer changes. */
  const buildWidget = (body, changed, trial, stage) => {
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
  };

  window.Stim3dAnswerWidgets = { buildWidget };
})();
