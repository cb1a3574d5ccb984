// jitscope-report --format html: the page's entry point, last of the
// report_*.js parts (html/embed.cmake joins them into one script element).
'use strict';

// What every section reads: the data and the units' index.
function pageModel(data) {
  const units = data.units || [];
  const unitIndex = new Map();  // "<pid>:<compile_id>" -> index
  units.forEach((u, i) => {
    const key = pidText(u.pid) + ':' + u.compile_id;
    if (!unitIndex.has(key)) unitIndex.set(key, i);
  });
  return {
    data,
    units,
    unitIndex,
    multiPid: new Set(units.map((u) => pidText(u.pid))).size > 1,
    traceBegin: data.header && data.header.time_span ? data.header.time_span.begin_ns : null,
    unitsTable: null,  // the units' DataTable
    openUnit: null,  // index of the unit whose detail is open
  };
}

function buildPage() {
  const startMs = window.performance.now();  // the HTML is parsed by now
  const page = pageModel(JSON.parse(document.getElementById('jitscope-data').textContent));
  const parsedMs = window.performance.now();
  document.title = 'jitscope report: ' + page.data.header.input;
  buildSummary(page);
  buildCompare(page);
  buildUnits(page);
  buildFailedPasses(page);
  buildCompileTimes(page);
  buildIrGrowth(page);
  buildGpu(page);
  buildTimeline(page);
  buildCriticalPath(page);
  buildTopSpans(page);
  buildCaches(page);
  buildAutotune(page);
  window.addEventListener('hashchange', () => openFromHash(page));
  document.addEventListener('click', (ev) => {
    // A second click on the open unit's link: hashchange does not fire.
    const a = ev.target.closest && ev.target.closest('a.unit-link');
    if (a && a.getAttribute('href') === window.location.hash) {
      ev.preventDefault();
      openFromHash(page);
    }
  });
  openFromHash(page);
  // Milliseconds since navigation: HTML parsed, data parsed, page built
  // (for measuring big reports, docs/report-html.md).
  document.body.dataset.htmlMs = String(Math.round(startMs));
  document.body.dataset.dataMs = String(Math.round(parsedMs));
  document.body.dataset.renderMs = String(Math.round(window.performance.now()));
}

if (typeof module !== 'undefined' && module.exports) {
  module.exports = { humanNs, humanBytes, compileIdKey, compareValues, unitHash, parseUnitHash };
} else {
  buildPage();
}
