// jitscope-report --format html: a unit's detail: facts, phase waterfall,
// phases, metrics record and artifact links.
// One part of the page's script: html/embed.cmake joins the report_*.js
// files in the order tools/report/CMakeLists.txt lists them into one
// script element, so their top-level names share one scope.
'use strict';

function unitDetail(page, u) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const d = el('div', { class: 'unit-detail', 'data-compile-id': u.compile_id,
                        'data-pid': pidText(u.pid) });
  const close = el('button', { class: 'close', type: 'button' }, 'close');
  close.addEventListener('click', () => {
    page.openUnit = null;
    closeDetail();
    if (window.location.hash.startsWith('#unit=')) {
      window.history.replaceState(null, '', window.location.pathname + window.location.search);
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
  if (u.unit_key !== null && u.unit_key !== undefined) facts.push('key ' + u.unit_key);
  if (u.frame !== null && u.frame !== undefined) facts.push('frame ' + u.frame);
  if (failed(u)) facts.push(u.status + ': ' + u.fail_type + ': ' + (u.fail_reason || ''));
  if (u.status === 'incomplete') facts.push('incomplete: still open when the trace ended');
  if (recompileReason(u) !== null) facts.push('recompile: ' + recompileReason(u));
  d.appendChild(el('p', { class: 'note' }, facts.join(' · ')));

  d.appendChild(el('h4', null, 'Phases'));
  d.appendChild(waterfall(u));
  if (u.waterfall_dropped) {
    d.appendChild(el('p', { class: 'note' },
                     'waterfall not kept: only the slowest units keep theirs ' +
                     '(jitscope-report --waterfall-units); its ' + u.spans_total +
                     ' spans are in the phases below'));
  } else if (u.spans_total > u.spans.length) {
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
    t.textContent = u.waterfall_dropped ? 'waterfall not kept (not among the slowest units)'
                                        : 'no phase spans in the trace';
    svg.appendChild(t);
  }
  // The longest stretch outside every span: behind the spans, over all lanes.
  const gap = u.longest_gap;
  if (gap && u.start_ns !== null && u.unexplained_ns > 0) {
    const g0 = x(gap.start_ns - u.start_ns);
    const r = svgEl('rect', { class: 'gap', x: g0.toFixed(1), y: '16',
                              width: Math.max(1, x(gap.start_ns - u.start_ns + gap.dur_ns) - g0).toFixed(1),
                              height: String(height - 18) });
    svgTitle(r, 'longest unexplained gap: ' + humanNs(gap.dur_ns) + ' at +' +
             humanNs(gap.start_ns - u.start_ns));
    svg.appendChild(r);
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

