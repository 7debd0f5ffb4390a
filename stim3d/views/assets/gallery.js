(function () {
  "use strict";
  var cards = Array.prototype.slice.call(document.querySelectorAll(".card"));
  var items = null;  // parsed on first use: nothing per item happens at load
  function data() {
    if (items === null) { items = JSON.parse(document.getElementById("items").textContent); }
    return items;
  }
  var count = document.getElementById("count");
  function showCount() {
    var shown = 0;
    for (var i = 0; i < cards.length; i++) { if (!cards[i].hidden) { shown++; } }
    count.textContent = "showing " + shown + " of " + cards.length;
  }
  function applyFilters() {
    var family = document.getElementById("f-family").value;
    document.querySelectorAll("label.axis").forEach(function (label) {
      var applies = family === "" || label.dataset.families.split(" ").indexOf(family) >= 0;
      if (!applies) { label.querySelectorAll("select,input").forEach(function (el) { el.value = ""; }); }
      label.hidden = !applies;
    });
    var tests = [];
    document.querySelectorAll(".f-axis").forEach(function (el) {
      if (el.value !== "") { tests.push({k: "k" + el.dataset.k, eq: el.value}); }
    });
    document.querySelectorAll(".f-min,.f-max").forEach(function (el) {
      if (el.value !== "") {
        tests.push({k: "k" + el.dataset.k, num: parseFloat(el.value), min: el.classList.contains("f-min")});
      }
    });
    cards.forEach(function (card) {
      var ok = family === "" || card.dataset.family === family;
      for (var t = 0; ok && t < tests.length; t++) {
        var test = tests[t], value = card.dataset[test.k];
        if (test.eq !== undefined) { ok = value === test.eq; }
        else if (value === undefined) { ok = false; }
        else { ok = test.min ? parseFloat(value) >= test.num : parseFloat(value) <= test.num; }
      }
      card.hidden = !ok;
    });
    showCount();
  }
  document.getElementById("filters").addEventListener("input", applyFilters);
  document.getElementById("filters").addEventListener("change", applyFilters);
  document.getElementById("f-reset").addEventListener("click", function () {
    document.getElementById("filters").reset();
    applyFilters();
  });

  var dialog = document.getElementById("detail"), stage = document.getElementById("d-stage");
  var image = document.getElementById("d-image"), info = document.getElementById("d-info");
  var toggles = Array.prototype.slice.call(document.querySelectorAll(".toggles input"));
  var current = -1;
  function esc(text) {
    var d = document.createElement("div");
    d.textContent = String(text);
    return d.innerHTML;
  }
  function fit(item) {
    var maxW = Math.min(window.innerWidth * 0.62, 980), maxH = window.innerHeight * 0.78;
    var scale = Math.min(maxW / item.w, maxH / item.h);
    if (scale >= 1) { scale = Math.max(1, Math.floor(scale)); }
    stage.style.width = Math.round(item.w * scale) + "px";
    stage.style.height = Math.round(item.h * scale) + "px";
    image.classList.toggle("pixels", scale >= 2);
  }
  function layerImage(name) {
    var el = stage.querySelector("img.layer-" + name);
    if (!el) {
      el = document.createElement("img");
      el.className = "layer layer-" + name;
      el.alt = "";
      stage.appendChild(el);
    }
    return el;
  }
  function showLayers() {
    var item = data()[current];
    toggles.forEach(function (box) {
      var name = box.dataset.layer, src = item.layers[name];
      box.disabled = !src;
      var el = layerImage(name);
      var on = box.checked && !!src;
      if (on && el.getAttribute("src") !== src) { el.src = src; }  // a layer loads only when switched on
      el.hidden = !on;
    });
  }
  function table(item) {
    var grid = item.o.some(function (o) { return o[9] !== ""; });
    var rows = item.o.map(function (o) {
      return "<tr><td><span class=\"sw\" style=\"background:" + o[8] + "\"></span> " + o[0] + "</td><td>" + esc(o[1]) +
        "</td><td>" + esc(o[2]) + "</td><td>" + o[3] + "</td><td>" + o[4] + "</td><td>" + o[5] + "</td><td>" + o[6] +
        "</td><td>" + o[7] + "</td>" + (grid ? "<td>" + esc(o[9]) + "</td>" : "") + "</tr>";
    }).join("");
    return "<table><tr><th>id</th><th>shape</th><th>colour</th><th>size</th><th title=\"visibility\">vis.</th>" +
      "<th title=\"occlusion\">occl.</th><th title=\"truncation\">trunc.</th><th title=\"visible pixels\">px</th>" +
      (grid ? "<th>row,col</th>" : "") + "</tr>" + rows + "</table>";
  }
  function open(index, keepHash) {
    var item = data()[index];
    current = index;
    document.getElementById("d-title").textContent = item.id + "  ·  " + item.family + "  ·  " + item.w + "×" + item.h;
    fit(item);
    image.src = item.image;
    showLayers();
    var qa = item.q.map(function (q) {
      return "<p class=\"qa\">" + esc(q[0]) + " → <b>" + esc(q[1]) + "</b> <span class=\"prov\">(" + esc(q[2]) + ")</span></p>";
    }).join("");
    var diff = Object.keys(item.d).map(function (k) { return esc(k) + " <b>" + esc(item.d[k]) + "</b>"; }).join(" · ");
    info.innerHTML = "<h3>questions</h3>" + qa + "<h3>difficulty</h3><p>" + diff + "</p><h3>objects</h3>" + table(item) +
      "<p class=\"prov\">" + esc(item.prov) + "</p><p><a href=\"" + item.image + "\">image.png</a> · <a href=\"" + item.mask +
      "\">mask.png</a> · <a href=\"" + item.json + "\">item.json</a></p>";
    if (!dialog.open) { dialog.showModal(); }
    if (!keepHash) { history.replaceState(null, "", "#" + hashFor(item)); }
  }
  function hashFor(item) {
    var on = toggles.filter(function (b) { return b.checked; }).map(function (b) { return b.dataset.layer; });
    return "item=" + encodeURIComponent(item.id) + (on.length ? "&show=" + on.join(",") : "");
  }
  function step(delta) {
    var visible = cards.filter(function (c) { return !c.hidden; }).map(function (c) { return +c.dataset.i; });
    if (!visible.length) { return; }
    var at = visible.indexOf(current);
    open(visible[(at + delta + visible.length) % visible.length]);
  }
  document.getElementById("cards").addEventListener("click", function (event) {
    var card = event.target.closest(".card");
    if (card) { open(+card.dataset.i); }
  });
  document.getElementById("cards").addEventListener("keydown", function (event) {
    var card = event.target.closest(".card");
    if (card && event.key === "Enter") { open(+card.dataset.i); }
  });
  toggles.forEach(function (box) {
    box.addEventListener("change", function () {
      showLayers();
      history.replaceState(null, "", "#" + hashFor(data()[current]));
    });
  });
  document.getElementById("d-prev").addEventListener("click", function () { step(-1); });
  document.getElementById("d-next").addEventListener("click", function () { step(1); });
  document.getElementById("d-close").addEventListener("click", function () { dialog.close(); });
  dialog.addEventListener("close", function () { history.replaceState(null, "", location.pathname + location.search); });
  dialog.addEventListener("keydown", function (event) {
    if (event.key === "ArrowLeft") { step(-1); } else if (event.key === "ArrowRight") { step(1); }
  });
  function fromHash() {
    var params = new URLSearchParams(location.hash.slice(1)), id = params.get("item");
    if (!id) { return; }
    var shown = (params.get("show") || "").split(",");
    toggles.forEach(function (box) { box.checked = shown.indexOf(box.dataset.layer) >= 0; });
    var index = data().findIndex(function (item) { return item.id === id; });
    if (index >= 0) { open(index, true); }
  }
  window.addEventListener("hashchange", fromHash);
  showCount();
  fromHash();
})();
