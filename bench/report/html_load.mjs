// Load time of jitscope-report HTML reports in headless Chromium: from
// navigation start (performance.timeOrigin) to the first row of the units
// table in the DOM, seen by a MutationObserver installed before the page's
// own script runs. Each load is a fresh page; the median of --runs loads.
//
// usage: node html_load.mjs [--runs 5] REPORT.html...
//   prints one line per report: "<path> <median> <min> <max> <html> <data>
//   <built> <rows>": ms to the first row (median, min, max), the medians of
//   the page's own marks on <body> (data-html-ms, data-data-ms,
//   data-render-ms; "-" when the page has none), the unit rows and the
//   timeline's rects (unit bars and bins) in the DOM after the last load
// Needs puppeteer-core ($PUPPETEER_DIR, see tests/browser/README.md).
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { launch, loadPuppeteer } from "../../tests/browser/browser.mjs";

const { values, positionals } = parseArgs({ options: { runs: { type: "string", default: "5" } }, allowPositionals: true });
const runs = Number(values.runs);
if (!positionals.length || !(runs >= 1)) {
  console.error("usage: node html_load.mjs [--runs N] REPORT.html...");
  process.exit(2);
}
const browser = await launch(loadPuppeteer());
try {
  for (const file of positionals) {
    const times = [];
    const marks = { html: [], data: [], render: [] };
    let rows = 0;
    let rects = 0;
    for (let i = 0; i < runs; ++i) {
      const page = await browser.newPage();
      await page.evaluateOnNewDocument(() => {
        const seen = () => document.querySelector("#units-table tbody tr.unit-row") !== null;
        new MutationObserver((_, obs) => {
          if (window.__unitsAt === undefined && seen()) {
            window.__unitsAt = performance.now();
            obs.disconnect();
          }
        }).observe(document, { childList: true, subtree: true });
      });
      await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "load", timeout: 120000 });
      await page.waitForFunction(() => window.__unitsAt !== undefined, { timeout: 120000 });
      times.push(await page.evaluate(() => window.__unitsAt));
      const m = await page.evaluate(() => ({ ...document.body.dataset }));
      for (const k of Object.keys(marks)) if (m[`${k}Ms`] !== undefined) marks[k].push(Number(m[`${k}Ms`]));
      rows = await page.$$eval("#units-table tbody tr.unit-row", (t) => t.length);
      rects = await page.$$eval("svg#timeline rect.unit-bar, svg#timeline rect.unit-bin", (t) => t.length);
      await page.close();
    }
    const median = (xs) => {
      if (!xs.length) return "-";
      const v = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      return v.toFixed(0);
    };
    times.sort((a, b) => a - b);
    console.log(`${file} ${median(times)} ${times[0].toFixed(0)} ${times[times.length - 1].toFixed(0)} ` +
      `${median(marks.html)} ${median(marks.data)} ${median(marks.render)} ${rows} ${rects}`);
  }
} finally {
  await browser.close();
}
