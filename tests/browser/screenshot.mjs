// A viewport-size screenshot of the top of an HTML report, as loaded, for
// the README (scripts/report-screenshot.sh); with --selector, of that
// element only (a section, for the docs: docs/caches.md).
//
// usage: node screenshot.mjs --html REPORT.html --out OUT.png [--width 1280] [--height 800]
//                            [--selector CSS [--max-height PX]]
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
    "max-height": { type: "string" },
  },
});
if (!a.html || !a.out) {
  console.error("usage: node screenshot.mjs --html REPORT.html --out OUT.png [--width W] [--height H] [--selector CSS [--max-height PX]]");
  process.exit(2);
}
const browser = await launch(loadPuppeteer());
try {
  const page = await browser.newPage();
  await page.setViewport({ width: Number(a.width), height: Number(a.height), deviceScaleFactor: 1 });
  await page.goto(pathToFileURL(path.resolve(a.html)).href, { waitUntil: "load" });
  // Built: the page marks <body> when its script is done (a page may have no units table).
  await page.waitForSelector("body[data-render-ms]", { timeout: 30000 });
  if (a.selector) {
    const element = await page.$(a.selector);
    if (!element) throw new Error(`screenshot: nothing matches ${a.selector}`);
    const box = await element.boundingBox();
    const height = a["max-height"] ? Math.min(box.height, Number(a["max-height"])) : box.height;
    // The element's top, at most max-height of it (a long table's first rows).
    await page.screenshot({
      path: a.out,
      clip: { x: box.x, y: box.y, width: box.width, height },
      captureBeyondViewport: true,
    });
  } else {
    await page.screenshot({ path: a.out });
  }
  console.log(`screenshot: ${path.resolve(a.out)}`);
} finally {
  await browser.close();
}
