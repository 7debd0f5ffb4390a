/* An optional minimum window size (`stim3d study build --min-window WxH`, study.json options.min_window): while the
 * browser window is smaller, a notice covers the page and asks the participant to enlarge it (or to switch to full
 * screen, or to use a larger screen when theirs is too small), and nothing behind it can be clicked or typed into.
 * flow.js starts the study only once the window first fits, and the notice comes back whenever the window shrinks
 * below the minimum again. A small check of our own: jsPsych's browser-check plugin is not among the vendored ones.
 * window.Stim3dWindow.
 */
(() => {
  "use strict";

  const fits = ([width, height]) => window.innerWidth >= width && window.innerHeight >= height;
  // A screen (CSS pixels, either way round) too small for the window asked: no enlarging helps there.
  const screenTooSmall = ([width, height]) => Math.max(window.screen.width, window.screen.height) < width ||
    Math.min(window.screen.width, window.screen.height) < Math.min(width, height);

  const text = (size) => {
    const [width, height] = size;
    const now = `${window.innerWidth} x ${window.innerHeight}`;
    if (screenTooSmall(size)) {
      return `This study needs a screen of at least ${width} x ${height} pixels, and this one is smaller. Please ` +
             "open the link on a computer or a tablet with a larger screen.";
    }
    return `Please make this window larger: the study needs at least ${width} x ${height} pixels, and it is ` +
           `${now} now. Maximise the window or switch to full screen; the study goes on as soon as it fits.`;
  };

  /* Hold the page behind the notice while the window is smaller than `size` ([width, height]); resolves once the
   * window first fits (at once when `size` is null or it already fits). */
  const guard = (size) => {
    if (!size) return Promise.resolve();
    const message = document.createElement("p");
    message.id = "stim3d-window-message";
    const full = document.createElement("button");
    full.type = "button";
    full.className = "jspsych-btn";
    full.textContent = "Full screen";
    full.addEventListener("click", () => {
      if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
    });
    const notice = document.createElement("div");
    notice.className = "stim3d-window-notice";
    notice.setAttribute("role", "alertdialog");
    notice.setAttribute("aria-modal", "true");
    notice.setAttribute("aria-label", "Window too small");
    notice.setAttribute("aria-describedby", message.id);
    const box = document.createElement("div");
    box.className = "stim3d-page";
    box.append(message, full);
    notice.appendChild(box);
    document.body.appendChild(notice);
    const update = () => {
      const ok = fits(size);
      notice.hidden = ok;
      full.hidden = screenTooSmall(size) || !document.documentElement.requestFullscreen;
      if (!ok) message.textContent = text(size);
    };
    window.addEventListener("resize", update);
    // Keys go nowhere while the notice shows (an Enter would otherwise submit the trial behind it).
    window.addEventListener("keydown", (e) => {
      if (!notice.hidden && e.target !== full) {
        e.stopImmediatePropagation();
        e.preventDefault();
      }
    }, true);
    update();
    return new Promise((resolve) => {
      const check = () => {
        if (!fits(size)) return;
        window.removeEventListener("resize", check);
        resolve();
      };
      window.addEventListener("resize", check);
      check();
    });
  };

  window.Stim3dWindow = { guard, fits };
})();
