// The only script on these pages. It keeps pages current without running anything it
// receives: a running run's progress from the server's event stream (or, where
// EventSource is missing, polling), its metrics and charts swapped in from
// /runs/{id}/live every few seconds, and pages whose figures are still being computed
// (a big run's first view) reloaded once they are ready.
(function () {
  "use strict";

  // A page waiting for a computation: poll until the server says 200, then reload.
  function waitThenReload(url) {
    fetch(url, { credentials: "same-origin" })
      .then(function (r) {
        if (r.status === 200) { window.location.reload(); return; }
        setTimeout(function () { waitThenReload(url); }, 1000);
      })
      .catch(function () { setTimeout(function () { waitThenReload(url); }, 3000); });
  }

  var poll = document.querySelector("[data-poll]");
  if (poll) waitThenReload(poll.dataset.poll);

  var box = document.getElementById("progress-box");
  if (!box) return;
  if (box.dataset.pending) { waitThenReload(box.dataset.live); return; }
  if (!box.dataset.stream) return;
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
      .then(function (r) { return r.status === 200 ? r.text() : null; })
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

  function pollProgress() {
    var url = box.dataset.stream.replace(/\/stream$/, "/progress");
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (p) { if (!update(p)) setTimeout(pollProgress, 2000); })
      .catch(function () { setTimeout(pollProgress, 5000); });
  }

  if (!window.EventSource) { pollProgress(); return; }
  var source = new EventSource(box.dataset.stream);
  source.addEventListener("progress", function (e) {
    if (update(JSON.parse(e.data))) source.close();
  });
})();
