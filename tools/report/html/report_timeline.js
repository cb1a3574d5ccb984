// jitscope-report --format html: the timeline: a lane per thread that ran
// units, a bar per unit, zoom and pan.
// One part of the page's script: html/embed.cmake joins the report_*.js
// files in the order tools/report/CMakeLists.txt lists them into one
// script element, so their top-level names share one scope.
'use strict';

// ---- timeline ----
function buildTimeline(page) {
  const { data: DATA, units, unitIndex, multiPid, traceBegin } = page;
  const svg = document.querySelector('svg#timeline-chart');
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
  const note = document.getElementById('timeline-note');
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
      window.requestAnimationFrame(draw);
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
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    const box = svg.getBoundingClientRect();
    const dt = ((ev.clientX - drag.x) / box.width) * width * ((drag.view[1] - drag.view[0]) / plotW);
    if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
    const span = drag.view[1] - drag.view[0];
    const a = Math.min(Math.max(t0, drag.view[0] - dt), t1 - span);
    view = [a, a + span];
    redraw();
  });
  window.addEventListener('mouseup', () => {
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
      window.location.hash = unitHash(target.dataset.pid === '' ? null : target.dataset.pid,
                                   target.dataset.compileId);
    } else if (target.classList.contains('unit-bin')) {
      zoom(Number(target.dataset.t), 0.1);
    }
  });
  for (const [id, f] of [['timeline-zoom-in', 0.5], ['timeline-zoom-out', 2]]) {
    const b = document.getElementById(id);
    if (b) b.addEventListener('click', () => zoom((view[0] + view[1]) / 2, f));
  }
  const reset = document.getElementById('timeline-reset');
  if (reset) reset.addEventListener('click', () => { view = [t0, t1]; redraw(); });
  draw();
}

