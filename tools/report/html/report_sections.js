// jitscope-report --format html: the summary, compile times (with their
// histograms), GPU, comparison and slowest-spans sections.
// One part of the page's script: html/embed.cmake joins the report_*.js
// files in the order tools/report/CMakeLists.txt lists them into one
// script element, so their top-level names share one scope.
'use strict';

// ---- summary ----
function buildSummary(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const sec = document.getElementById('summary');
  if (!sec) return;
  const h = DATA.header;
  const dl = el('dl', { class: 'summary' });
  const add = (k, v) => {
    dl.appendChild(el('dt', null, k));
    dl.appendChild(el('dd', null, v));
  };
  const nUnits = units.length;
  let fails = 0;
  let recompiles = 0;
  let hits = 0;
  let misses = 0;
  for (const u of units) {
    if (failed(u)) ++fails;
    if (recompileReason(u) !== null) ++recompiles;
    if (u.metrics) {
      hits += u.metrics.cache_hits;
      misses += u.metrics.cache_misses;
    }
  }
  add('input', h.input);
  add('bytes', humanBytes(h.bytes) + ' (' + h.bytes + ')');
  add('events', String(h.events) + (h.unterminated ? ' (unterminated)' : ''));
  add(
    'time span',
    h.time_span ? humanNs(h.time_span.duration_ns) : 'no timestamps',
  );
  add('processes / threads', h.processes + ' / ' + h.threads);
  if (DATA.units) {
    add('compile units', String(nUnits));
    add('failures', String(fails));
    add('recompiles', String(recompiles));
    add('cache hits / misses', hits + ' / ' + misses);
    if (DATA.unit_walls && DATA.unit_walls.count) {
      const w = DATA.unit_walls;
      add(
        'unit wall times',
        'total ' + humanNs(w.total_ns) + ', mean ' + humanNs(w.mean_ns) + ', p50 ' +
          humanNs(w.p50_ns) + ', p90 ' + humanNs(w.p90_ns) + ', p99 ' + humanNs(w.p99_ns) +
          ', max ' + humanNs(w.max_ns),
      );
    }
  }
  add('runtime records', h.metrics ? String(h.metrics.runtime_records) : 'no metrics file');
  if (h.metrics && h.metrics.autotune_records > 0) add('autotune records', String(h.metrics.autotune_records));
  add('dropped events', h.events_dropped === null ? '0' : String(h.events_dropped));
  if (h.jitscope_session) {
    const s = h.jitscope_session;
    add(
      'jitscope session',
      'version ' + (s.version || '?') + ', clock ' + (s.clock || '?') + ', CUPTI ' +
        (s.cupti.state || '?') + (s.cupti.reason ? ' (' + s.cupti.reason + ')' : ''),
    );
    if (h.jitscope_sessions > 1) {
      // A merged trace: the row above is its first process's.
      add(
        'sessions',
        h.jitscope_sessions + ' processes (the session above: the first\'s); CUPTI ' +
          Object.entries(h.cupti_states)
            .map(([state, n]) => state + ' ' + n)
            .join(', '),
      );
    }
  }
  add('warnings', String(h.warnings.length));
  sec.appendChild(dl);
  if (h.warnings.length) {
    const ul = el('ul', { class: 'warnings' });
    for (const w of h.warnings) ul.appendChild(el('li', null, w));
    sec.appendChild(ul);
  }
}


