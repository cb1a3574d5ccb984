// Opens a big jitscope-report HTML report (10,000 units: gen_units.mjs) in
// headless Chromium and checks that it pages, filters and sorts all units
// while keeping one page of rows in the DOM.
//
// usage: node check_large.mjs --html REPORT.html --metrics M.jsonl --trace T.json [--screenshot P.png]
//
// Checks: .page-info says "of <records>"; at most 100 unit rows in the DOM
// (and at least one), the failed and recompiled ones among them marked; the
// metrics columns named like Object.prototype's members (constructor,
// toString, __proto__: gen_units.mjs kBuiltinColumns) have a header, the
// record's value in a unit that has them and an empty cell (never
// "NaN s") in one that does not; .page-next up to the last page shows the last unit
// (the last to start, unit N-1 of gen_units) and .page-prev comes back;
// #units-filter with a unit's name finds exactly that unit (and "of 1"),
// cleared it shows all again; sorting by wall_ns descending puts the unit
// with the longest slice first and ascending the shortest (over all pages,
// not only the first), with every page in order; no request but
// file:/data:/blob:, no console error, no page error, no failed request.
// #caches-table holds the one layer with gen_units' lookups, hits and
// misses, and #cache-misses-table its misses per reason and each reason's
// first change (gen_units.mjs expectedCaches). #critical-path-note counts
// the units of the last unit's thread on the path (no waits in gen_units),
// and the table and bar hold the 1,000 kept.
// Not checked: load time (bench/report/html_bench.sh measures it).
//
// exit 0: pass; 1: a check failed; 2: usage or the browser could not start.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  clickCentered,
  clickSort,
  collectFailures,
  guard,
  monotonic,
  readCompileRecords,
  readTraceEvents,
  runCheck,
  settle,
  unitRows,
  unitsFromTrace,
  waits,
} from "./browser.mjs";
import { expectedCaches, kBuiltinColumns } from "./gen_units.mjs";

const kPageRows = 100;

const pageInfo = (page) => page.$eval("#units-pager .page-info", (e) => e.textContent.trim());
const rowsInDom = (page) => page.$$eval("tr.unit-row", (trs) => trs.length);

// Clicks a pager button and waits for .page-info to change; false if it did not.
async function turn(page, button) {
  const before = await pageInfo(page);
  await clickCentered(page, `#units-pager ${button}`);
  try {
    await page.waitForFunction((b) => document.querySelector("#units-pager .page-info")?.textContent.trim() !== b, { timeout: waits.ms }, before);
  } catch {
    return false;
  }
  await settle(page);
  return true;
}

export async function checkLarge(browser, opts) {
  return collectFailures(`check_large ${path.basename(opts.html)}`, (f) => checkLargeInto(browser, opts, f));
}

