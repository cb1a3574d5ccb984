// Tests check_report.mjs itself on hand-made pages (fixture/make_fixture.mjs):
// the page that keeps the DOM contract must pass, and every broken one
// must fail. This is what shows that each kind of check can fail.
//
// usage: node selftest.mjs WORK_DIR
// exit 0: all as expected; 1: the good page failed or a broken one passed.
import path from "node:path";
import { launch, loadPuppeteer } from "./browser.mjs";
import { checkReport } from "./check_report.mjs";
import { kBreaks, makeFixture } from "./fixture/make_fixture.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: node selftest.mjs WORK_DIR");
  process.exit(2);
}
const browser = await launch(loadPuppeteer());
let bad = 0;
try {
  const good = await checkReport(browser, makeFixture(path.join(work, "good")));
  if (good.list.length !== 0) {
    ++bad;
    console.log("selftest: the page that keeps the contract FAILED the check:");
    for (const m of good.list) console.log(`  - ${m}`);
  } else {
    console.log("selftest: the page that keeps the contract passes");
  }
  for (const [mode, [what, words]] of Object.entries(kBreaks)) {
    const f = await checkReport(browser, makeFixture(path.join(work, mode), mode));
    const hit = f.list.find((m) => m.includes(words));
    if (hit === undefined) {
      ++bad;
      console.log(`selftest: --break ${mode} (${what}) did not fail with "${words}"; it said:`);
      for (const m of f.list.length ? f.list : ["(nothing: it passed)"]) console.log(`  - ${m}`);
    } else {
      console.log(`selftest: --break ${mode} fails as it must: ${hit}`);
    }
  }
} finally {
  await browser.close();
}
console.log(bad === 0 ? "selftest: PASS" : `selftest: FAIL (${bad})`);
process.exitCode = bad === 0 ? 0 : 1;