// ---- compile times ----
function histogram(bins) {
  const w = 120;
  const h = 22;
  const svg = svgEl('svg', { class: 'histogram', width: String(w), height: String(h),
                             viewBox: '0 0 ' + w + ' ' + h });
  if (!bins.length) return svg;
  const max = Math.max(...bins.map((b) => b[2]));
  const bw = w / bins.length;
  bins.forEach((b, i) => {
    const bh = b[2] ? Math.max(1, (b[2] / max) * (h - 1)) : h;
    const r = svgEl('rect', { class: b[2] ? 'bin' : 'bin empty', x: (i * bw).toFixed(2),
                              y: (h - (b[2] ? bh : h)).toFixed(2),
                              width: Math.max(0.5, bw - 0.5).toFixed(2), height: bh.toFixed(2) });
    svgTitle(r, humanNs(b[0]) + ' – ' + humanNs(b[1]) + ': ' + b[2]);
    svg.appendChild(r);
  });
  return svg;
}
// Passes by IR growth (the adapters' Options::ir_size), largest first.
function buildIrGrowth(page) {
  const table = document.getElementById('ir-growth-table');
  const rows = page.data.ir_growth || [];
  if (!table || !rows.length) return;
  const count = (key, label, f, title) => ({ key, label, num: true, sort: f, cls: key, cell: textCell(f), title });
  new DataTable({
    table,
    pager: document.getElementById('ir-growth-pager'),
    rows,
    rowAttrs: (g) => ({ 'data-pass': g.pass }),
    columns: [
      { key: 'pass', label: 'pass', sort: (g) => g.pass, cls: 'pass', cell: textCell((g) => g.pass) },
      count('runs', 'runs', (g) => g.runs, 'runs with both sizes'),
      count('before', 'before', (g) => g.before),
      count('after', 'after', (g) => g.after),
      count('growth', 'growth', (g) => g.growth),
      { key: 'growth_pct', label: 'growth %', num: true, cls: 'growth-pct',
        sort: (g) => (g.before > 0 ? g.growth / g.before : null),
        cell: textCell((g) => (g.before > 0 ? (100 * g.growth / g.before).toFixed(1) + '%' : '')) },
      count('largest', 'largest', (g) => g.largest, 'the run that grew the IR most'),
      count('largest_from', 'from', (g) => g.largest_from, 'that run\'s size before'),
      { key: 'total_ns', label: 'time', num: true, sort: (g) => g.total_ns, cell: nsCell((g) => g.total_ns) },
    ],
  });
}

function buildCompileTimes(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const table = document.getElementById('compile-times-table');
  if (!table) return;
  const rows = DATA.compile_times || [];
  const self = new Map((DATA.phases || []).map((p) => [p.name, p.self_ns]));
  const num = (key, label, f) => ({ key, label, num: true, sort: f, cell: nsCell(f) });
  new DataTable({
    table,
    pager: document.getElementById('compile-times-pager'),
    filterInput: document.getElementById('compile-times-filter'),
    rows,
    matches: (r, q) => r.name.toLowerCase().includes(q),
    columns: [
      { key: 'name', label: 'name', sort: (r) => r.name, cell: textCell((r) => r.name) },
      { key: 'count', label: 'count', num: true, sort: (r) => r.count, cell: textCell((r) => r.count) },
      num('total_ns', 'total', (r) => r.total_ns),
      num('mean_ns', 'mean', (r) => r.mean_ns),
      num('min_ns', 'min', (r) => r.min_ns),
      num('max_ns', 'max', (r) => r.max_ns),
      num('p50_ns', 'p50', (r) => r.p50_ns),
      num('p90_ns', 'p90', (r) => r.p90_ns),
      num('p99_ns', 'p99', (r) => r.p99_ns),
      num('stddev_ns', 'stddev', (r) => r.stddev_ns),
      num('self_ns', 'self', (r) => (self.has(r.name) ? self.get(r.name) : null)),
      { key: 'histogram', label: 'durations (log bins)',
        cell: (r, td) => td.appendChild(histogram(r.histogram)) },
    ],
  });
}

// ---- GPU ----
function buildGpu(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const sec = document.getElementById('gpu');
  if (!sec || !DATA.gpu) return;
  const g = DATA.gpu;
  const note = document.getElementById('gpu-note');
  const names = g.names || [];
  if (!g.present) {
    // CUDA calls alone (CUPTI on, no GPU work) still get their table.
    note.textContent = 'No GPU activity in this trace (no kernels, copies or sets).';
    const hide = ['gpu-table', 'gpu-pager'];
    if (!names.length) hide.push('gpu-work', 'gpu-work-pager', 'gpu-work-table');
    for (const id of hide) {
      const e = document.getElementById(id);
      if (e) e.hidden = true;
    }
    if (names.length) buildGpuWork(names);
    return;
  }
  note.textContent = g.kernels + ' kernels (' + humanNs(g.kernel_ns) + '), ' +
    g.kernels_unattributed + ' not attributed to a unit; ' + g.memcpys + ' copies, ' +
    g.memsets + ' sets.';
  const columns = [
    { key: 'compile_id', label: 'unit', sort: (r) => compileIdKey(r.compile_id),
      cell: (r, td) => {
        td.appendChild(unitLink(r.pid, r.compile_id));
        td.appendChild(document.createTextNode(' ' + r.name));
      } },
    { key: 'kernels', label: 'kernels', num: true, sort: (r) => r.kernels, cell: textCell((r) => r.kernels) },
    { key: 'distinct_kernels', label: 'distinct kernels', num: true, sort: (r) => r.distinct_kernels,
      cell: textCell((r) => r.distinct_kernels) },
    { key: 'gpu_total_ns', label: 'GPU time', num: true, sort: (r) => r.gpu_total_ns, cell: nsCell((r) => r.gpu_total_ns) },
    { key: 'gpu_mean_ns', label: 'mean', num: true, sort: (r) => r.gpu_mean_ns, cell: nsCell((r) => r.gpu_mean_ns) },
    { key: 'first_launch_ns', label: 'first launch', num: true, sort: (r) => r.first_launch_ns,
      cell: nsCell((r) => (r.first_launch_ns === null || traceBegin === null ? null : r.first_launch_ns - traceBegin)),
      title: 'from the start of the trace' },
    { key: 'first_launch_latency_ns', label: 'compile → first launch', num: true,
      sort: (r) => r.first_launch_latency_ns, cell: nsCell((r) => r.first_launch_latency_ns) },
    { key: 'launched_inside', label: 'launched inside', num: true, sort: (r) => r.launched_inside,
      cell: textCell((r) => r.launched_inside) },
  ];
  new DataTable({ table: document.getElementById('gpu-table'), pager: document.getElementById('gpu-pager'),
                  rows: g.units, columns });
  buildGpuWork(names);
}

