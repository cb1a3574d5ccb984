// Opens a jitscope-report HTML report in headless Chromium and checks its
// DOM against the metrics file and trace it was made from (the DOM contract
// is in tests/browser/README.md).
//
// usage: node check_report.mjs --html REPORT.html --metrics M.jsonl --trace T.json
//                              [--screenshot FULL.png] [--compare-html COMPARE.html]
//                              [--passes-html PASSES.html]
//
// Checks: one unit row per compile record (same compile ids, pid and wall
// time from the trace, cache hits/misses summed over the record's caches,
// a context cell); the pager and the filter by compile id; the failed
// unit's row (class failed, "failed" and its fail_type in td.status) and the
// recompiled one's (class recompile, td.recompile-reason = the record's
// reason), and no other row with those classes; sections present; sorting by
// wall_ns both ways (monotonic data-wall-ns, aria-sort, an order other than
// the first); each unit's detail (waterfall with its phases from the trace,
// artifact links that resolve to files whose size is data-bytes and the
// record's bytes, relative when under the report's folder); one artifact
// loaded by the page; no element whose src/href points off the machine
// (http:, https:, ...), no request but file:/data:/blob:, no console error,
// no page error, no failed request.
//
// With --compare-html (the same run's report made with --baseline): that
// page has a section#compare with a compare table of rows, and the same
// request, console and error checks, and no passes or pipelines tables (the
// sample runs no compiler passes).
//
// With --passes-html (a --baseline --fail-if-slower page of runs with
// compiler passes, GVNPass slowed): its passes and pipelines tables, the
// pass and its pipeline "llvm_opt" rows failing, and no other pass failing.
//
// Not checked: how it looks (the screenshots are for people), timing.
//
// exit 0: pass; 1: a check failed (each failure listed); 2: usage or the
// browser could not start.
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

const kSections = ["summary", "units", "compile-times", "gpu", "timeline"];

const sameFile = (a, b) => {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
};

// Checks the report at opts.html with a running browser; returns Failures.
export async function checkReport(browser, opts) {
  return collectFailures(`check_report ${path.basename(opts.html)}`, (f) => checkReportInto(browser, opts, f));
}

