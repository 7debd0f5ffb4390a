/* FNV-1a, 32 bits, over a string's UTF-8 bytes: the page's one hash, written once here (stim3d/study/contract.py
 * fnv1a32 is its Python twin). plan.js ranks each participant's trials by it, staircase.js picks a step's trial with
 * it, and stage.js seeds a trial's mask with it. A browser gets window.Stim3dHash (index.html loads this file
 * first); node, in the tests, gets module.exports (plan.js and staircase.js require it from beside them).
 */
((root) => {
  "use strict";

  const utf8Bytes = (text) => (typeof TextEncoder !== "undefined" ? new TextEncoder().encode(text)
    : Buffer.from(text, "utf8"));

  /* The hash of `text` as an unsigned 32-bit integer (Math.imul keeps the multiplication in 32 bits). */
  const fnv1a32 = (text) => {
    let value = 0x811c9dc5;
    for (const byte of utf8Bytes(String(text))) value = Math.imul(value ^ byte, 0x01000193) >>> 0;
    return value >>> 0;
  };

  const api = { fnv1a32 };
  if (root) root.Stim3dHash = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : null);
