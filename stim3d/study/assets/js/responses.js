/* The text each response widget submits: exactly the grammar stim3d/study/contract.py RESPONSE_FORMS names and
 * stim3d/scoring/answers.py parses, so `stim3d study score` reads a person's answer with the same parser and rule
 * as a model's. Pure functions, no DOM: answer_widgets.js writes its answers through them, and the tests read the
 * limits below against the contract's. window.Stim3dResponses.
 */
(() => {
  "use strict";

  const MAX_DIGITS = 9; // the parsers read at most 9 digits as a number
  const MAX_TEXT = 4000; // contract.MAX_RESPONSE_CHARS
  const MAX_TYPED = 200; // a sign's text or an object's name; far below contract.MAX_RESPONSE_CHARS
  const MAX_RT_MS = 3600000; // contract.MAX_RT_MS: a longer pause is recorded as this, never rejected

  // A typed text as the scoring core reads it (scoring/parsers_actions.py parse_text): the markdown marks it drops
  // and the double quotes it would read as "the quoted part only" removed, white space collapsed, quotes and end
  // punctuation trimmed from the ends (its _EDGES). What the page submits is then exactly what scoring reads.
  const TEXT_DROPPED = /[*`_"\u201c\u201d]/g;
  const TEXT_EDGES = /^[\s'\u2018\u2019.,;:!?]+|[\s'\u2018\u2019.,;:!?]+$/g;

  const cellText = (c) => `Row ${c.row}, Column ${c.col}`;
  const NO_CELL_TEXT = "Row 0, Column 0"; // a cell answer's "none" (scoring/rules.py NO_CELL)
  const clickText = (c) => `CLICK(R${c.row},C${c.col}); `;

  const formats = {
    integer: (n) => String(n),
    strict_count: (n) => `COUNT(${n})`,
    cell: (cells) => (cells.length === 1 ? cellText(cells[0]) : null),
    cell_set: (cells, none) => (cells.length ? cells.map(cellText).join("; ") : none ? "none" : null),
    strict_cell_set: (cells) => `${cells.map(clickText).join("")}DONE`,
    strict_cell_set_count: (cells, count) => (count === null ? null : `${cells.map(clickText).join("")}SUBMIT(${count})`),
    box: (b) => `[${b.join(", ")}]`,
    text: (typed) => typed.replace(TEXT_DROPPED, "").replace(/\s+/g, " ").replace(TEXT_EDGES, "") || null,
  };

  /** The cell of `grid` under the image point (x, y): the box holding it, the nearest centre among overlaps. */
  const cellAt = (grid, x, y) => {
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
  };

  /** A non-negative whole number of at most 9 digits, or null ("007" -> 7). */
  const wholeNumber = (text) => {
    const t = String(text).trim();
    return new RegExp(`^\\d{1,${MAX_DIGITS}}$`).test(t) ? parseInt(t, 10) : null;
  };

  /** A non-negative decimal (a comma read as the decimal point), written back as typed, or null. */
  const decimal = (text) => {
    const t = String(text).trim().replace(",", ".");
    if (!/^\d{1,9}(\.\d{1,6})?$/.test(t) && !/^\.\d{1,6}$/.test(t)) return null;
    return t[0] === "." ? `0${t}` : t;
  };

  window.Stim3dResponses = { MAX_DIGITS, MAX_TEXT, MAX_TYPED, MAX_RT_MS, NO_CELL_TEXT, cellText, formats, cellAt,
                             wholeNumber, decimal };
})();
