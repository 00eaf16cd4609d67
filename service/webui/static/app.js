// Sluice web UI: refreshes the live parts of a page ([data-live] elements, by id) from the
// server every data-refresh seconds, without a reload. Filters and forms are outside them,
// so typing is never interrupted. Paused while the tab is hidden or the Pause button is on.
"use strict";
(function () {
  const main = document.getElementById("page");
  const period = main ? Number(main.dataset.refresh) : 0;
  if (!period) return;
  const status = document.getElementById("updated");
  const pause = document.getElementById("pause");
  let paused = false;
  if (pause) {
    pause.addEventListener("click", function () {
      paused = !paused;
      pause.textContent = paused ? "Resume" : "Pause";
    });
  }
  async function refresh() {
    if (paused || document.hidden) return;
    let resp;
    try {
      resp = await fetch(location.href, { credentials: "same-origin", headers: { "X-Sluice-Refresh": "1" } });
    } catch (e) {
      if (status) status.textContent = "live: server unreachable, retrying";
      return;
    }
    if (resp.status === 401) { location.reload(); return; }
    if (!resp.ok) {
      if (status) status.textContent = "live: the server answered " + resp.status + ", retrying";
      return;
    }
    const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
    for (const el of document.querySelectorAll("[data-live]")) {
      const fresh = el.id && doc.getElementById(el.id);
      if (fresh) el.replaceWith(document.importNode(fresh, true));
    }
    if (status) status.textContent = "live: updated " + new Date().toLocaleTimeString();
  }
  setInterval(refresh, period * 1000);
})();
