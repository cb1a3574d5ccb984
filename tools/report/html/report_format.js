// jitscope-report --format html: the page's script, built from the JSON in
// the data block, id "jitscope-data" (schema: docs/report-html.md). Plain
// ES2020, no framework, nothing fetched. Every piece of data goes into the
// page as text (textContent, createTextNode, setAttribute), never as markup.
// html/embed.cmake joins the report_*.js files in the order
// tools/report/CMakeLists.txt lists them into one script element, so their
// top-level names share one scope; this one comes first.
//
// Big reports stay responsive because nothing is drawn per unit up front:
// tables show one page of 100 rows (sorting and filtering work on an index
// array over all rows), a unit's detail is built when opened, and the
// timeline draws only the units inside the visible window, merging those
// narrower than a few pixels into one bin per column and lane.
//
// This file: pure helpers (no DOM); node loads them in report_html_test to
// check humanNs against human_ns.
'use strict';


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
