// ouro workbench: live updates and keyboard shortcuts. No dependencies.
// Polls /api/stamp; when the bundle changed, fetches this page again and swaps
// <main> in place (no full reload). Keys 1-8 open the pages, "/" goes to Search.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var stamp = null;
  function swap() {
    return fetch(location.href, { headers: { "X-Ouro-Live": "1" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("main");
        var main = document.querySelector("main");
        if (fresh && main) { main.innerHTML = fresh.innerHTML; }
        if (live) { live.textContent = "updated " + new Date().toLocaleTimeString(); live.className = "changed"; }
      });
  }
  function poll() {
    fetch("/api/stamp", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        if (stamp !== null && data.stamp !== stamp) { stamp = data.stamp; return swap(); }
        stamp = data.stamp;
      })
      .catch(function () { if (live) { live.textContent = "offline"; } })
      .then(function () { setTimeout(poll, 1500); });
  }
  poll();
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (ev.key === "/") {
      var q = document.getElementById("q");
      if (q) { q.focus(); } else { location.href = "/search"; }
      ev.preventDefault();
      return;
    }
    var link = document.querySelector('.nav a[data-key="' + ev.key + '"]');
    if (link) { location.href = link.getAttribute("href"); }
  });
})();