async function checkReportInto(browser, opts, f) {
  const records = readCompileRecords(opts.metrics);
  const traceUnits = unitsFromTrace(readTraceEvents(opts.trace));
  const byId = new Map(records.map((r) => [r.compile_id, r]));
  const problems = [];
  const page = await browser.newPage();
  const quiet = await guard(page, problems);
  const url = pathToFileURL(path.resolve(opts.html)).href;
  await page.goto(url, { waitUntil: "load" });
  try {
    await page.waitForSelector("#units-table tbody tr.unit-row", { timeout: 30000 });
  } catch {
    f.add("no row matched #units-table tbody tr.unit-row within 30 s");
    f.list.push(...problems);
    await page.close();
    return;
  }

  // ---- one file: sections, embedded data ----
  const layout = await page.evaluate((ids) => {
    const data = document.querySelector('script[type="application/json"]#jitscope-data');
    let parses = false;
    try {
      JSON.parse(data?.textContent ?? "");
      parses = true;
    } catch {
      // stays false
    }
    return {
      sections: ids.filter((id) => document.querySelector(`section#${id}`) !== null),
      compare: document.querySelector("section#compare") !== null,
      data: data !== null,
      parses,
      histogramRows: [...document.querySelectorAll("table#compile-times-table tbody tr")].map(
        (tr) => tr.querySelector("svg.histogram") !== null,
      ),
      gpuTable: document.querySelector("table#gpu-table") !== null,
      dupIds: (() => {
        const n = {};
        for (const e of document.querySelectorAll("[id]")) n[e.id] = (n[e.id] ?? 0) + 1;
        return Object.keys(n).filter((id) => n[id] > 1);
      })(),
      external: [...document.querySelectorAll("script[src], link[href], iframe[src], object[data]")].map((e) => e.outerHTML.slice(0, 120)),
      offline: [...document.querySelectorAll("[src], [href], [srcset]")]
        .map((e) => e.getAttribute("src") ?? e.getAttribute("href") ?? e.getAttribute("srcset"))
        .filter((v) => {
          try {
            return !["file:", "data:", "blob:", "about:"].includes(new URL(v, document.baseURI).protocol);
          } catch {
            return true;
          }
        }),
      bars: [...document.querySelectorAll("svg#timeline-chart rect.unit-bar[data-compile-id]")].map(
        (r) => r.dataset.compileId,
      ),
    };
  }, kSections);
  for (const id of kSections) f.check(layout.sections.includes(id), `no <section id="${id}">`);
  f.check(!layout.compare, 'a <section id="compare"> without --baseline');
  f.check(layout.data, 'no <script type="application/json" id="jitscope-data">');
  f.check(!layout.data || layout.parses, "#jitscope-data does not parse as JSON");
  f.check(
    layout.histogramRows.length > 0 && layout.histogramRows.every(Boolean),
    `table#compile-times-table: ${layout.histogramRows.length} rows, ` +
      `${layout.histogramRows.filter((x) => !x).length} without an svg.histogram`,
  );
  f.check(layout.gpuTable, "no table#gpu-table");
  const dups = layout.dupIds;
  f.check(dups.length === 0, `ids used more than once: ${dups.join(", ")}`);
  f.check(layout.external.length === 0, `not one file: the page loads ${layout.external.join(", ")} (CSS and JS must be inline)`);
  f.check(layout.offline.length === 0, `elements point off the machine: ${layout.offline.join(", ")}`);
  const barIds = new Set(layout.bars);
  for (const r of records) {
    f.check(barIds.has(r.compile_id), `svg#timeline-chart has no rect.unit-bar for ${r.compile_id}`);
  }

  // ---- rows = compile records ----
  const first = await unitRows(page);
  const rowIds = first.map((r) => r.id);
  f.check(
    first.length === records.length,
    `${first.length} unit rows, the metrics file has ${records.length} compile records`,
  );
  const missing = records.filter((r) => !rowIds.includes(r.compile_id)).map((r) => r.compile_id);
  const extra = rowIds.filter((id) => !byId.has(id));
  f.check(missing.length === 0, `no row for compile id(s) ${missing.join(", ")}`);
  f.check(extra.length === 0, `row(s) for compile id(s) not in the metrics file: ${extra.join(", ")}`);
  f.check(new Set(rowIds).size === rowIds.length, `duplicate rows: ${rowIds.join(", ")}`);
  for (const row of first) {
    const rec = byId.get(row.id);
    if (!rec) continue;
    f.check(row.pid !== undefined && /^\d+$/.test(row.pid), `row ${row.id}: data-pid "${row.pid}"`);
    f.check(Number.isInteger(row.wall) && row.wall >= 0, `row ${row.id}: data-wall-ns "${row.wall}"`);
    const t = traceUnits.get(row.id);
    if (t) {
      f.check(row.wall === t.wall, `row ${row.id}: data-wall-ns ${row.wall}, its slice lasts ${t.wall} ns`);
      f.check(row.pid === String(t.pid), `row ${row.id}: data-pid ${row.pid}, its slice's pid is ${t.pid}`);
    }
    const sum = (k) => Object.values(rec.caches ?? {}).reduce((n, c) => n + (c[k] ?? 0), 0);
    f.check(row.hits === String(sum("hits")), `row ${row.id}: td.cache-hits is ${JSON.stringify(row.hits)}, the record's caches have ${sum("hits")} hits`);
    f.check(row.misses === String(sum("misses")), `row ${row.id}: td.cache-misses is ${JSON.stringify(row.misses)}, the record's caches have ${sum("misses")} misses`);
    f.check(row.context, `row ${row.id}: no td.context`);
    const failed = rec.fail_type !== undefined;
    f.check(row.classes.includes("failed") === failed, `row ${row.id}: class failed is ${row.classes.includes("failed")}, record failed is ${failed}`);
    if (failed) {
      f.check(
        row.status !== null && row.status.includes("failed") && row.status.includes(rec.fail_type),
        `row ${row.id}: td.status is ${JSON.stringify(row.status)}, want "failed" and "${rec.fail_type}"`,
      );
    }
    const recompiled = typeof rec.recompile_reason === "string" && rec.recompile_reason !== "";
    f.check(row.classes.includes("recompile") === recompiled, `row ${row.id}: class recompile is ${row.classes.includes("recompile")}, record has a recompile_reason: ${recompiled}`);
    if (recompiled) {
      f.check(row.reason === rec.recompile_reason, `row ${row.id}: td.recompile-reason is ${JSON.stringify(row.reason)}, the record's is ${JSON.stringify(rec.recompile_reason)}`);
    }
  }
  f.check(records.some((r) => r.fail_type !== undefined), "the metrics file has no failed unit to check");
  f.check(records.some((r) => r.recompile_reason), "the metrics file has no recompiled unit to check");

  // ---- the pager and the filter (by compile id) ----
  const info = await page.$eval("#units-pager .page-info", (e) => e.textContent.trim()).catch(() => null);
  f.check(info !== null && new RegExp(`^1\\D+${records.length} of ${records.length}$`).test(info), `#units-pager .page-info is ${JSON.stringify(info)}, want "1–${records.length} of ${records.length}"`);
  const failedRec = records.find((r) => r.fail_type !== undefined);
  if (failedRec && (await page.$("#units-filter")) !== null) {
    await clickCentered(page, "#units-filter");
    await page.keyboard.type(failedRec.compile_id);
    try {
      await page.waitForFunction((n) => document.querySelectorAll("#units-table tbody tr.unit-row").length <= n, { timeout: waits.ms }, records.filter((r) => r.compile_id.includes(failedRec.compile_id)).length);
    } catch {
      // said below
    }
    const kept = (await unitRows(page)).map((r) => r.id);
    const want = records.filter((r) => r.compile_id.includes(failedRec.compile_id) || r.name.includes(failedRec.compile_id)).map((r) => r.compile_id);
    f.check(kept.length === want.length && want.every((id) => kept.includes(id)), `filter "${failedRec.compile_id}" shows ${kept.join(", ") || "no row"}, want ${want.join(", ")}`);
    await page.$eval("#units-filter", (e) => e.select());
    await page.keyboard.press("Backspace");
    try {
      await page.waitForFunction((n) => document.querySelectorAll("#units-table tbody tr.unit-row").length === n, { timeout: waits.ms }, first.length);
    } catch {
      f.add(`clearing the filter shows ${(await unitRows(page)).length} rows, want ${first.length}`);
    }
  } else {
    f.add("no #units-filter");
  }

  // ---- sorting by wall time, both ways ----
  const one = await clickSort(page, "wall_ns", null);
  const sorted1 = await unitRows(page);
  f.check(one === "ascending" || one === "descending", `after a click on th[data-key="wall_ns"] its aria-sort is ${JSON.stringify(one)}`);
  f.check(monotonic(sorted1.map((r) => r.wall), one), `after the first click rows are not ${one} by data-wall-ns: ${sorted1.map((r) => r.wall).join(", ")}`);
  const two = await clickSort(page, "wall_ns", one);
  const sorted2 = await unitRows(page);
  f.check((one === "ascending" && two === "descending") || (one === "descending" && two === "ascending"), `aria-sort went ${one} then ${two}; a second click must reverse it`);
  f.check(monotonic(sorted2.map((r) => r.wall), two), `after the second click rows are not ${two} by data-wall-ns: ${sorted2.map((r) => r.wall).join(", ")}`);
  const order = (rows) => rows.map((r) => r.id).join(" ");
  f.check(order(sorted1) !== order(first) || order(sorted2) !== order(first), `sorting by wall_ns both ways left the first order unchanged: ${order(first)}`);
  f.check(sorted1.length === first.length && sorted2.length === first.length, `sorting changed the number of rows: ${first.length}, ${sorted1.length}, ${sorted2.length}`);
  const others = await page.$$eval('#units-table thead th[data-key]:not([data-key="wall_ns"])', (ths) =>
    ths.filter((th) => ["ascending", "descending"].includes(th.getAttribute("aria-sort"))).map((th) => th.dataset.key),
  );
  f.check(others.length === 0, `other headers still say they sort: ${others.join(", ")}`);

  // ---- each unit's detail: waterfall and artifacts ----
  const htmlDir = path.dirname(path.resolve(opts.html));
  let probe = null;  // one artifact the page loads itself
  for (const rec of records) {
    const id = rec.compile_id;
    const link = `#units-table tbody tr.unit-row[data-compile-id="${id}"] a.unit-link`;
    if ((await page.$(link)) === null) {
      f.add(`row ${id}: no a.unit-link`);
      continue;
    }
    const href = await page.$eval(link, (a) => a.getAttribute("href"));
    f.check(typeof href === "string" && href.startsWith("#unit="), `row ${id}: a.unit-link href ${JSON.stringify(href)}`);
    await clickCentered(page, link);
    const sel = `div.unit-detail[data-compile-id="${id}"]`;
    try {
      await page.waitForSelector(sel, { visible: true, timeout: waits.ms });
    } catch {
      f.add(`clicking ${id}'s a.unit-link shows no visible ${sel}`);
      continue;
    }
    await settle(page);
    const detail = await page.$eval(sel, (d) => ({
      phases: [...d.querySelectorAll("svg.waterfall rect.phase")].map((r) => r.dataset.name),
      fields: d.querySelector("table.metrics-fields") !== null,
      artifacts: [...d.querySelectorAll("ul.artifacts a.artifact")].map((a) => ({
        href: a.getAttribute("href"),
        resolved: a.href,
        bytes: a.dataset.bytes,
        kind: a.dataset.kind,
      })),
    }));
    const want = traceUnits.get(id)?.phases ?? new Set();
    f.check(want.size > 0, `the trace has no phases for ${id}`);
    const lost = [...want].filter((p) => !detail.phases.includes(p));
    f.check(lost.length === 0, `${id}: svg.waterfall lacks rect.phase for ${lost.join(", ")} (has ${[...new Set(detail.phases)].join(", ")})`);
    f.check(detail.fields, `${id}: no table.metrics-fields`);
    const listed = rec.artifacts ?? [];
    f.check(detail.artifacts.length === listed.length, `${id}: ${detail.artifacts.length} a.artifact links, the record lists ${listed.length} artifacts`);
    for (const a of detail.artifacts) {
      let file;
      try {
        const u = new URL(a.href, page.url());
        if (!f.check(u.protocol === "file:", `${id}: artifact ${a.href} resolves to ${u.href}, not a file: URL`)) continue;
        file = fileURLToPath(u);
      } catch (e) {
        f.add(`${id}: artifact href ${JSON.stringify(a.href)} does not resolve: ${e.message}`);
        continue;
      }
      const rec_a = listed.find((x) => sameFile(x.path, file));
      if (!f.check(fs.existsSync(file), `${id}: artifact ${a.href} -> ${file} does not exist`)) continue;
      if (!f.check(rec_a !== undefined, `${id}: artifact ${a.href} -> ${file} is not in the record's artifacts`)) continue;
      const size = fs.statSync(file).size;
      f.check(String(size) === a.bytes, `${id}: artifact ${a.href}: data-bytes ${a.bytes}, the file has ${size} bytes`);
      f.check(size === rec_a.bytes, `${id}: artifact ${a.href}: the record says ${rec_a.bytes} bytes, the file has ${size}`);
      f.check(a.kind === rec_a.kind, `${id}: artifact ${a.href}: data-kind ${a.kind}, the record's kind is ${rec_a.kind}`);
      const under = !path.relative(htmlDir, file).startsWith("..");
      if (under) {
        f.check(!/^[a-z]+:/i.test(a.href) && !a.href.startsWith("/"), `${id}: artifact ${file} is under the report's folder but its href ${a.href} is not relative`);
      }
      if (probe === null || (!probe.file.endsWith(".txt") && file.endsWith(".txt"))) {
        probe = { file, href: a.href, resolved: a.resolved };
      }
    }
  }

  // ---- one artifact loaded by the page ----
  if (f.check(probe !== null, "no artifact link to load")) {
    const want = fs.readFileSync(probe.file);
    quiet.on = true;  // a blocked fetch() of file: may log an error: expected here
    const got = await page.evaluate(async (h) => {
      try {
        const r = await fetch(h);
        return { ok: r.ok, bytes: (await r.arrayBuffer()).byteLength };
      } catch (e) {
        return { error: String(e) };
      }
    }, probe.resolved);
    await settle(page);
    quiet.on = false;
    if (got.error === undefined) {
      f.check(got.ok && got.bytes === want.length, `fetch(${probe.href}) in the page: ok ${got.ok}, ${got.bytes} bytes, want ${want.length}`);
      console.log(`fetch() in the page loaded ${probe.href} (${got.bytes} bytes)`);
    } else {
      // Chromium does not fetch() file: URLs; open it as a page instead.
      const second = await browser.newPage();
      const problems2 = [];
      await guard(second, problems2);
      const res = await second.goto(probe.resolved, { waitUntil: "load" }).catch((e) => e);
      const text = res instanceof Error ? null : await second.evaluate(() => document.body?.innerText ?? "");
      f.check(!(res instanceof Error), `opening ${probe.resolved} in a page failed: ${res?.message}`);
      if (text !== null) {
        f.check(text.trimEnd() === want.toString("utf8").trimEnd(), `${probe.resolved} opened in a page shows ${text.length} chars, the file has ${want.length} bytes`);
      }
      f.list.push(...problems2.map((p) => `artifact page: ${p}`));
      await second.close();
      console.log(`fetch() of file: is blocked in the page (${got.error}); opened ${probe.href} in a second page instead`);
    }
  }

  if (opts.screenshot) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: opts.screenshot, fullPage: true });
    console.log(`screenshot: ${path.resolve(opts.screenshot)}`);
  }
  f.list.push(...problems);
  await page.close();
  if (opts.compareHtml) await checkCompare(browser, opts.compareHtml, f);
  if (opts.passesHtml) await checkPasses(browser, opts.passesHtml, f);
  if (opts.autotuneHtml) await checkAutotune(browser, opts.autotuneHtml, f);
  if (opts.criticalPathHtml) await checkCriticalPath(browser, opts.criticalPathHtml, f);
  // The pass_pipeline page has no tuning sessions: no section for them.
  const plain = await browser.newPage();
  await plain.goto(pathToFileURL(path.resolve(opts.html)).href, { waitUntil: "load" });
  f.check((await plain.$("section#autotune")) === null,
          `${path.basename(opts.html)}: a section#autotune without tuning sessions`);
  f.check((await plain.$("#ir-growth-table")) === null,
          `${path.basename(opts.html)}: an #ir-growth-table without IR sizes`);
  await plain.close();
}