// GPU work (kernels, copies, sets) and the CUDA calls CUPTI recorded on host
// threads, by name: kept out of the host tables.
function buildGpuWork(names) {
  const workTable = document.getElementById('gpu-work-table');
  if (!workTable) return;
  const num = (key, label, f) => ({ key, label, num: true, sort: f, cell: nsCell(f) });
  new DataTable({
    table: workTable,
    pager: document.getElementById('gpu-work-pager'),
    rows: names,
    columns: [
      { key: 'name', label: 'name', sort: (r) => r.name, cell: textCell((r) => r.name) },
      { key: 'kind', label: 'kind', sort: (r) => r.kind, cell: textCell((r) => r.kind) },
      { key: 'count', label: 'count', num: true, sort: (r) => r.count, cell: textCell((r) => r.count) },
      num('total_ns', 'time', (r) => r.total_ns),
      num('mean_ns', 'mean', (r) => r.mean_ns),
      num('p50_ns', 'p50', (r) => r.p50_ns),
      num('p90_ns', 'p90', (r) => r.p90_ns),
      num('max_ns', 'max', (r) => r.max_ns),
    ],
  });
}


// ---- comparison ----
function buildCompare(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const sec = document.getElementById('compare');
  if (!sec || !DATA.compare) return;
  const c = DATA.compare;
  if (c.comparison) {
    const h = c.comparison;
    sec.appendChild(el('p', { class: 'note' },
      'baseline: ' + h.baseline.join(', ') + ' · new: ' + h.new.join(', ') + ' · ' + h.gate_on +
      ' time: a median flagged when it moves by more than ' + h.threshold_pct +
      '% of the baseline, ' + humanNs(h.min_change_ns) + ' and ' + h.spread_factor +
      ' × the runs\' spread · ' + h.compared + ' compared: ' +
      h.slower + ' slower, ' + h.faster + ' faster, ' + h.added + ' added, ' + h.removed + ' removed' +
      (h.fail_if_slower_pct !== null ? ', ' + h.failing + ' failing' : '')));
    if (h.warnings.length) {
      const ul = el('ul', { class: 'warnings' });
      for (const w of h.warnings) ul.appendChild(el('li', null, w));
      sec.appendChild(ul);
    }
  }
  const titles = { names: 'Span names', passes: 'Compiler passes',
                   pipelines: 'Pass pipelines (by the span that ran them: time in their passes)',
                   units: 'Compile units (by unit key, else name)',
                   kernels: 'GPU work and CUDA calls (kernels, copies, sets, host calls)' };
  const selfGate = c.comparison && c.comparison.gate_on === 'self';
  for (const key of ['names', 'pipelines', 'passes', 'units', 'kernels']) {
    if (!c[key]) continue;
    // Passes and pipelines only where the runs have them.
    if ((key === 'passes' || key === 'pipelines') && !c[key].length) continue;
    sec.appendChild(el('h3', null, titles[key]));
    if (!c[key].length) {
      sec.appendChild(el('p', { class: 'note' }, 'none in either run'));
      continue;
    }
    const pager = el('div', { class: 'pager', id: 'compare-' + key + '-pager' },
                     el('button', { class: 'page-prev', type: 'button' }, '‹ prev'),
                     el('span', { class: 'page-info' }),
                     el('button', { class: 'page-next', type: 'button' }, 'next ›'));
    const table = el('table', { class: 'data compare', id: 'compare-' + key + '-table' });
    sec.appendChild(pager);
    sec.appendChild(table);
    const side = (s, f) => (s ? f(s) : null);
    const pair = (label, key2, f) => [
      { key: 'base_' + key2, label: 'base ' + label, num: true, sort: (r) => side(r.baseline, f),
        cell: nsCell((r) => side(r.baseline, f)) },
      { key: 'new_' + key2, label: 'new ' + label, num: true, sort: (r) => side(r.new, f),
        cell: nsCell((r) => side(r.new, f)) },
    ];
    const extra = [];
    if (key === 'units') {
      extra.push({ key: 'frame', label: 'frame', sort: (r) => r.frame, cell: textCell((r) => r.frame) });
    }
    const selfCols = !selfGate ? [] : [
      ...pair('self', 'self_ns', (s) => s.self_ns),
      { key: 'delta_self_ns', label: 'Δ self', num: true, sort: (r) => r.delta.self_ns,
        cell: (r, td) => {
          td.textContent = (r.delta.self_ns > 0 ? '+' : '') + humanNs(r.delta.self_ns);
        } },
    ];
    new DataTable({
      table, pager, rows: c[key],
      columns: [
        { key: 'name', label: key === 'units' ? 'unit key' : 'name', sort: (r) => r.name,
          cell: textCell((r) => r.name) },
        ...extra,
        { key: 'change', label: 'change', cls: 'change', sort: (r) => r.change,
          cell: textCell((r) => (r.change === 'unchanged' ? '' : r.change) + (r.fails ? ' (fails)' : '')) },
        { key: 'base_count', label: 'base count', num: true, sort: (r) => side(r.baseline, (s) => s.count),
          cell: textCell((r) => side(r.baseline, (s) => s.count)) },
        { key: 'new_count', label: 'new count', num: true, sort: (r) => side(r.new, (s) => s.count),
          cell: textCell((r) => side(r.new, (s) => s.count)) },
        ...pair('total', 'total_ns', (s) => s.total_ns),
        { key: 'delta_total_ns', label: 'Δ total', num: true, sort: (r) => r.delta.total_ns,
          cell: (r, td) => {
            td.textContent = (r.delta.total_ns > 0 ? '+' : '') + humanNs(r.delta.total_ns);
          } },
        { key: 'delta_pct', label: 'Δ %', num: true, sort: (r) => r.delta.total_pct,
          cell: textCell((r) => (r.delta.total_pct === null ? '' :
            (r.delta.total_pct > 0 ? '+' : '') + r.delta.total_pct.toFixed(1) + '%')) },
        ...selfCols,
        ...pair('mean', 'mean_ns', (s) => s.mean_ns),
        ...pair('p50', 'p50_ns', (s) => s.p50_ns),
        ...pair('p90', 'p90_ns', (s) => s.p90_ns),
      ],
      rowAttrs: (r) => ({
        class: [r.change === 'slower' || r.change === 'faster' ? 'flagged' : '', r.change,
                r.fails ? 'fails' : ''].join(' ').trim(),
      }),
    });
  }
}


// ---- slowest spans ----
function buildTopSpans(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const table = document.getElementById('top-spans-table');
  if (!table || !DATA.top_spans) return;
  new DataTable({
    table, rows: DATA.top_spans,
    columns: [
      { key: 'name', label: 'name', sort: (r) => r.name, cell: textCell((r) => r.name) },
      { key: 'dur_ns', label: 'duration', num: true, sort: (r) => r.dur_ns, cell: nsCell((r) => r.dur_ns) },
      { key: 'ts_ns', label: 'at', num: true, sort: (r) => r.ts_ns,
        cell: nsCell((r) => (traceBegin === null ? r.ts_ns : r.ts_ns - traceBegin)) },
      { key: 'thread', label: 'thread', sort: (r) => r.thread || String(r.tid),
        cell: textCell((r) => pidText(r.pid) + ' / ' + (r.thread || r.tid)) },
      { key: 'compile_id', label: 'unit', sort: (r) => (r.compile_id ? compileIdKey(r.compile_id) : null),
        cell: (r, td) => { if (r.compile_id) td.appendChild(unitLink(r.pid, r.compile_id)); } },
    ],
  });
}

