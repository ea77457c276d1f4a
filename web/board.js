/* board.js: click a column header to sort its table. The tables are complete
 * HTML written by `ka board`; this script only reorders rows. Numeric
 * columns (th data-type="num") sort by each cell's data-v attribute, empty
 * values last; text columns sort by data-v or the cell text. The first click
 * sorts ascending, the next descending; the sorted header carries aria-sort. */
(function () {
  'use strict';

  function cellKey(td, numeric) {
    var v = td.getAttribute('data-v');
    if (numeric) {
      if (v === null || v === '') return null;
      var x = parseFloat(v);
      return isNaN(x) ? null : x;
    }
    return (v !== null ? v : td.textContent).trim().toLowerCase();
  }

  function sortTable(table, col, dir) {
    var head = table.tHead.rows[0];
    var numeric = head.cells[col].getAttribute('data-type') === 'num';
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (r, i) {
      return { row: r, key: cellKey(r.cells[col], numeric), at: i };
    });
    keyed.sort(function (a, b) {
      if (a.key === null || b.key === null) {
        if (a.key === b.key) return a.at - b.at;
        return a.key === null ? 1 : -1; /* missing values stay last */
      }
      var c = numeric ? a.key - b.key : a.key.localeCompare(b.key);
      if (c === 0) return a.at - b.at;
      return dir === 'ascending' ? c : -c;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
    for (var i = 0; i < head.cells.length; i++)
      head.cells[i].setAttribute('aria-sort', i === col ? dir : 'none');
  }

  function onClick(ev) {
    var th = ev.target.closest('th');
    if (!th || !th.closest('thead')) return;
    var table = th.closest('table');
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    sortTable(table, th.cellIndex, dir);
  }

  function init() {
    var tables = document.querySelectorAll('table.board');
    for (var i = 0; i < tables.length; i++)
      tables[i].tHead.addEventListener('click', onClick);
    document.documentElement.className += ' js';
  }

  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', init);
  else
    init();
})();