// A page of one section's check, loaded, with rows in `table`: the page,
// its file's name and the problems its guard collects; null (said in `f`)
// when the table gets no rows.
async function openWithRows(browser, html, table, f) {
  const problems = [];
  const page = await browser.newPage();
  await guard(page, problems);
  await page.goto(pathToFileURL(path.resolve(html)).href, { waitUntil: "load" });
  const name = path.basename(html);
  try {
    await page.waitForSelector(`${table} tbody tr`, { timeout: 30000 });
  } catch {
    f.add(`${name}: no ${table} with rows`);
    await page.close();
    return null;
  }
  return { page, name, problems };
}

// The autotune page (fixture/autotune_trace.json): two tuning sessions, the
// longer one first; matmul's winner and its trials, one of them failed and
// one compiled by a unit that links to its row.
async function checkAutotune(browser, html, f) {
  const opened = await openWithRows(browser, html, "#autotune-table", f);
  if (!opened) return;
  const { page, name, problems } = opened;
  const sessions = await page.$$eval("#autotune-table tbody tr", (trs) =>
    trs.map((tr) => ({ kernel: tr.dataset.kernel, winner: tr.querySelector("td.winner").textContent,
                       trials: tr.querySelector("td.trials").textContent })));
  f.check(JSON.stringify(sessions.map((s) => s.kernel)) === JSON.stringify(["matmul", "softmax"]),
          `${name}: sessions ${JSON.stringify(sessions.map((s) => s.kernel))}, not matmul then softmax`);
  if (sessions.length === 2) {
    f.check(sessions[0].winner === "#1 block=128, warps=4" && sessions[0].trials === "4",
            `${name}: matmul's row ${JSON.stringify(sessions[0])}`);
    f.check(sessions[1].winner === "(none)", `${name}: softmax's winner "${sessions[1].winner}"`);
  }
  const trials = await page.$$eval("#autotune-trials-table tbody tr", (trs) =>
    trs.map((tr) => ({ kernel: tr.dataset.kernel, trial: tr.dataset.trial, winner: tr.dataset.winner || "",
                       note: tr.querySelector("td.note").textContent,
                       link: tr.querySelector("td.units a.unit-link")?.getAttribute("href") || "" })));
  f.check(trials.length === 6, `${name}: ${trials.length} trial rows, not 6`);
  const winners = trials.filter((t) => t.winner === "1").map((t) => t.kernel + "#" + t.trial);
  f.check(JSON.stringify(winners) === JSON.stringify(["matmul#1"]), `${name}: winner rows ${JSON.stringify(winners)}`);
  const failed = trials.find((t) => t.kernel === "matmul" && t.trial === "3");
  f.check(failed && failed.note === "failed: too many registers", `${name}: trial 3's note ${JSON.stringify(failed)}`);
  const unit = trials.find((t) => t.kernel === "matmul" && t.trial === "2");
  f.check(unit && unit.link.endsWith("0/0"), `${name}: trial 2 does not link its unit 0/0: ${JSON.stringify(unit)}`);
  f.check((await page.$("nav a[href='#autotune']")) !== null, `${name}: no Autotuning link in the nav`);
  f.list.push(...problems.map((p) => `${name}: ${p}`));
  await page.close();
}

