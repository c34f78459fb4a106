// The page's one script: a tooltip for SVG marks, and the refresh of the
// board and timeline (paused while the tab is hidden).
(function () {
  var tip = document.createElement("div");
  tip.id = "tip";
  document.addEventListener("DOMContentLoaded", function () { document.body.appendChild(tip); });
  document.addEventListener("mouseover", function (e) {
    var el = e.target.closest ? e.target.closest("svg [class]") : null;
    var t = el && el.querySelector(":scope > title");
    if (!t) { tip.style.display = "none"; return; }
    tip.textContent = t.textContent;
    tip.style.display = "block";
  });
  document.addEventListener("mousemove", function (e) {
    tip.style.left = (e.clientX + 12) + "px";
    tip.style.top = (e.clientY + 12) + "px";
  });
  var m = document.querySelector('meta[name="refresh-seconds"]');
  if (m) {
    setInterval(function () { if (!document.hidden) location.reload(); }, Number(m.content) * 1000);
  }
})();
