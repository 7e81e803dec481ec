// Keeps a running run's page current: progress from the server's event stream (or, where
// EventSource is missing, polling), and the metrics, charts and slowest samples swapped in
// from /runs/{id}/live every few seconds. No other script runs on these pages.
(function () {
  "use strict";
  var box = document.getElementById("progress-box");
  if (!box || !box.dataset.stream) return;
  var liveUrl = box.dataset.live;
  var lastRefresh = 0;
  var refreshing = false;

  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = String(value);
  }

  function refreshBody(force) {
    var now = Date.now();
    if (refreshing || (!force && now - lastRefresh < 5000)) return;
    refreshing = true;
    lastRefresh = now;
    fetch(liveUrl, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        // Server-rendered and escaped like every page: no script in it runs.
        if (html !== null) document.getElementById("live-body").innerHTML = html;
      })
      .catch(function () {})
      .then(function () { refreshing = false; });
  }

  function update(p) {
    var bar = document.getElementById("progress");
    if (bar) { bar.max = Math.max(1, p.total); bar.value = p.done; }
    text("done", p.done);
    text("total", p.total);
    text("passed", p.passed);
    var status = document.getElementById("status");
    if (status) { status.textContent = p.status; status.className = "badge " + p.status; }
    if (p.status !== "running") {
      text("live-note", "finished: " + p.status);
      refreshBody(true);
      return true;
    }
    refreshBody(false);
    return false;
  }

  function poll() {
    var url = box.dataset.stream.replace(/\/stream$/, "/progress");
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (p) { if (!update(p)) setTimeout(poll, 2000); })
      .catch(function () { setTimeout(poll, 5000); });
  }

  if (!window.EventSource) { poll(); return; }
  var source = new EventSource(box.dataset.stream);
  source.addEventListener("progress", function (e) {
    if (update(JSON.parse(e.data))) source.close();
  });
})();
