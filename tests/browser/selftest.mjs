// Tests check_report.mjs itself on hand-made pages (fixture/make_fixture.mjs):
// the page that keeps the DOM contract must pass, and every broken one
// must fail. This is what shows that each kind of check can fail.
//
// usage: node selftest.mjs WORK_DIR
// exit 0: all as expected; 1: the good page failed or a broken one passed.
import path from "node:path";
import { launch, loadPuppeteer, waits } from "./browser.mjs";
import { checkLarge } from "./check_large.mjs";
import { checkReport } from "./check_report.mjs";
import { kBreaks, kLargeBreaks, makeFixture, makeLargeFixture } from "./fixture/make_fixture.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: node selftest.mjs WORK_DIR");
  process.exit(2);
}
waits.ms = 2000;  // the broken pages wait it out; the fixture reacts at once
// A broken page spends most of its check waiting those 2 s out, idle: the
// checks run a few at a time, each worker with a browser of its own (a
// second tab of one browser is a background page, which Chromium stalls),
// and report in order.
const kConcurrent = 3;

// One check: [passed as expected, the lines it says].
async function expectPass(what, check) {
  const t0 = Date.now();
  const f = await check();
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  if (f.list.length === 0) return [true, [`selftest: ${what} passes (${secs} s)`]];
  return [false, [`selftest: ${what} FAILED the check:`, ...f.list.map((m) => `  - ${m}`)]];
}

async function expectFailure(label, what, words, check) {
  const t0 = Date.now();
  const f = await check();
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const hit = f.list.find((m) => [words].flat().some((w) => m.includes(w)));
  if (hit !== undefined) return [true, [`selftest: ${label} fails as it must (${secs} s): ${hit}`]];
  return [false, [`selftest: ${label} (${what}) did not fail with "${[words].flat().join('" or "')}"; it said:`,
                  ...(f.list.length ? f.list : ["(nothing: it passed)"]).map((m) => `  - ${m}`)]];
}

const puppeteer = loadPuppeteer();
let bad = 0;
{
  // check_large.mjs on 300 units (3 pages: enough to page, filter and
  // sort across pages): a good page, then the broken ones.
  const n = 300;
  const jobs = [
    (browser) => expectPass("the page that keeps the contract",
                     () => checkReport(browser, makeFixture(path.join(work, "good")))),
    ...Object.entries(kBreaks).map(([mode, [what, words]]) => (browser) =>
      expectFailure(`--break ${mode}`, what, words,
                    () => checkReport(browser, makeFixture(path.join(work, mode), mode)))),
    (browser) => expectPass("the large page that keeps the contract",
                     () => checkLarge(browser, makeLargeFixture(path.join(work, "large-good"), n))),
    ...Object.entries(kLargeBreaks).map(([mode, [what, words]]) => (browser) =>
      expectFailure(`large --break ${mode}`, what, words,
                    () => checkLarge(browser, makeLargeFixture(path.join(work, `large-${mode}`), n, mode)))),
  ];
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    const browser = await launch(puppeteer);
    try {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i](browser);
      }
    } finally {
      await browser.close();
    }
  };
  await Promise.all(Array.from({ length: kConcurrent }, worker));
  for (const [ok, lines] of results) {
    if (!ok) ++bad;
    for (const line of lines) console.log(line);
  }
}
console.log(bad === 0 ? "selftest: PASS" : `selftest: FAIL (${bad})`);
process.exitCode = bad === 0 ? 0 : 1;
