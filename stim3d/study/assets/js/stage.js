/* The picture of a response trial: the stage (the image, or a blank frame of its size, scaled to fit the window),
 * its overlay (selected cells, the box, a grid's outlines), the keyboard's cell buttons over it, and the noise mask
 * of a timed presentation. Spatial answers stay in the image's OWN pixels: a click or a drag is mapped back
 * through the displayed image's bounding box. DOM helpers `el` and `button` are shared with answer_widgets.js.
 * window.Stim3dStage.
 *
 * Fitting (Stage.resize): the picture takes the trial's width and the height the window leaves once everything
 * else of the page is laid out (the progress bar, the prompt above the picture, the instructions, the controls and
 * Submit below it), so the question, the picture and Submit show together without scrolling, on a laptop and on a
 * phone held upright; a small image grows at most MAX_GROWTH times, and the picture never shrinks below MIN_SHARE
 * of the window's height (a page that cannot fit then scrolls rather than shows a stamp-sized picture). Once the
 * participant starts answering, only a window resize fits it again (Stage.watch).
 */
(() => {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const MAX_GROWTH = 2;
  const MIN_SHARE = 0.25;
  const FIT_SLACK_PX = 4; // rounding, and the focus ring of the last control

  const el = (tag, attrs, children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  };

  const button = (label, attrs) => el("button", { type: "button", text: label, ...(attrs || {}) });

  const svgNode = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };

  /** The image (or a blank frame of its size) scaled to fit the window; maps display points to image pixels. */
  class Stage {
    constructor(trial) {
      this.trial = trial;
      this.W = trial.width;
      this.H = trial.height;
      this.root = el("div", { class: "stim3d-stage" });
      this.image = el("img", { class: "stim3d-image", src: trial.image, alt: "The picture for this question",
                               draggable: "false" });
      this.frame = el("div", { class: "stim3d-frame", hidden: true, "aria-hidden": "true" });
      this.svg = svgNode("svg", { class: "stim3d-overlay", viewBox: `0 0 ${this.W} ${this.H}`,
                                  preserveAspectRatio: "none", "aria-hidden": "true" });
      this.root.append(this.image, this.frame, this.svg);
      this.fit = () => this.resize();
      this.watcher = null;
      window.addEventListener("resize", this.fit);
    }

    /** Fit now, again whenever the window changes, and whenever the height of `others` (prompt, controls) changes
     * until the participant first points at or presses a key in the trial: after that the picture keeps its size
     * (a list of picks growing under it must not move the cell the participant is about to click). */
    watch(others) {
      this.resize();
      if (typeof ResizeObserver === "undefined") return;
      let pending = false;
      let answering = false;
      const trial = this.root.closest(".stim3d-trial") || this.root;
      for (const type of ["pointerdown", "keydown"]) {
        trial.addEventListener(type, () => { answering = true; }, { capture: true, once: true });
      }
      this.watcher = new ResizeObserver(() => {  // one fit per frame, after layout: never a resize loop
        if (pending || answering) return;
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          this.resize();
        });
      });
      for (const node of others) this.watcher.observe(node);
    }

    /** The scale that fits (see the file's comment): the page's height without the picture, the window's height. */
    resize() {
      const trial = this.root.closest(".stim3d-trial");
      const width = trial ? trial.clientWidth : window.innerWidth;
      const shown = this.root.getBoundingClientRect().height;
      const page = document.documentElement.getBoundingClientRect().height;
      const room = window.innerHeight - (page - shown) - FIT_SLACK_PX;
      const height = Math.max(room, window.innerHeight * MIN_SHARE);
      const scale = Math.min(width / this.W, height / this.H, MAX_GROWTH);
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
      this.svg.appendChild(svgNode("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: cls }));
      if (label === undefined) return;
      const text = svgNode("text", { x: (x0 + x1) / 2, y: (y0 + y1) / 2, class: "stim3d-order",
                                     "font-size": Math.max(10, Math.min(x1 - x0, y1 - y0) * 0.45) });
      text.textContent = label;
      this.svg.appendChild(text);
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
      if (this.watcher) this.watcher.disconnect();
    }
  }

  /** Cell buttons over the stage (keyboard) and clicks on the stage (mouse, touch), both calling onCell(cell). */
  const cellButtons = (stage, grid, onCell) => {
    const { cellText, cellAt } = window.Stim3dResponses;
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
  };

  /** A grey noise pattern for the mask, seeded by the trial id (the same trial always gets the same mask). */
  const mask = (trial, stage) => {
    const canvas = el("canvas", { class: "stim3d-mask", width: 64, height: Math.max(1, Math.round((64 * stage.H) / stage.W)),
                                  "aria-hidden": "true" });
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(canvas.width, canvas.height);
    let s = window.Stim3dHash.fnv1a32(trial.trial_id) || 1;
    for (let i = 0; i < img.data.length; i += 4) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const v = (s >>> 0) % 256;
      img.data[i] = v;
      img.data[i + 1] = v;
      img.data[i + 2] = v;
      img.data[i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    return canvas;
  };

  window.Stim3dStage = { el, button, Stage, cellButtons, mask };
})();
