// jitscope-report --format html: the critical path section
// (docs/critical-path.md): the units the run's wall time waited for, as
// totals, a bar across the wall time (each unit's time on the path, and the
// waits between them) and a table in time order. One part of the page's
// script (html/embed.cmake).
'use strict';

const PATH_LINK_TEXT = {
  waited_for: 'the next waited for it',
  same_thread: 'the next ran after it on its thread',
  last: 'ended last',
};

function criticalPathNote(p) {
  const pct = (v) => (p.wall_ns > 0 ? (100 * v / p.wall_ns).toFixed(1) + '%' : '-');
  const count = (n, one, many) => n + ' ' + (n === 1 ? one : many);
  let s = 'Wall ' + humanNs(p.wall_ns) + ' (the units\' first start to the last end): units on ' +
    'the path ' + humanNs(p.path_ns) + ' (' + pct(p.path_ns) + '), waits between them ' +
    humanNs(p.waits_ns) + ' (' + pct(p.waits_ns) + '). Work in units ' + humanNs(p.work_ns) +
    ' on ' + count(p.threads, 'thread', 'threads') + ' in ' + count(p.processes, 'process', 'processes');
  if (p.wall_ns > 0) s += ' (' + (p.work_ns / p.wall_ns).toFixed(2) + '× the wall)';
  s += '. ' + count(p.steps_total, 'unit', 'units') + ' on the path, ' + p.steps_waited +
    ' of them reached by a wait. In the bar, units are blue and waits hatched.';
  if (p.steps.length < p.steps_total) {
    s += ' The ' + p.steps.length + ' longest are kept; in the bar, the others are the plain stretches.';
  }
  if (p.waits_unmatched) {
    s += ' ' + p.waits_unmatched + ' of ' + p.waits + ' waits were not followed: the unit waited ' +
      'for, or the one waiting, has no slice in the trace.';
  }
  return s;
}

function buildCriticalPath(page) {
  const p = page.data.critical_path;
  const sec = document.getElementById('critical-path');
  if (!sec || !p || !p.steps) return;
  document.getElementById('critical-path-note').textContent = criticalPathNote(p);
  // The bar: the path's waits and units across the wall time, each at its
  // place (so that it stays to scale when only the longest steps are kept:
  // the others' time is the bar's plain background).
  const bar = document.getElementById('critical-path-bar');
  const pct = (ns) => (p.wall_ns > 0 ? (100 * ns / p.wall_ns) : 0) + '%';
  const place = (from, ns) => 'left:' + pct(from - p.begin_ns) + ';width:' + pct(ns);
  for (const s of p.steps) {
    const pathFrom = s.end_ns - s.on_path_ns;  // where its time on the path begins
    if (s.wait_before_ns > 0) {
      bar.appendChild(el('div', { class: 'cp-wait', style: place(s.start_ns - s.wait_before_ns, s.wait_before_ns),
        title: 'waiting ' + humanNs(s.wait_before_ns) }));
    }
    const seg = el('a', { class: 'cp-unit', href: unitHash(s.pid, s.compile_id),
      style: place(pathFrom, s.on_path_ns),
      title: s.compile_id + ' ' + s.name + ': ' + humanNs(s.on_path_ns) + ' on the path' });
    seg.dataset.compileId = s.compile_id;
    bar.appendChild(seg);
  }
  const multiPid = new Set(p.steps.map((s) => pidText(s.pid))).size > 1 || page.multiPid;
  const ns = (key, label, f, title) => ({ key, label, num: true, sort: f, cls: key, cell: nsCell(f), title });
  const threadText = (s) => (s.thread ? s.thread + ' (' + pidText(s.tid) + ')' : pidText(s.tid));
  const columns = [
    { key: 'compile_id', label: 'compile id', sort: (s) => compileIdKey(s.compile_id), cls: 'compile-id',
      cell: (s, td) => {
        td.append(page.unitIndex.has(pidText(s.pid) + ':' + s.compile_id) ? unitLink(s.pid, s.compile_id) : s.compile_id);
      } },
    { key: 'name', label: 'unit', sort: (s) => s.name, cls: 'name', cell: textCell((s) => s.name) },
    { key: 'unit_key', label: 'unit key', sort: (s) => s.unit_key, cls: 'unit-key', cell: textCell((s) => s.unit_key),
      title: 'what the unit compiles: the same kernel in two processes has one key' },
    { key: 'thread', label: 'thread', sort: threadText, cls: 'thread', cell: textCell(threadText) },
    ns('start_ns', 'start', (s) => s.start_ns - p.begin_ns, 'from the units\' first start'),
    ns('on_path_ns', 'on the path', (s) => s.on_path_ns,
      'from the end of the unit before it on the path (or its own start, if later) to its end'),
    { key: 'of_wall', label: '% of wall', num: true, sort: (s) => s.on_path_ns, cls: 'of-wall',
      cell: textCell((s) => (p.wall_ns > 0 ? (100 * s.on_path_ns / p.wall_ns).toFixed(1) + '%' : '')) },
    ns('wait_before_ns', 'wait before', (s) => s.wait_before_ns,
      'from the end of the unit before it on the path to its start: no unit of the path ran'),
    { key: 'next', label: 'next', sort: (s) => s.next, cls: 'next', cell: textCell((s) => PATH_LINK_TEXT[s.next] || s.next) },
  ];
  if (!p.steps.some((s) => s.unit_key)) columns.splice(2, 1);
  if (multiPid) {
    columns.unshift({ key: 'pid', label: 'pid', sort: (s) => pidText(s.pid), cls: 'pid', cell: textCell((s) => pidText(s.pid)) });
  }
  new DataTable({
    table: document.getElementById('critical-path-table'),
    pager: document.getElementById('critical-path-pager'),
    rows: p.steps,
    rowAttrs: (s) => ({ 'data-compile-id': s.compile_id, 'data-pid': pidText(s.pid), 'data-next': s.next }),
    columns,
  });
}
