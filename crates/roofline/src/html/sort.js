// Sortable tables of the flopscope HTML report: click a header to sort by
// its column (numbers largest first, text A to Z), click again to reverse.
// Cells sort by their data-v attribute when they have one, else by text.
(function () {
  "use strict";
  function key(cell, numeric) {
    var v = cell.getAttribute("data-v");
    if (numeric) {
      var n = parseFloat(v === null ? cell.textContent : v);
      return isNaN(n) ? -Infinity : n;
    }
    return (v === null ? cell.textContent : v).toLowerCase();
  }
  function sortBy(table, th, col) {
    var numeric = th.classList.contains("num");
    var first = numeric ? "descending" : "ascending";
    var dir = th.getAttribute("aria-sort") === first ? (numeric ? "ascending" : "descending") : first;
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    var sign = dir === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
      return x < y ? -sign : x > y ? sign : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.title = "sort by this column";
      th.addEventListener("click", function () { sortBy(table, th, col); });
    });
  });
})();
