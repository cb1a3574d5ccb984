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
// Failed: its record's fail_type, or it crashed (its slice open at its
// process's crash): the report's status.
function failed(u) {
  return u.status === 'failed' || u.status === 'crashed';
}
function statusText(u) {
  if (u.status === 'failed') return 'failed: ' + u.fail_type;
  if (u.status === 'crashed') return 'crashed';
  if (u.status === 'incomplete') return 'incomplete';
  return u.metrics ? 'ok' : '';
}
// obj[key] when obj has its own key, else null: record fields named like
// Object.prototype's members (constructor, toString, __proto__) never
// reach the inherited ones.
function own(obj, key) {
  return obj && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : null;
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
      value: (u) => (u.metrics ? own(u.metrics.columns_ns, name) : null),
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
  if (units.some((u) => u.unit_key !== null && u.unit_key !== undefined)) {
    columns.push({ key: 'unit_key', label: 'unit key', sort: (u) => u.unit_key, cls: 'unit-key',
                   title: 'the unit\'s stable identity: recompiles of a frame share it',
                   cell: textCell((u) => u.unit_key) });
  }
  if (multiPid) {
    columns.push({ key: 'pid', label: 'pid', sort: (u) => pidText(u.pid), cls: 'pid',
                   cell: textCell((u) => pidText(u.pid)) });
  }
  columns.push(
    { key: 'wall_ns', label: 'wall', num: true, sort: unitWall, cls: 'wall', cell: nsCell(unitWall) },
    { key: 'unexplained_ns', label: 'unexplained', num: true, cls: 'unexplained',
      title: 'time outside every span on its threads, less what child processes it spawned ' +
             'ran in its gaps; its longest gap is marked in its detail',
      sort: (u) => u.unexplained_ns ?? null, cell: nsCell((u) => u.unexplained_ns ?? null) },
    {
      key: 'status', label: 'status', cls: 'status',
      sort: (u) => statusText(u) || null,
      cell: (u, td) => {
        td.textContent = statusText(u);
        if (failed(u)) {
          const reason = u.fail_reason || '';
          td.appendChild(el('div', { class: 'fail-reason' }, reason));
          td.title = reason;
        } else if (u.status === 'incomplete') {
          td.title = 'still open when the trace ended (no crash in it)';
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
    matches: (u, q) => u.name.toLowerCase().includes(q) || u.compile_id.toLowerCase().includes(q) ||
      (u.unit_key || '').toLowerCase().includes(q),
    rowAttrs: (u) => ({
      class: ['unit-row', failed(u) ? 'failed' : '', u.status === 'crashed' ? 'crashed' : '',
              u.status === 'incomplete' ? 'incomplete' : '',
              recompileReason(u) !== null ? 'recompile' : '']
        .filter((c) => c).join(' '),
      'data-compile-id': u.compile_id,
      'data-pid': pidText(u.pid),
      'data-wall-ns': unitWall(u) === null ? '' : String(unitWall(u)),
    }),
    afterRender: () => {
      if (page.openUnit !== null) showDetail(page, page.openUnit, false);
    },
  });
}

// ---- the failed passes: marked "failed", or open where a thread crashed ----
function buildFailedPasses(page) {
  const { data: DATA, traceBegin } = page;
  const table = document.getElementById('failed-passes-table');
  if (!table) return;
  const fp = DATA.failed_passes || { total: 0, passes: [] };
  const note = document.getElementById('failed-passes-note');
  if (!fp.passes.length) {
    note.textContent = 'No pass failed, and no thread crashed inside a span.';
    table.hidden = true;
    return;
  }
  note.textContent = fp.passes.length < fp.total
    ? 'the first ' + fp.passes.length + ' of ' + fp.total : fp.total + ' in all';
  new DataTable({
    table, rows: fp.passes,
    rowAttrs: (p) => ({ class: 'failed-pass ' + p.kind }),
    columns: [
      { key: 'name', label: 'pass', sort: (p) => p.name, cls: 'name', cell: textCell((p) => p.name) },
      { key: 'kind', label: 'kind', sort: (p) => p.kind, cls: 'kind', cell: textCell((p) => p.kind) },
      { key: 'unit', label: 'unit', sort: (p) => (p.compile_id ? compileIdKey(p.compile_id) : null),
        cls: 'unit',
        cell: (p, td) => {
          if (!p.compile_id) return;
          td.appendChild(unitLink(p.pid, p.compile_id));
          td.appendChild(document.createTextNode(' ' + (p.unit || '')));
        } },
      { key: 'thread', label: 'thread', sort: (p) => p.thread || String(p.tid),
        cell: textCell((p) => pidText(p.pid) + ' / ' + (p.thread || p.tid)) },
      { key: 'ts_ns', label: 'at', num: true, sort: (p) => p.ts_ns,
        cell: nsCell((p) => (traceBegin === null ? p.ts_ns : p.ts_ns - traceBegin)) },
      { key: 'dur_ns', label: 'duration', num: true, sort: (p) => p.dur_ns, cell: nsCell((p) => p.dur_ns) },
      { key: 'reason', label: 'reason', sort: (p) => p.reason, cls: 'reason', cell: textCell((p) => p.reason) },
    ],
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