async function checkLargeInto(browser, opts, f) {
  const records = readCompileRecords(opts.metrics);
  const n = records.length;
  const trace = unitsFromTrace(readTraceEvents(opts.trace));
  const byStart = [...trace.entries()].sort((a, b) => a[1].begin - b[1].begin);
  const lastId = byStart[byStart.length - 1][0];
  const walls = [...trace.values()].map((u) => u.wall);
  const maxWall = Math.max(...walls);
  const minWall = Math.min(...walls);
  const problems = [];
  const page = await browser.newPage();
  await guard(page, problems);
  await page.goto(pathToFileURL(path.resolve(opts.html)).href, { waitUntil: "load" });
  try {
    await page.waitForSelector("#units-table tbody tr.unit-row", { timeout: 60000 });
  } catch {
    f.add("no row matched #units-table tbody tr.unit-row within 60 s");
    f.list.push(...problems);
    await page.close();
    return;
  }

  // ---- one page in the DOM, the pager counts all ----
  const info = await pageInfo(page).catch(() => "");
  f.check(new RegExp(`\\bof ${n}$`).test(info), `.page-info is ${JSON.stringify(info)}, want "... of ${n}"`);
  const inDom = await rowsInDom(page);
  f.check(inDom > 0 && inDom <= kPageRows, `${inDom} tr.unit-row in the DOM, want 1..${kPageRows} (one page)`);
  const first = await unitRows(page);
  // The first page's failed and recompiled rows (gen_units has both there).
  const byId = new Map(records.map((r) => [r.compile_id, r]));
  let marked = 0;
  for (const row of first) {
    const rec = byId.get(row.id);
    if (!f.check(rec !== undefined, `row ${row.id} is not in the metrics file`)) continue;
    const failed = rec.fail_type !== undefined;
    const recompiled = Boolean(rec.recompile_reason);
    marked += failed || recompiled ? 1 : 0;
    f.check(row.classes.includes("failed") === failed, `row ${row.id}: class failed is ${!failed}, the record ${failed ? "failed" : "did not fail"}`);
    f.check(row.classes.includes("recompile") === recompiled, `row ${row.id}: class recompile is ${!recompiled}, the record ${recompiled ? "is" : "is not"} a recompile`);
  }
  f.check(marked > 0, "the first page has no failed or recompiled row to check");

  // ---- metrics columns named like Object.prototype's members ----
  const keys = await page.$$eval("#units-table thead th", (ths) => ths.map((th) => th.dataset.key || ""));
  for (const name of kBuiltinColumns) {
    const at = keys.indexOf(`col:${name}`);
    if (!f.check(at >= 0, `no th[data-key="col:${name}"] for the records' ${name}_us`)) continue;
    const cells = await page.$$eval("#units-table tbody tr.unit-row", (trs, i) =>
      trs.map((tr) => [tr.dataset.compileId, tr.children[i] ? tr.children[i].textContent.trim() : null]), at);
    const bad = [];
    let with_ = 0;
    for (const [id, text] of cells) {
      const rec = byId.get(id);
      const has = rec !== undefined && Object.hasOwn(rec, `${name}_us`);
      with_ += has ? 1 : 0;
      if (has ? !text || /NaN/.test(text) : text !== "") bad.push(`${id} ${JSON.stringify(text)}`);
    }
    f.check(with_ > 0 && with_ < cells.length, `column ${name}: ${with_} of ${cells.length} rows on the first page have it, want some but not all`);
    f.check(bad.length === 0, `column ${name}: ${bad.length} cells are not the record's value, or empty without one: ${bad.slice(0, 5).join(", ")}`);
  }

  // ---- to the last page and back ----
  let turns = 0;
  while (turns < Math.ceil(n / kPageRows) + 5 && !new RegExp(`^\\D*\\d+\\D+${n} of ${n}$`).test(await pageInfo(page))) {
    if (!(await turn(page, ".page-next"))) break;
    ++turns;
  }
  const lastInfo = await pageInfo(page);
  const lastStart = n - ((n - 1) % kPageRows);
  f.check(new RegExp(`^${lastStart}\\D+${n} of ${n}$`).test(lastInfo), `after ${turns} clicks on .page-next, .page-info is ${JSON.stringify(lastInfo)}, want "${lastStart}–${n} of ${n}"`);
  const last = await unitRows(page);
  f.check(last.length === n - lastStart + 1, `the last page has ${last.length} rows, want ${n - lastStart + 1}`);
  f.check(last.length > 0 && last[last.length - 1].id === lastId, `the last page's last row is ${last[last.length - 1]?.id}, the last unit to start is ${lastId}`);
  f.check(await turn(page, ".page-prev"), ".page-prev on the last page changed nothing");
  f.check((await rowsInDom(page)) <= kPageRows, `${await rowsInDom(page)} rows in the DOM after paging`);

  // ---- filter by a unit's name ----
  const target = records[Math.floor(n * 0.7777)];
  await clickCentered(page, "#units-filter");
  await page.$eval("#units-filter", (e) => e.select());
  await page.keyboard.type(target.name);
  try {
    await page.waitForFunction((id) => {
      const rows = document.querySelectorAll("#units-table tbody tr.unit-row");
      return rows.length === 1 && rows[0].dataset.compileId === id;
    }, { timeout: waits.ms }, target.compile_id);
  } catch {
    // said below
  }
  const found = await unitRows(page);
  f.check(found.length === 1 && found[0].id === target.compile_id, `filter "${target.name}" shows ${found.length} rows (${found.slice(0, 5).map((r) => r.id).join(", ")}), want only ${target.compile_id}`);
  const fInfo = await pageInfo(page);
  f.check(/\bof 1$/.test(fInfo), `with filter "${target.name}" .page-info is ${JSON.stringify(fInfo)}, want "... of 1"`);
  await clickCentered(page, "#units-filter");
  await page.$eval("#units-filter", (e) => e.select());
  await page.keyboard.press("Backspace");
  try {
    await page.waitForFunction((want) => document.querySelector("#units-pager .page-info")?.textContent.trim().endsWith(want), { timeout: waits.ms }, `of ${n}`);
  } catch {
    f.add(`cleared filter: .page-info is ${JSON.stringify(await pageInfo(page))}, want "... of ${n}"`);
  }

  // ---- sort by wall time over all pages ----
  let dir = await clickSort(page, "wall_ns", null);
  if (dir === "ascending") dir = await clickSort(page, "wall_ns", dir);
  f.check(dir === "descending", `two clicks on th[data-key="wall_ns"] never gave aria-sort descending (${dir})`);
  const desc1 = await unitRows(page);
  f.check(desc1.length > 0 && desc1[0].wall === maxWall, `sorted by wall_ns descending, the first row is ${desc1[0]?.id} (${desc1[0]?.wall} ns); the longest unit lasts ${maxWall} ns`);
  f.check(desc1.length > 0 && trace.get(desc1[0].id)?.wall === maxWall, `sorted by wall_ns descending, the first row ${desc1[0]?.id} is not a unit whose slice lasts ${maxWall} ns`);
  f.check(monotonic(desc1.map((r) => r.wall), "descending"), "sorted descending, the first page is not in order");
  f.check(desc1.length === kPageRows, `sorted, the first page has ${desc1.length} rows, want ${kPageRows}`);
  f.check(desc1.map((r) => r.id).join() !== first.map((r) => r.id).join(), "sorting left the first page unchanged");
  if (await turn(page, ".page-next")) {
    const desc2 = await unitRows(page);
    f.check(monotonic(desc2.map((r) => r.wall), "descending"), "sorted descending, the second page is not in order");
    f.check(desc2.length > 0 && desc2[0].wall <= desc1[desc1.length - 1].wall, `sorted descending, page 2 starts at ${desc2[0]?.wall} ns, above page 1's last ${desc1[desc1.length - 1].wall} ns`);
  } else {
    f.add(".page-next after sorting changed nothing");
  }
  // A sort clicked on page 2 shows the new order from its first page.
  dir = await clickSort(page, "wall_ns", dir);
  f.check(dir === "ascending", `a third click gave aria-sort ${dir}, want ascending`);
  const ascInfo = await pageInfo(page);
  f.check(/^1\D/.test(ascInfo), `sorted ascending from page 2, .page-info is ${JSON.stringify(ascInfo)}, want page 1`);
  const asc = await unitRows(page);
  f.check(asc.length > 0 && asc[0].wall === minWall, `sorted ascending, the first row is ${asc[0]?.id} (${asc[0]?.wall} ns); the shortest unit lasts ${minWall} ns`);
  f.check(monotonic(asc.map((r) => r.wall), "ascending"), "sorted ascending, the first page is not in order");

  // ---- caches: each layer's lookups, and why it missed ----
  const want = expectedCaches(n);
  const layers = await page.$$eval("#caches-table tbody tr", (trs) => trs.map((tr) => ({
    layer: tr.dataset.layer,
    lookups: tr.querySelector("td.lookups")?.textContent.trim(),
    hits: tr.querySelector("td.hits")?.textContent.trim(),
    misses: tr.querySelector("td.misses")?.textContent.trim(),
  }))).catch(() => []);
  if (f.check(layers.length === 1 && layers[0].layer === want.layer,
              `#caches-table has ${layers.length} rows (${layers.map((l) => l.layer).join(", ")}), want one, of layer ${want.layer}`)) {
    for (const k of ["lookups", "hits", "misses"]) {
      f.check(layers[0][k] === String(want[k]), `#caches-table td.${k} is ${JSON.stringify(layers[0][k])}, want ${want[k]}`);
    }
  }
  const reasons = await page.$$eval("#cache-misses-table tbody tr", (trs) => trs.map((tr) => ({
    reason: tr.dataset.reason,
    misses: tr.querySelector("td.misses")?.textContent.trim(),
    change: tr.querySelector("td.change")?.textContent.trim(),
  }))).catch(() => []);
  const canon = (o) => JSON.stringify(Object.keys(o).sort().map((k) => [k, String(o[k])]));
  const got = Object.fromEntries(reasons.map((r) => [r.reason, r.misses]));
  f.check(canon(got) === canon(want.reasons), `#cache-misses-table: misses per reason ${canon(got)}, want ${canon(want.reasons)}`);
  for (const [reason, text] of Object.entries(want.firstChange)) {
    const row = reasons.find((r) => r.reason === reason);
    f.check(row?.change === text, `the ${reason} miss row's td.change is ${JSON.stringify(row?.change)}, want ${JSON.stringify(text)}`);
  }

  // ---- the critical path: no waits, so the thread of the unit that ended
  // last (gen_units' units never overlap on a thread): all its units, the
  // 1,000 longest kept ----
  const lastEnd = [...trace.values()].reduce((a, u) => (u.end > a.end ? u : a));
  const onThread = [...trace.values()].filter((u) => u.pid === lastEnd.pid && u.tid === lastEnd.tid).length;
  const cpNote = await page.$eval("#critical-path-note", (e) => e.textContent).catch(() => "");
  f.check(cpNote.includes(`${onThread} units on the path, 0 of them reached by a wait`),
          `#critical-path-note does not say ${onThread} units on the path: ${JSON.stringify(cpNote)}`);
  const cpInfo = await page.$eval("#critical-path-pager .page-info", (e) => e.textContent.trim()).catch(() => "");
  f.check(cpInfo.endsWith(`of ${Math.min(onThread, 1000)}`),
          `#critical-path-pager says ${JSON.stringify(cpInfo)}, want "... of ${Math.min(onThread, 1000)}"`);
  const cpRows = await page.$$eval("#critical-path-table tbody tr", (trs) => trs.length);
  f.check(cpRows > 0 && cpRows <= kPageRows, `${cpRows} rows in #critical-path-table, want 1..${kPageRows}`);
  const segments = await page.$$eval("#critical-path-bar .cp-unit", (els) => els.length);
  f.check(segments === Math.min(onThread, 1000), `#critical-path-bar has ${segments} units, want ${Math.min(onThread, 1000)}`);

  if (opts.screenshot) {
    await page.screenshot({ path: opts.screenshot });
    console.log(`screenshot: ${path.resolve(opts.screenshot)}`);
  }
  f.list.push(...problems);
  await page.close();
}

function main() {
  return runCheck(
    "check_large",
    "node check_large.mjs --html R.html --metrics M.jsonl --trace T.json [--screenshot P.png]",
    [],
    checkLarge,
  );
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
