// jitscope-report --format html: builds the page from the JSON in
// the data block, id "jitscope-data" (schema: docs/report-html.md). Plain ES2020,
// no framework, nothing fetched. Every piece of data goes into the page as
// text (textContent, createTextNode, setAttribute), never as markup.
//
// Big reports stay responsive because nothing is drawn per unit up front:
// tables show one page of 100 rows (sorting and filtering work on an index
// array over all rows), a unit's detail is built when opened, and the
// timeline draws only the units inside the visible window, merging those
// narrower than a pixel column into one bin per column and lane.
'use strict';

// ---- pure helpers (no DOM): exported for node, see the end of the file ----

// 12.3 ms, 1.23 s, 850 ns, 4.56 µs: three significant digits, as the
// terminal report's human_ns (tools/report/render.cpp).
function humanNs(ns) {
  if (ns === null || ns === undefined) return '';
  const neg = ns < 0;
  const v = Math.abs(ns);
  const sig3 = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  let s;
  if (v < 1e3) s = Math.trunc(v) + ' ns';
  else if (v < 999.5e3) s = sig3(v / 1e3) + ' µs';
  else if (v < 999.5e6) s = sig3(v / 1e6) + ' ms';
  else if (v < 999.5e9) s = sig3(v / 1e9) + ' s';
  else s = (v / 1e9).toFixed(0) + ' s';
  return neg ? '-' + s : s;
}

function humanBytes(n) {
  if (n < 1024) return n + ' B';
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = -1;
  do {
    v /= 1024;
    ++i;
  } while (v >= 1024 && i < units.length - 1);
  return v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + ' ' + units[i];
}

// "3/1" -> [0, 3, 1, "3/1"]; other ids after the numeric ones, by text.
function compileIdKey(id) {
  const m = /^(\d+)\/(\d+)$/.exec(id);
  return m ? [0, Number(m[1]), Number(m[2]), id] : [1, 0, 0, id];
}