// The critical path page (fixture/critical_path_trace.json): parse, the
// worker's remote, link, worked out by hand in report_critical_path_test
// (FollowsWaitsAcrossThreadsAndProcesses); the bar holds their three units
// and the two waits, to scale; a unit's link opens its row.
async function checkCriticalPath(browser, html, f) {
  const opened = await openWithRows(browser, html, "#critical-path-table", f);
  if (!opened) return;
  const { page, name, problems } = opened;
  const rows = await page.$$eval("#critical-path-table tbody tr", (trs) =>
    trs.map((tr) => [tr.dataset.pid, tr.dataset.compileId, tr.dataset.next,
                     tr.querySelector("td.on_path_ns").textContent,
                     tr.querySelector("td.wait_before_ns").textContent].join(" ")));
  const want = ["1 0/0 waited_for 10.0 ms 0 ns", "2 0/0 waited_for 30.0 ms 5.00 ms", "1 3/0 last 10.0 ms 5.00 ms"];
  f.check(JSON.stringify(rows) === JSON.stringify(want),
          `${name}: path rows ${JSON.stringify(rows)}, not ${JSON.stringify(want)}`);
  const note = await page.$eval("#critical-path-note", (e) => e.textContent);
  for (const part of ["units on the path 50.0 ms (83.3%)", "waits between them 10.0 ms (16.7%)",
                      "Work in units 96.0 ms on 4 threads in 2 processes (1.60× the wall)",
                      "3 units on the path, 2 of them reached by a wait"]) {
    f.check(note.includes(part), `${name}: #critical-path-note lacks "${part}": ${note}`);
  }
  // The bar: each part's place and width in % of the wall (60 ms), waits
  // before their unit.
  const bar = await page.$$eval("#critical-path-bar > *", (els) =>
    els.map((e) => {
      const box = e.parentElement.getBoundingClientRect();
      const r = e.getBoundingClientRect();
      const pct = (v) => Math.round(v * 1000 / e.parentElement.clientWidth) / 10;
      return [e.className, pct(r.left - box.left - e.parentElement.clientLeft), pct(r.width)].join(" ");
    }));
  const wantBar = ["cp-unit 0 16.7", "cp-wait 16.7 8.3", "cp-unit 25 50", "cp-wait 75 8.3", "cp-unit 83.3 16.7"];
  const close = bar.length === wantBar.length && bar.every((b, i) => {
    const [cls, left, width] = b.split(" ");
    const [wcls, wleft, wwidth] = wantBar[i].split(" ");
    return cls === wcls && Math.abs(Number(left) - Number(wleft)) <= 0.6 &&
      Math.abs(Number(width) - Number(wwidth)) <= 0.6;  // rounding
  });
  f.check(close, `${name}: the bar ${JSON.stringify(bar)}, not about ${JSON.stringify(wantBar)}`);
  f.check((await page.$("nav a[href='#critical-path']")) !== null, `${name}: no Critical path link in the nav`);
  // The remote unit's link opens its row in the units table (pid 2's 0/0).
  await page.click("#critical-path-table tbody tr[data-pid='2'] a.unit-link");
  try {
    await page.waitForFunction(() => window.location.hash.startsWith("#unit=2:0/0"), { timeout: 10000 });
  } catch {
    f.add(`${name}: the path's unit link did not go to #unit=2:0/0 (${await page.evaluate(() => window.location.hash)})`);
  }
  f.list.push(...problems.map((p) => `${name}: ${p}`));
  await page.close();
}

