// A viewport-size screenshot of the top of an HTML report, as loaded, for
// the README (scripts/report-screenshot.sh); with --selector, of that
// element only (a section, for the docs: docs/caches.md).
//
// usage: node screenshot.mjs --html REPORT.html --out OUT.png [--width 1280] [--height 800]
//                            [--selector CSS]
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { launch, loadPuppeteer } from "./browser.mjs";

const { values: a } = parseArgs({
  options: {
    html: { type: "string" },
    out: { type: "string" },
    width: { type: "string", default: "1280" },
    height: { type: "string", default: "800" },
    selector: { type: "string" },
  },
});
if (!a.html || !a.out) {
  console.error("usage: node screenshot.mjs --html REPORT.html --out OUT.png [--width W] [--height H] [--selector CSS]");
  process.exit(2);
}
const browser = await launch(loadPuppeteer());
try {
  const page = await browser.newPage();
  await page.setViewport({ width: Number(a.width), height: Number(a.height), deviceScaleFactor: 1 });
  await page.goto(pathToFileURL(path.resolve(a.html)).href, { waitUntil: "load" });
  await page.waitForSelector("#units-table tbody tr.unit-row", { timeout: 30000 });
  if (a.selector) {
    const element = await page.$(a.selector);
    if (!element) throw new Error(`screenshot: nothing matches ${a.selector}`);
    await element.screenshot({ path: a.out });
  } else {
    await page.screenshot({ path: a.out });
  }
  console.log(`screenshot: ${path.resolve(a.out)}`);
} finally {
  await browser.close();
}