// Sort values: numbers, strings or arrays of them; null/undefined last.
function compareValues(a, b) {
  const an = a === null || a === undefined;
  const bn = b === null || b === undefined;
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  if (Array.isArray(a)) {
    for (let i = 0; i < a.length; ++i) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

// The unit link's hash: "#unit=<pid>:<compile_id>", each part with
// encodeURIComponent (so ':' in a pid is %3A and the first ':' splits),
// '/' in the compile id kept for readability. No pid: empty.
function unitHash(pid, compileId) {
  const p = pid === null || pid === undefined ? '' : String(pid);
  return (
    '#unit=' + encodeURIComponent(p) + ':' + encodeURIComponent(compileId).replace(/%2F/g, '/')
  );
}

// The inverse: {pid, compileId} or null.
function parseUnitHash(hash) {
  if (!hash.startsWith('#unit=')) return null;
  const body = hash.slice(6);
  const colon = body.indexOf(':');
  if (colon < 0) return null;
  try {
    return {
      pid: decodeURIComponent(body.slice(0, colon)),
      compileId: decodeURIComponent(body.slice(colon + 1)),
    };
  } catch (e) {
    return null;  // a malformed %-escape: no unit
  }
}

// ---- the page ----

function buildPage(doc, win) {
  const startMs = win.performance.now();  // the HTML is parsed by now
  const DATA = JSON.parse(doc.getElementById('jitscope-data').textContent);
  const parsedMs = win.performance.now();
  // The SVG namespace, from an inline <svg> the HTML parser put in it: the
  // page holds no URL text at all.
  const SVG_NS = doc.getElementById('svg-namespace').namespaceURI;
  const PAGE_SIZE = 100;

  function el(tag, attrs, ...children) {
    const e = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'object' ? c : doc.createTextNode(String(c)));
    }
    return e;
  }
  function svgEl(tag, attrs) {
    const e = doc.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  function svgTitle(parent, text) {
    const t = svgEl('title');
    t.textContent = text;
    parent.appendChild(t);
  }
  function pidText(pid) {
    return pid === null || pid === undefined ? '' : String(pid);
  }
  // A colour per name, stable across reports.
  function nameColor(name) {
    let h = 2166136261;
    for (let i = 0; i < name.length; ++i) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
    return 'hsl(' + (Math.abs(h) % 360) + ',55%,62%)';
  }

  // A table over all of `rows`: sorting (every row, not just the page),
  // optional filter and paging. columns: {key, label, num, sort(row), cell(row, td)}.
  class DataTable {
    constructor(opts) {
      Object.assign(this, opts);
      this.order = this.rows.map((_, i) => i);
      this.view = this.order;
      this.page = 0;
      this.sortKey = null;
      this.sortDir = 1;
      this.buildHead();
      if (this.pager) {
        this.pager.querySelector('.page-prev').addEventListener('click', () => this.go(-1));
        this.pager.querySelector('.page-next').addEventListener('click', () => this.go(1));
      }
      if (this.filterInput) {
        this.filterInput.addEventListener('input', () => this.applyFilter());
      }
      this.render();
    }
    buildHead() {
      const tr = el('tr');
      for (const c of this.columns) {
        const th = el('th', { class: c.num ? 'num' : null, title: c.title || null }, c.label);
        if (c.sort) {
          th.dataset.key = c.key;
          th.addEventListener('click', () => this.sortBy(c.key));
        }
        tr.appendChild(th);
      }
      const thead = this.table.tHead || this.table.createTHead();
      thead.textContent = '';
      thead.appendChild(tr);
      if (!this.table.tBodies.length) this.table.appendChild(el('tbody'));
    }
    sortBy(key) {
      const col = this.columns.find((c) => c.key === key);
      if (!col) return;
      this.sortDir = this.sortKey === key ? -this.sortDir : col.num ? -1 : 1;
      this.sortKey = key;
      const values = this.rows.map((r) => col.sort(r));
      const dir = this.sortDir;
      // Stable: ties keep the report's order.
      this.order = this.rows.map((_, i) => i);
      this.order.sort((a, b) => {
        const an = values[a] === null || values[a] === undefined;
        const bn = values[b] === null || values[b] === undefined;
        if (an || bn) return an === bn ? a - b : an ? 1 : -1;  // empty cells last either way
        return dir * compareValues(values[a], values[b]) || a - b;
      });
      for (const th of this.table.tHead.querySelectorAll('th[data-key]')) {
        if (th.dataset.key === key) {
          th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
        } else {
          th.removeAttribute('aria-sort');
        }
      }
      this.applyFilter(true);
    }
    applyFilter(keepPage) {
      const q = this.filterInput ? this.filterInput.value.trim().toLowerCase() : '';
      this.view = q ? this.order.filter((i) => this.matches(this.rows[i], q)) : this.order;
      if (!keepPage) this.page = 0;
      this.page = Math.min(this.page, Math.max(0, Math.ceil(this.view.length / PAGE_SIZE) - 1));
      this.render();
    }
    go(delta) {
      const pages = Math.max(1, Math.ceil(this.view.length / PAGE_SIZE));
      this.page = Math.min(pages - 1, Math.max(0, this.page + delta));
      this.render();
    }
    render() {
      const body = this.table.tBodies[0];
      body.textContent = '';
      const first = this.page * PAGE_SIZE;
      const last = Math.min(this.view.length, first + PAGE_SIZE);
      const frag = doc.createDocumentFragment();
      for (let k = first; k < last; ++k) {
        const row = this.rows[this.view[k]];
        const tr = el('tr', this.rowAttrs ? this.rowAttrs(row) : null);
        for (const c of this.columns) {
          const td = el('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null });
          c.cell(row, td);
          tr.appendChild(td);
        }
        frag.appendChild(tr);
      }
      body.appendChild(frag);
      if (this.pager) {
        const info = this.pager.querySelector('.page-info');
        info.textContent =
          (this.view.length ? first + 1 : 0) + '–' + last + ' of ' + this.view.length;
        this.pager.querySelector('.page-prev').disabled = this.page === 0;
        this.pager.querySelector('.page-next').disabled = last >= this.view.length;
      }
      if (this.afterRender) this.afterRender();
    }
    // Shows the row at rows[index]: clears a filter hiding it, turns to its page.
    reveal(index) {
      let pos = this.view.indexOf(index);
      if (pos < 0 && this.filterInput) {
        this.filterInput.value = '';
        this.applyFilter(true);
        pos = this.view.indexOf(index);
      }
      if (pos < 0) return;
      this.page = Math.floor(pos / PAGE_SIZE);
      this.render();
    }
  }

  const textCell = (f) => (row, td) => {
    td.textContent = f(row) ?? '';
  };
  const nsCell = (f) => (row, td) => {
    const v = f(row);
    td.textContent = v === null || v === undefined ? '' : humanNs(v);
    if (v !== null && v !== undefined) td.title = v + ' ns';
  };

  // ---- units: the model the table, timeline and GPU table share ----
  const units = DATA.units || [];
  const unitIndex = new Map();  // "<pid>:<compile_id>" -> index
  units.forEach((u, i) => {
    const key = pidText(u.pid) + ':' + u.compile_id;
    if (!unitIndex.has(key)) unitIndex.set(key, i);
  });
  const unitWall = (u) =>
    u.wall_ns !== null ? u.wall_ns : u.metrics && u.metrics.duration_ns !== null ? u.metrics.duration_ns : null;
  const failed = (u) => !!(u.metrics && u.metrics.fail_type !== null);
  const recompileReason = (u) => (u.metrics ? u.metrics.recompile_reason : null);
  const multiPid = new Set(units.map((u) => pidText(u.pid))).size > 1;
  const traceBegin = DATA.header && DATA.header.time_span ? DATA.header.time_span.begin_ns : null;
  function contextText(u) {
    if (!u.metrics) return '';
    return Object.entries(u.metrics.context)
      .map(([k, v]) => k + '=' + (typeof v === 'string' ? v : JSON.stringify(v)))
      .join(', ');
  }
  function unitLink(pid, compileId) {
    return el('a', { class: 'unit-link', href: unitHash(pid, compileId) }, compileId);
  }

  // ---- summary ----
  function buildSummary() {
    const sec = doc.getElementById('summary');
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
    add('dropped events', h.events_dropped === null ? '0' : String(h.events_dropped));
    if (h.jitscope_session) {
      const s = h.jitscope_session;
      add(
        'jitscope session',
        'version ' + (s.version || '?') + ', clock ' + (s.clock || '?') + ', CUPTI ' +
          (s.cupti.state || '?') + (s.cupti.reason ? ' (' + s.cupti.reason + ')' : ''),
      );
    }
    add('warnings', String(h.warnings.length));
    sec.appendChild(dl);
    if (h.warnings.length) {
      const ul = el('ul', { class: 'warnings' });
      for (const w of h.warnings) ul.appendChild(el('li', null, w));
      sec.appendChild(ul);
    }
  }

  // ---- units table and unit detail ----
  let unitsTable = null;
  function buildUnits() {
    const sec = doc.getElementById('units');
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
            td.appendChild(doc.createTextNode('failed: ' + u.metrics.fail_type));
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
    unitsTable = new DataTable({
      table: doc.getElementById('units-table'),
      pager: doc.getElementById('units-pager'),
      filterInput: doc.getElementById('units-filter'),
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
        if (openUnit !== null) showDetail(openUnit, false);
      },
    });
  }

  let openUnit = null;  // index of the unit whose detail is open
  function closeDetail() {
    for (const d of doc.querySelectorAll('tr.detail-row')) d.remove();
  }
  function showDetail(index, scroll) {
    closeDetail();
    openUnit = index;
    const u = units[index];
    const rows = doc.querySelectorAll('#units-table tr.unit-row');
    let host = null;
    for (const r of rows) {
      if (r.dataset.compileId === u.compile_id && r.dataset.pid === pidText(u.pid)) host = r;
    }
    if (!host) return;
    const td = el('td', { colspan: String(host.children.length) });
    td.appendChild(unitDetail(u));
    const tr = el('tr', { class: 'detail-row' }, td);
    host.after(tr);
    if (scroll) host.scrollIntoView({ block: 'start' });
  }
  function openFromHash() {
    const want = parseUnitHash(win.location.hash);
    if (!want || !unitsTable) return;
    const index = unitIndex.get(want.pid + ':' + want.compileId);
    if (index === undefined) return;
    openUnit = index;
    unitsTable.reveal(index);  // renders, and afterRender shows the detail
    showDetail(index, true);
  }

  function unitDetail(u) {
    const d = el('div', { class: 'unit-detail', 'data-compile-id': u.compile_id,
                          'data-pid': pidText(u.pid) });
    const close = el('button', { class: 'close', type: 'button' }, 'close');
    close.addEventListener('click', () => {
      openUnit = null;
      closeDetail();
      if (win.location.hash.startsWith('#unit=')) {
        win.history.replaceState(null, '', win.location.pathname + win.location.search);
      }
    });
    d.appendChild(close);
    d.appendChild(el('h3', null, '[' + u.compile_id + '] ' + u.name));
    const facts = [];
    if (u.pid !== null) facts.push('pid ' + u.pid);
    if (u.thread) facts.push('thread ' + (u.thread.thread || u.thread.tid));
    if (u.wall_ns !== null) facts.push('wall ' + humanNs(u.wall_ns));
    if (u.start_ns !== null && traceBegin !== null) {
      facts.push('starts at +' + humanNs(u.start_ns - traceBegin));
    }
    facts.push(u.slices + ' slices on ' + u.threads + ' threads');
    if (failed(u)) facts.push('failed: ' + u.metrics.fail_type + ': ' + (u.metrics.fail_reason || ''));
    if (recompileReason(u) !== null) facts.push('recompile: ' + recompileReason(u));
    d.appendChild(el('p', { class: 'note' }, facts.join(' · ')));

    d.appendChild(el('h4', null, 'Phases'));
    d.appendChild(waterfall(u));
    if (u.spans_total > u.spans.length) {
      d.appendChild(el('p', { class: 'note' },
                       'the ' + u.spans.length + ' longest of ' + u.spans_total + ' spans'));
    }
    if (u.phases.length) {
      const t = el('table', { class: 'phases' });
      t.appendChild(el('tr', null, el('th', null, 'phase'), el('th', { class: 'num' }, 'count'),
                       el('th', { class: 'num' }, 'total'), el('th', { class: 'num' }, 'self')));
      for (const p of u.phases) {
        t.appendChild(el('tr', null, el('td', null, p.name), el('td', { class: 'num' }, p.count),
                         el('td', { class: 'num' }, humanNs(p.total_ns)),
                         el('td', { class: 'num' }, humanNs(p.self_ns))));
      }
      d.appendChild(t);
    }

    d.appendChild(el('h4', null, 'Metrics record'));
    const mt = el('table', { class: 'metrics-fields' });
    if (u.metrics && u.metrics.has_record) {
      // Every field of the record: those the report parsed (kept once, in
      // their members), then the rest as they were, then the user's context.
      const m = u.metrics;
      const rows = [['compile_id', u.compile_id], ['name', m.name]];
      if (m.duration_ns !== null) rows.push(['duration_us', m.duration_ns / 1000]);
      for (const [k, v] of Object.entries(m.columns_ns)) rows.push([k + '_us', v / 1000]);
      for (const k of ['recompile_reason', 'fail_type', 'fail_reason']) {
        if (m[k] !== null) rows.push([k, m[k]]);
      }
      if (m.artifacts.length) {
        rows.push(['artifacts', m.artifacts.map(({ href, ...a }) => a)]);
      }
      for (const [k, v] of Object.entries(m.fields)) rows.push([k, v]);
      const firstUser = rows.length;
      for (const [k, v] of Object.entries(m.context)) rows.push([k, v]);
      rows.forEach(([k, v], i) => {
        mt.appendChild(el('tr', { class: i >= firstUser ? 'user' : null },
                          el('td', { class: 'key' }, k),
                          el('td', { class: 'value' }, typeof v === 'string' ? v : JSON.stringify(v))));
      });
    } else {
      mt.appendChild(el('tr', null, el('td', { class: 'note' }, 'no metrics record for this unit')));
    }
    d.appendChild(mt);
    if (u.metrics && u.metrics.gpu) {
      d.appendChild(el('p', { class: 'note' }, 'GPU record: ' + JSON.stringify(u.metrics.gpu)));
    }

    d.appendChild(el('h4', null, 'Artifacts'));
    const ul = el('ul', { class: 'artifacts' });
    const arts = u.metrics ? u.metrics.artifacts : [];
    for (const a of arts) {
      const link = el('a', { class: 'artifact', href: a.href, 'data-bytes': String(a.bytes),
                             'data-kind': a.kind }, a.kind);
      ul.appendChild(el('li', null, link, ' ' + humanBytes(a.bytes) + ' · fnv1a ' + a.fnv1a +
                        ' · ' + a.path));
    }
    if (!arts.length) ul.appendChild(el('li', { class: 'note' }, 'none'));
    d.appendChild(ul);
    return d;
  }

  // The unit's phase spans: a lane per thread, nested spans one row down.
  function waterfall(u) {
    const width = 960;
    const labelW = 150;
    const rowH = 16;
    const plotW = width - labelW - 10;
    let extent = u.wall_ns !== null && u.start_ns !== null ? u.end_ns - u.start_ns : 0;
    for (const s of u.spans) extent = Math.max(extent, s[1] + s[2]);
    extent = Math.max(extent, 1);
    // Depth per span inside its lane: a stack of open ends (spans come by start).
    const laneRows = u.lanes.map(() => 1);
    const placed = [];
    const stacks = u.lanes.map(() => []);
    for (const s of u.spans) {
      const st = stacks[s[3]];
      while (st.length && st[st.length - 1] <= s[1]) st.pop();
      placed.push([s, st.length]);
      st.push(s[1] + s[2]);
      laneRows[s[3]] = Math.max(laneRows[s[3]], st.length);
    }
    const laneY = [];
    let y = 18;
    for (let i = 0; i < u.lanes.length; ++i) {
      laneY.push(y);
      y += laneRows[i] * rowH + 6;
    }
    const height = Math.max(y, 40);
    const svg = svgEl('svg', { class: 'waterfall', width: String(width), height: String(height),
                               viewBox: '0 0 ' + width + ' ' + height });
    const x = (ns) => labelW + (ns / extent) * plotW;
    const axis = svgEl('text', { x: String(labelW), y: '12' });
    axis.textContent = '0';
    svg.appendChild(axis);
    const axisEnd = svgEl('text', { x: String(width - 10), y: '12', 'text-anchor': 'end' });
    axisEnd.textContent = humanNs(extent);
    svg.appendChild(axisEnd);
    u.lanes.forEach((lane, i) => {
      svg.appendChild(svgEl('rect', { class: 'lane-bg', x: String(labelW), y: String(laneY[i]),
                                      width: String(plotW), height: String(laneRows[i] * rowH) }));
      const label = svgEl('text', { class: 'lane-label', x: '4', y: String(laneY[i] + 12) });
      label.textContent = lane.thread || 'tid ' + lane.tid;
      svg.appendChild(label);
    });
    if (!u.spans.length) {
      const t = svgEl('text', { x: String(labelW), y: '30' });
      t.textContent = 'no phase spans in the trace';
      svg.appendChild(t);
    }
    for (const [s, depth] of placed) {
      const x0 = x(s[1]);
      const w = Math.max(1, x(s[1] + s[2]) - x0);
      const r = svgEl('rect', { class: 'phase', 'data-name': s[0], x: x0.toFixed(1),
                                y: String(laneY[s[3]] + depth * rowH), width: w.toFixed(1),
                                height: String(rowH - 2), fill: nameColor(s[0]) });
      svgTitle(r, s[0] + ': ' + humanNs(s[2]) + ' at +' + humanNs(s[1]));
      svg.appendChild(r);
      if (w > 60) {
        const t = svgEl('text', { x: (x0 + 3).toFixed(1), y: String(laneY[s[3]] + depth * rowH + 11) });
        t.textContent = s[0].length * 6 > w ? s[0].slice(0, Math.floor(w / 6) - 1) + '…' : s[0];
        svg.appendChild(t);
      }
    }
    return svg;
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
  function buildCompileTimes() {
    const table = doc.getElementById('compile-times-table');
    if (!table) return;
    const rows = DATA.compile_times || [];
    const self = new Map((DATA.phases || []).map((p) => [p.name, p.self_ns]));
    const num = (key, label, f) => ({ key, label, num: true, sort: f, cell: nsCell(f) });
    new DataTable({
      table,
      pager: doc.getElementById('compile-times-pager'),
      filterInput: doc.getElementById('compile-times-filter'),
      rows,
      matches: (r, q) => r.name.toLowerCase().includes(q),
      columns: [
        { key: 'name', label: 'name', sort: (r) => r.name, cell: textCell((r) => r.name + (r.gpu_kernel ? ' (GPU kernel)' : '')) },
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
  function buildGpu() {
    const sec = doc.getElementById('gpu');
    if (!sec || !DATA.gpu) return;
    const g = DATA.gpu;
    const note = doc.getElementById('gpu-note');
    if (!g.present) {
      note.textContent = 'No GPU activity in this trace (no kernels, copies or sets).';
      doc.getElementById('gpu-table').hidden = true;
      doc.getElementById('gpu-pager').hidden = true;
      return;
    }
    note.textContent = g.kernels + ' kernels (' + humanNs(g.kernel_ns) + '), ' +
      g.kernels_unattributed + ' not attributed to a unit; ' + g.memcpys + ' copies, ' +
      g.memsets + ' sets.';
    const columns = [
      { key: 'compile_id', label: 'unit', sort: (r) => compileIdKey(r.compile_id),
        cell: (r, td) => {
          td.appendChild(unitLink(r.pid, r.compile_id));
          td.appendChild(doc.createTextNode(' ' + r.name));
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
    new DataTable({ table: doc.getElementById('gpu-table'), pager: doc.getElementById('gpu-pager'),
                    rows: g.units, columns });
  }

  // ---- timeline ----
  function buildTimeline() {
    const svg = doc.querySelector('svg#timeline');
    if (!svg) return;
    const lanes = new Map();  // "<pid>\u0000<tid>" -> {label, units: [index...]}
    units.forEach((u, i) => {
      if (!u.in_trace || !u.thread) return;
      const key = pidText(u.pid) + '\u0000' + u.thread.tid;
      if (!lanes.has(key)) {
        lanes.set(key, { pid: u.pid, tid: u.thread.tid,
                         label: (multiPid ? pidText(u.pid) + ' ' : '') + (u.thread.thread || 'tid ' + u.thread.tid),
                         units: [] });
      }
      lanes.get(key).units.push(i);
    });
    const laneList = [...lanes.values()].sort((a, b) =>
      compareValues([pidText(a.pid), String(a.tid)], [pidText(b.pid), String(b.tid)]));
    const note = doc.getElementById('timeline-note');
    if (!laneList.length) {
      note.textContent = 'No compile unit slices in the trace: nothing to place on a timeline.';
      svg.setAttribute('height', '0');
      return;
    }
    let t0 = Infinity;
    let t1 = -Infinity;
    for (const l of laneList) {
      l.units.sort((a, b) => units[a].start_ns - units[b].start_ns);
      for (const i of l.units) {
        t0 = Math.min(t0, units[i].start_ns);
        t1 = Math.max(t1, units[i].end_ns);
      }
    }
    if (t1 <= t0) t1 = t0 + 1;
    const labelW = 170;
    const laneH = 18;
    const axisH = 20;
    const width = Math.max(600, Math.min(1500, (svg.parentElement.clientWidth || 1200) - 10));
    const height = axisH + laneList.length * laneH + 4;
    svg.setAttribute('width', String(width));
    svg.setAttribute('height', String(height));
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    const plotW = width - labelW - 10;
    let view = [t0, t1];
    // Up to INDIVIDUAL_LIMIT visible units get a rect each; past it, units
    // narrower than BIN_PX are merged per BIN_PX column and lane, so the
    // drawing stays at most lanes x width / BIN_PX rects at any zoom.
    const INDIVIDUAL_LIMIT = 2000;
    const BIN_PX = 4;
    let pending = false;
    function draw() {
      pending = false;
      svg.textContent = '';
      const [v0, v1] = view;
      const scale = plotW / (v1 - v0);
      const x = (t) => labelW + (t - v0) * scale;
      const axis = svgEl('line', { class: 'axis', x1: String(labelW), x2: String(labelW + plotW),
                                   y1: String(axisH - 4), y2: String(axisH - 4) });
      svg.appendChild(axis);
      for (let k = 0; k <= 4; ++k) {
        const t = svgEl('text', { x: String(labelW + (plotW * k) / 4), y: '12',
                                  'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' });
        t.textContent = '+' + humanNs(Math.round(v0 - t0 + ((v1 - v0) * k) / 4));
        svg.appendChild(t);
      }
      let visible = 0;
      for (const l of laneList) {
        for (const i of l.units) if (units[i].end_ns >= v0 && units[i].start_ns <= v1) ++visible;
      }
      const binAll = visible > INDIVIDUAL_LIMIT;
      laneList.forEach((l, li) => {
        const y = axisH + li * laneH;
        const label = svgEl('text', { class: 'lane-label', x: '4', y: String(y + 13) });
        label.textContent = l.label;
        svg.appendChild(label);
        svg.appendChild(svgEl('line', { class: 'lane-sep', x1: String(labelW), x2: String(labelW + plotW),
                                        y1: String(y + laneH), y2: String(y + laneH) }));
        const bins = new Map();  // pixel column -> {n, failed, t}
        for (const i of l.units) {
          const u = units[i];
          if (u.end_ns < v0 || u.start_ns > v1) continue;
          const x0 = Math.max(labelW, x(u.start_ns));
          const x1 = Math.min(labelW + plotW, x(u.end_ns));
          if (binAll && x1 - x0 < BIN_PX) {
            const col = Math.floor(x0 / BIN_PX) * BIN_PX;
            const b = bins.get(col) || { n: 0, failed: false, t: u.start_ns };
            b.n += 1;
            b.failed = b.failed || failed(u);
            bins.set(col, b);
            continue;
          }
          const r = svgEl('rect', { class: 'unit-bar' + (failed(u) ? ' failed' : ''),
                                    'data-compile-id': u.compile_id, 'data-pid': pidText(u.pid),
                                    x: x0.toFixed(1), y: String(y + 2),
                                    width: Math.max(1, x1 - x0).toFixed(1), height: String(laneH - 4) });
          svgTitle(r, '[' + u.compile_id + '] ' + u.name + ': ' + humanNs(u.wall_ns) +
                   (failed(u) ? ' (failed)' : ''));
          svg.appendChild(r);
        }
        for (const [col, b] of bins) {
          const r = svgEl('rect', { class: 'unit-bin' + (b.failed ? ' failed' : ''), x: String(col),
                                    y: String(y + 2), width: String(BIN_PX - 1), height: String(laneH - 4),
                                    'data-count': String(b.n), 'data-t': String(b.t) });
          svgTitle(r, b.n + ' units (zoom in to see them)');
          svg.appendChild(r);
        }
      });
      note.textContent = visible + ' units in view' +
        (binAll ? '; units narrower than ' + BIN_PX + ' px are merged per ' + BIN_PX + ' px column (zoom in: wheel, or drag to pan, double-click to reset)'
          : ' (wheel to zoom, drag to pan, double-click to reset)');
    }
    function redraw() {
      if (!pending) {
        pending = true;
        win.requestAnimationFrame(draw);
      }
    }
    function timeAt(clientX) {
      const box = svg.getBoundingClientRect();
      const px = ((clientX - box.left) / box.width) * width;
      return view[0] + ((px - labelW) / plotW) * (view[1] - view[0]);
    }
    function zoom(center, factor) {
      const span = Math.max(1000, (view[1] - view[0]) * factor);  // at least 1 µs wide
      const f = (center - view[0]) / (view[1] - view[0]);
      let a = center - f * span;
      let b = a + span;
      if (a < t0) [a, b] = [t0, Math.min(t1, t0 + span)];
      if (b > t1) [a, b] = [Math.max(t0, t1 - span), t1];
      view = [a, b];
      redraw();
    }
    svg.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      zoom(timeAt(ev.clientX), ev.deltaY < 0 ? 0.7 : 1 / 0.7);
    }, { passive: false });
    let drag = null;
    svg.addEventListener('mousedown', (ev) => {
      drag = { x: ev.clientX, view: view.slice(), moved: false };
    });
    win.addEventListener('mousemove', (ev) => {
      if (!drag) return;
      const box = svg.getBoundingClientRect();
      const dt = ((ev.clientX - drag.x) / box.width) * width * ((drag.view[1] - drag.view[0]) / plotW);
      if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
      const span = drag.view[1] - drag.view[0];
      const a = Math.min(Math.max(t0, drag.view[0] - dt), t1 - span);
      view = [a, a + span];
      redraw();
    });
    win.addEventListener('mouseup', () => {
      setTimeout(() => { drag = null; }, 0);
    });
    svg.addEventListener('dblclick', () => {
      view = [t0, t1];
      redraw();
    });
    svg.addEventListener('click', (ev) => {
      if (drag && drag.moved) return;
      const target = ev.target;
      if (target.classList.contains('unit-bar')) {
        win.location.hash = unitHash(target.dataset.pid === '' ? null : target.dataset.pid,
                                     target.dataset.compileId);
      } else if (target.classList.contains('unit-bin')) {
        zoom(Number(target.dataset.t), 0.1);
      }
    });
    for (const [id, f] of [['timeline-zoom-in', 0.5], ['timeline-zoom-out', 2]]) {
      const b = doc.getElementById(id);
      if (b) b.addEventListener('click', () => zoom((view[0] + view[1]) / 2, f));
    }
    const reset = doc.getElementById('timeline-reset');
    if (reset) reset.addEventListener('click', () => { view = [t0, t1]; redraw(); });
    draw();
  }

  // ---- comparison ----
  function buildCompare() {
    const sec = doc.getElementById('compare');
    if (!sec || !DATA.compare) return;
    const c = DATA.compare;
    if (c.comparison) {
      const h = c.comparison;
      sec.appendChild(el('p', { class: 'note' },
        'baseline: ' + h.baseline.join(', ') + ' · new: ' + h.new.join(', ') + ' · flagged beyond ' +
        h.threshold_pct + '% of the baseline\'s spread and ' + humanNs(h.min_change_ns) + ' · ' +
        h.slower + ' slower, ' + h.faster + ' faster, ' + h.added + ' added, ' + h.removed + ' removed' +
        (h.fail_if_slower_pct !== null ? ', ' + h.failing + ' failing' : '')));
      if (h.warnings.length) {
        const ul = el('ul', { class: 'warnings' });
        for (const w of h.warnings) ul.appendChild(el('li', null, w));
        sec.appendChild(ul);
      }
    }
    const titles = { names: 'Span names', units: 'Compile units (by name)', kernels: 'GPU kernels' };
    for (const key of ['names', 'units', 'kernels']) {
      if (!c[key]) continue;
      sec.appendChild(el('h3', null, titles[key]));
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
      new DataTable({
        table, pager, rows: c[key],
        columns: [
          { key: 'name', label: 'name', sort: (r) => r.name, cell: textCell((r) => r.name) },
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
  function buildTopSpans() {
    const table = doc.getElementById('top-spans-table');
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

  doc.title = 'jitscope report: ' + DATA.header.input;
  buildSummary();
  buildCompare();
  buildUnits();
  buildCompileTimes();
  buildGpu();
  buildTimeline();
  buildTopSpans();
  win.addEventListener('hashchange', openFromHash);
  doc.addEventListener('click', (ev) => {
    // A second click on the open unit's link: hashchange does not fire.
    const a = ev.target.closest && ev.target.closest('a.unit-link');
    if (a && a.getAttribute('href') === win.location.hash) {
      ev.preventDefault();
      openFromHash();
    }
  });
  openFromHash();
  // Milliseconds since navigation: HTML parsed, data parsed, page built
  // (for measuring big reports, docs/report-html.md).
  doc.body.dataset.htmlMs = String(Math.round(startMs));
  doc.body.dataset.dataMs = String(Math.round(parsedMs));
  doc.body.dataset.renderMs = String(Math.round(win.performance.now()));
}

if (typeof module !== 'undefined' && module.exports) {
  module.exports = { humanNs, humanBytes, compileIdKey, compareValues, unitHash, parseUnitHash };
} else {
  buildPage(document, window);
}