// The --baseline page: its comparison section is there and filled.
async function checkCompare(browser, html, f) {
  const problems = [];
  const page = await browser.newPage();
  await guard(page, problems);
  await page.goto(pathToFileURL(path.resolve(html)).href, { waitUntil: "load" });
  try {
    await page.waitForSelector("section#compare table.compare tbody tr", { timeout: 30000 });
  } catch {
    f.add(`${path.basename(html)} (--baseline): no section#compare with a table.compare of rows`);
  }
  const units = await page.$$eval("#units-table tbody tr.unit-row", (t) => t.length);
  f.check(units > 0, `${path.basename(html)} (--baseline): no unit rows`);
  for (const key of ["passes", "pipelines"]) {
    const table = await page.$(`#compare-${key}-table`);
    f.check(table === null, `${path.basename(html)} (--baseline): a ${key} table without passes`);
  }
  f.list.push(...problems.map((p) => `${path.basename(html)} (--baseline): ${p}`));
  await page.close();
}

// The per-pass page: rows by their first cell, the failing ones by class.
async function checkPasses(browser, html, f) {
  const problems = [];
  const page = await browser.newPage();
  await guard(page, problems);
  await page.goto(pathToFileURL(path.resolve(html)).href, { waitUntil: "load" });
  const name = path.basename(html);
  for (const [key, failing] of [["passes", "GVNPass"], ["pipelines", "llvm_opt"]]) {
    try {
      await page.waitForSelector(`#compare-${key}-table tbody tr`, { timeout: 30000 });
    } catch {
      f.add(`${name}: no #compare-${key}-table with rows`);
      continue;
    }
    const rows = await page.$$eval(`#compare-${key}-table tbody tr`, (trs) =>
      trs.map((tr) => ({ name: tr.querySelector("td").textContent, cls: tr.className })));
    const fails = rows.filter((r) => r.cls.split(" ").includes("fails")).map((r) => r.name);
    f.check(JSON.stringify(fails) === JSON.stringify([failing]),
            `${name}: ${key} failing ${JSON.stringify(fails)}, not ["${failing}"]`);
  }
  // The IR growth table (the runs' ir_size args): by growth, largest first.
  try {
    await page.waitForSelector("#ir-growth-table tbody tr", { timeout: 30000 });
    const growth = await page.$$eval("#ir-growth-table tbody tr", (trs) =>
      trs.map((tr) => tr.dataset.pass + " " + tr.querySelector("td.growth").textContent));
    const want = ["GVNPass -2", "InstCombinePass -9", "PassManager<llvm::Module> -11"];
    f.check(JSON.stringify(growth) === JSON.stringify(want),
            `${name}: IR growth rows ${JSON.stringify(growth)}, not ${JSON.stringify(want)}`);
  } catch {
    f.add(`${name}: no #ir-growth-table with rows`);
  }
  // Passes are not among the plain span names.
  const names = await page.$$eval("#compare-names-table tbody tr td:first-child",
                                  (tds) => tds.map((td) => td.textContent));
  f.check(!names.includes("GVNPass"), `${name}: GVNPass among the span names`);
  f.list.push(...problems.map((p) => `${name}: ${p}`));
  await page.close();
}

function main() {
  return runCheck(
    "check_report",
    "node check_report.mjs --html R.html --metrics M.jsonl --trace T.json [--screenshot P.png] [--compare-html C.html] [--passes-html P.html] [--autotune-html A.html] [--critical-path-html P.html]",
    ["compare-html", "passes-html", "autotune-html", "critical-path-html"],
    (browser, args) =>
      checkReport(browser, {
        html: args.html,
        metrics: args.metrics,
        trace: args.trace,
        screenshot: args.screenshot,
        compareHtml: args["compare-html"],
        passesHtml: args["passes-html"],
        autotuneHtml: args["autotune-html"],
        criticalPathHtml: args["critical-path-html"],
      }),
  );
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
