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
let t0 = Date.now();
const secs = () => {  // since the last call
  const s = ((Date.now() - t0) / 1000).toFixed(1);
  t0 = Date.now();
  return `${s} s`;
};
waits.ms = 2000;  // the broken pages wait it out; the fixture reacts at once
const browser = await launch(loadPuppeteer());
let bad = 0;
try {
  const good = await checkReport(browser, makeFixture(path.join(work, "good")));
  if (good.list.length !== 0) {
    ++bad;
    console.log("selftest: the page that keeps the contract FAILED the check:");
    for (const m of good.list) console.log(`  - ${m}`);
  } else {
    console.log(`selftest: the page that keeps the contract passes (${secs()})`);
  }
  for (const [mode, [what, words]] of Object.entries(kBreaks)) {
    const f = await checkReport(browser, makeFixture(path.join(work, mode), mode));
    const hit = f.list.find((m) => [words].flat().some((w) => m.includes(w)));
    if (hit === undefined) {
      ++bad;
      console.log(`selftest: --break ${mode} (${what}) did not fail with "${[words].flat().join('" or "')}"; it said:`);
      for (const m of f.list.length ? f.list : ["(nothing: it passed)"]) console.log(`  - ${m}`);
    } else {
      console.log(`selftest: --break ${mode} fails as it must (${secs()}): ${hit}`);
    }
  }
  // check_large.mjs on 300 units (3 pages: enough to page, filter and
  // sort across pages): a good page, then the broken ones.
  const n = 300;
  const large = await checkLarge(browser, makeLargeFixture(path.join(work, "large-good"), n));
  if (large.list.length !== 0) {
    ++bad;
    console.log("selftest: the large page that keeps the contract FAILED the check:");
    for (const m of large.list) console.log(`  - ${m}`);
  } else {
    console.log(`selftest: the large page that keeps the contract passes (${secs()})`);
  }
  for (const [mode, [what, words]] of Object.entries(kLargeBreaks)) {
    const f = await checkLarge(browser, makeLargeFixture(path.join(work, `large-${mode}`), n, mode));
    const hit = f.list.find((m) => [words].flat().some((w) => m.includes(w)));
    if (hit === undefined) {
      ++bad;
      console.log(`selftest: large --break ${mode} (${what}) did not fail with "${[words].flat().join('" or "')}"; it said:`);
      for (const m of f.list.length ? f.list : ["(nothing: it passed)"]) console.log(`  - ${m}`);
    } else {
      console.log(`selftest: large --break ${mode} fails as it must (${secs()}): ${hit}`);
    }
  }
} finally {
  await browser.close();
}
console.log(bad === 0 ? "selftest: PASS" : `selftest: FAIL (${bad})`);
process.exitCode = bad === 0 ? 0 : 1;
