// The floor page redraws its tables when the ledger records an event (server-sent events from
// the Subscribe RPC). Nothing else runs in the page.
(function () {
  var floor = document.getElementById("floor");
  if (!floor || !window.EventSource) { return; }
  var source = new EventSource(floor.getAttribute("data-live"));
  var pending = false;
  function redraw() {
    pending = false;
    // Marked as the page's own request: a redraw is no use of the session (it idles out).
    fetch(floor.getAttribute("data-refresh"), { credentials: "same-origin", headers: { "X-Chipledger-Background": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html !== null) {
          floor.innerHTML = html;
          floor.setAttribute("data-redrawn", String(Number(floor.getAttribute("data-redrawn") || "0") + 1));
        }
      });
  }
  source.addEventListener("recorded", function () {
    if (!pending) { pending = true; window.setTimeout(redraw, 150); }
  });
})();
