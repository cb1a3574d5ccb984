// jitscope-report --format html: the units table: columns, rows, and the unit
// detail opened below a row (by a click, the timeline or the page's hash).
// One part of the page's script: html/embed.cmake joins the report_*.js
// files in the order tools/report/CMakeLists.txt lists them into one
// script element, so their top-level names share one scope.
'use strict';

// ---- a unit, as the tables, the timeline and the detail read it ----

// Its wall time: the trace's, else its metrics record's duration.
function unitWall(u) {
  if (u.wall_ns !== null) return u.wall_ns;
  return u.metrics && u.metrics.duration_ns !== null ? u.metrics.duration_ns : null;
}
function failed(u) {
  return !!(u.metrics && u.metrics.fail_type !== null);
}
function recompileReason(u) {
  return u.metrics ? u.metrics.recompile_reason : null;
}
function contextText(u) {
  if (!u.metrics) return '';
  return Object.entries(u.metrics.context)
    .map(([k, v]) => k + '=' + (typeof v === 'string' ? v : JSON.stringify(v)))
    .join(', ');
}
function unitLink(pid, compileId) {
  return el('a', { class: 'unit-link', href: unitHash(pid, compileId) }, compileId);
}

// ---- the table, and the detail row below a unit's row ----
function buildUnits(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const sec = document.getElementById('units');
  if (!sec) return;
  // Phase columns: the metrics file's columns when there are any, else
  // the trace's six phase names with the most time over all units.
  const colTotals = new Map();
  const phaseTotals = new Map();
  for (const u of units) {
    if (u.metrics) {
      for (const [k, v] of Object.entries(u.metrics.columns_ns)) {
        colTotals.set(k, (colTotals.get(k) || 0) + v);
      }
    }
    for (const p of u.phases) phaseTotals.set(p.name, (phaseTotals.get(p.name) || 0) + p.total_ns);
  }
  const byTotal = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
  let phaseCols;
  if (colTotals.size) {
    phaseCols = byTotal(colTotals).map((name) => ({
      key: 'col:' + name,
      label: name,
      title: 'the metrics record\'s ' + name + '_us',
      value: (u) => (u.metrics && name in u.metrics.columns_ns ? u.metrics.columns_ns[name] : null),
    }));
  } else {
    phaseCols = byTotal(phaseTotals).slice(0, 6).map((name) => ({
      key: 'phase:' + name,
      label: name,
      title: 'total time of the spans named ' + name + ' in the unit',
      value: (u) => {
        const p = u.phases.find((q) => q.name === name);
        return p ? p.total_ns : null;
      },
    }));
  }
  const columns = [
    {
      key: 'compile_id', label: 'compile id', sort: (u) => compileIdKey(u.compile_id),
      cls: 'compile-id',
      cell: (u, td) => td.appendChild(unitLink(u.pid, u.compile_id)),
    },
    { key: 'name', label: 'name', sort: (u) => u.name, cls: 'name', cell: textCell((u) => u.name) },
  ];
  if (multiPid) {
    columns.push({ key: 'pid', label: 'pid', sort: (u) => pidText(u.pid), cls: 'pid',
                   cell: textCell((u) => pidText(u.pid)) });
  }
  columns.push(
    { key: 'wall_ns', label: 'wall', num: true, sort: unitWall, cls: 'wall', cell: nsCell(unitWall) },
    {
      key: 'status', label: 'status', cls: 'status',
      sort: (u) => (failed(u) ? 'failed: ' + u.metrics.fail_type : u.metrics ? 'ok' : ''),
      cell: (u, td) => {
        if (failed(u)) {
          td.appendChild(document.createTextNode('failed: ' + u.metrics.fail_type));
          const reason = u.metrics.fail_reason || '';
          td.appendChild(el('div', { class: 'fail-reason' }, reason));
          td.title = reason;
        } else {
          td.textContent = u.metrics ? 'ok' : '';
        }
      },
    },
  );
  for (const c of phaseCols) {
    columns.push({ key: c.key, label: c.label, title: c.title, num: true, sort: c.value,
                   cls: 'phase-col', cell: nsCell(c.value) });
  }
  columns.push(
    { key: 'cache_hits', label: 'cache hits', num: true, cls: 'cache-hits',
      sort: (u) => (u.metrics ? u.metrics.cache_hits : null),
      cell: textCell((u) => (u.metrics ? u.metrics.cache_hits : '')) },
    { key: 'cache_misses', label: 'cache misses', num: true, cls: 'cache-misses',
      sort: (u) => (u.metrics ? u.metrics.cache_misses : null),
      cell: textCell((u) => (u.metrics ? u.metrics.cache_misses : '')) },
    { key: 'recompile_reason', label: 'recompile reason', cls: 'recompile-reason',
      sort: recompileReason,
      cell: (u, td) => {
        td.textContent = recompileReason(u) || '';
        if (recompileReason(u)) td.title = recompileReason(u);
      } },
    { key: 'context', label: 'context', cls: 'context', sort: (u) => contextText(u) || null,
      cell: (u, td) => {
        const t = contextText(u);
        td.textContent = t.length > 80 ? t.slice(0, 79) + '…' : t;
        if (t) td.title = t;
      } },
  );
  page.unitsTable = new DataTable({
    table: document.getElementById('units-table'),
    pager: document.getElementById('units-pager'),
    filterInput: document.getElementById('units-filter'),
    rows: units,
    columns,
    matches: (u, q) => u.name.toLowerCase().includes(q) || u.compile_id.toLowerCase().includes(q),
    rowAttrs: (u) => ({
      class: ['unit-row', failed(u) ? 'failed' : '', recompileReason(u) !== null ? 'recompile' : '']
        .join(' ').trim(),
      'data-compile-id': u.compile_id,
      'data-pid': pidText(u.pid),
      'data-wall-ns': unitWall(u) === null ? '' : String(unitWall(u)),
    }),
    afterRender: () => {
      if (page.openUnit !== null) showDetail(page, page.openUnit, false);
    },
  });
}

function closeDetail() {
  for (const d of document.querySelectorAll('tr.detail-row')) d.remove();
}
function showDetail(page, index, scroll) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  closeDetail();
  page.openUnit = index;
  const u = units[index];
  const rows = document.querySelectorAll('#units-table tr.unit-row');
  let host = null;
  for (const r of rows) {
    if (r.dataset.compileId === u.compile_id && r.dataset.pid === pidText(u.pid)) host = r;
  }
  if (!host) return;
  const td = el('td', { colspan: String(host.children.length) });
  td.appendChild(unitDetail(page, u));
  const tr = el('tr', { class: 'detail-row' }, td);
  host.after(tr);
  if (scroll) host.scrollIntoView({ block: 'start' });
}
function openFromHash(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const want = parseUnitHash(window.location.hash);
  if (!want || !page.unitsTable) return;
  const index = unitIndex.get(want.pid + ':' + want.compileId);
  if (index === undefined) return;
  page.openUnit = index;
  page.unitsTable.reveal(index);  // renders, and afterRender shows the detail
  showDetail(page, index, true);
}

