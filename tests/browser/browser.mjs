// What the browser checks share: loading puppeteer-core from the build
// tree, launching Debian's Chromium headless, watching a page for network
// requests, console errors, page errors and failed requests, and reading
// jitscope's metrics file and trace.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

// puppeteer-core from $PUPPETEER_DIR (the npm ci folder in the build tree,
// tests/npm_ci.sh), else from next to this script.
export function loadPuppeteer() {
  const dirs = [process.env.PUPPETEER_DIR, path.dirname(fileURLToPath(import.meta.url))];
  for (const dir of dirs.filter(Boolean)) {
    try {
      return createRequire(path.join(path.resolve(dir), "package.json"))("puppeteer-core");
    } catch (e) {
      if (e.code !== "MODULE_NOT_FOUND") throw e;
    }
  }
  throw new Error(`puppeteer-core not found in ${dirs.filter(Boolean).join(" or ")} (npm ci there)`);
}

// How long a check waits for the page to react to a click or a key: long
// on a loaded CI machine; only a failing check ever waits it out, so the
// self-test, whose broken pages fail on purpose, shortens it.
export const waits = { ms: 10000 };

export const chromiumPath = () => process.env.JITSCOPE_CHROMIUM || "/usr/bin/chromium";

export async function launch(puppeteer) {
  const args = ["--disable-dev-shm-usage", "--hide-scrollbars", "--font-render-hinting=none"];
  // Chromium's sandbox refuses to run as root.
  if (typeof process.getuid === "function" && process.getuid() === 0) args.push("--no-sandbox");
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args,
    defaultViewport: { width: 1280, height: 800 },
  });
}

const kLocal = new Set(["file:", "data:", "blob:"]);

// Records into `problems` every request other than file:, data: and blob:
// (and blocks it), every console message of type error, every uncaught page
// error and every failed request. `quiet.on` turns console errors and
// failed requests into `quiet.seen` instead, for a probe that is allowed to fail (a fetch() of a
// file: URL).
export async function guard(page, problems, quiet = { on: false, seen: [] }) {
  await page.setRequestInterception(true);
  const blocked = new Set();
  page.on("request", (req) => {
    if (req.isInterceptResolutionHandled()) return;
    let protocol = "";
    try {
      protocol = new URL(req.url()).protocol;
    } catch {
      // left "": not local
    }
    if (kLocal.has(protocol)) {
      req.continue();
    } else {
      blocked.add(req);
      problems.push(`network request to ${req.url()} (only file:, data: and blob: are allowed)`);
      req.abort("blockedbyclient");
    }
  });
  page.on("requestfailed", (req) => {
    if (blocked.has(req)) return;  // already said
    const line = `request failed: ${req.url()}: ${req.failure()?.errorText ?? "?"}`;
    if (quiet.on) {
      quiet.seen.push(line);
    } else {
      problems.push(line);
    }
  });
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const loc = msg.location();
    const where = loc?.url ? ` at ${loc.url}${loc.lineNumber === undefined ? "" : `:${loc.lineNumber + 1}`}` : "";
    const line = `console error: ${msg.text()}${where}`;
    if (quiet.on) {
      quiet.seen.push(line);
    } else {
      problems.push(line);
    }
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message ?? err}`));
  return quiet;
}

// The metrics file's compile records: lines with a non-null compile_id that
// are not the GPU lines ("record":"gpu") of a unit.
export function readCompileRecords(file) {
  const out = [];
  const text = fs.readFileSync(file, "utf8");
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      throw new Error(`${file}: line ${i + 1}: ${e.message}`);
    }
    if (rec.compile_id !== null && rec.compile_id !== undefined && rec.record !== "gpu") out.push(rec);
  });
  return out;
}

// A jitscope Chrome trace's events (the array form, closed or not, or an
// object with traceEvents).
export function readTraceEvents(file) {
  let text = fs.readFileSync(file, "utf8").trimEnd();
  if (text.startsWith("[")) {
    if (text.endsWith(",")) text = text.slice(0, -1);
    if (!text.endsWith("]")) text += "]";
  }
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : parsed.traceEvents;
}

const ns = (us) => Math.round(Number(us) * 1000);

// Per compile id: the unit's own slice (not an attached one) as
// {pid, tid, begin, end, wall} in ns, and the names of the phases on its
// thread inside it that carry its id.
export function unitsFromTrace(events) {
  const units = new Map();
  for (const e of events) {
    if (e.ph !== "X" || e.cat !== "compile_unit" || !e.args?.compile_id || e.args.attached) continue;
    const begin = ns(e.ts);
    const end = begin + ns(e.dur);
    units.set(e.args.compile_id, { pid: e.pid, tid: e.tid, begin, end, wall: end - begin, phases: new Set() });
  }
  for (const e of events) {
    if (e.ph !== "X" || (e.cat !== "phase" && e.cat !== "compile_event")) continue;
    const u = units.get(e.args?.compile_id);
    if (!u || u.pid !== e.pid || u.tid !== e.tid) continue;
    const begin = ns(e.ts);
    if (begin >= u.begin && begin + ns(e.dur) <= u.end) u.phases.add(e.name);
  }
  return units;
}

// Waits until the page has painted what a click changed.
export async function settle(page) {
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
}

// The rows of the units table now in the DOM, in order.
export async function unitRows(page) {
  return page.$$eval("#units-table tbody tr.unit-row", (trs) =>
    trs.map((tr) => ({
      id: tr.dataset.compileId,
      pid: tr.dataset.pid,
      wall: tr.dataset.wallNs === undefined ? NaN : Number(tr.dataset.wallNs),
      classes: [...tr.classList],
      status: tr.querySelector("td.status")?.textContent.trim() ?? null,
      hits: tr.querySelector("td.cache-hits")?.textContent.trim() ?? null,
      misses: tr.querySelector("td.cache-misses")?.textContent.trim() ?? null,
      context: tr.querySelector("td.context") !== null,
      reason: tr.querySelector("td.recompile-reason")?.textContent.trim() ?? null,
    })),
  );
}

// A real mouse click on `sel`, first scrolled to the middle of the
// viewport: the report's sticky <header> covers the top of the viewport,
// and a click at an element's point under it would land on the header.
export async function clickCentered(page, sel) {
  await page.$eval(sel, (e) => e.scrollIntoView({ block: "center", inline: "nearest" }));
  await page.click(sel);
}

// Clicks a sortable header and waits for its aria-sort to become one of
// ascending/descending other than `before`.
export async function clickSort(page, key, before) {
  const sel = `#units-table thead th[data-key="${key}"]`;
  if ((await page.$(sel)) === null) throw new Error(`no sortable header ${sel}`);
  await clickCentered(page, sel);
  try {
    await page.waitForFunction(
      (s, b) => {
        const v = document.querySelector(s)?.getAttribute("aria-sort");
        return (v === "ascending" || v === "descending") && v !== b;
      },
      { timeout: waits.ms },
      sel,
      before ?? null,
    );
  } catch {
    // reported by the caller from the attribute it reads
  }
  await settle(page);
  return page.$eval(sel, (th) => th.getAttribute("aria-sort"));
}

// true when `values` never go down (ascending) or never go up (descending).
export function monotonic(values, direction) {
  for (let i = 1; i < values.length; ++i) {
    if (Number.isNaN(values[i]) || Number.isNaN(values[i - 1])) return false;
    if (direction === "ascending" ? values[i] < values[i - 1] : values[i] > values[i - 1]) return false;
  }
  return true;
}

// A check's failures, said all at once at the end.
export class Failures {
  constructor(label) {
    this.label = label;
    this.list = [];
  }
  check(ok, message) {
    if (!ok) this.list.push(message);
    return ok;
  }
  add(message) {
    this.list.push(message);
  }
  // Prints the result; returns the process exit code (0 pass, 1 fail).
  report() {
    if (this.list.length === 0) {
      console.log(`${this.label}: PASS`);
      return 0;
    }
    console.log(`${this.label}: FAIL (${this.list.length})`);
    for (const m of this.list) console.log(`  - ${m}`);
    return 1;
  }
}

// The command line of a check script: --html, --metrics and --trace (files
// that must exist), --screenshot, and `extra` string options; then the
// browser is started, `check(browser, args)` run (it returns a Failures),
// and the browser closed. The exit status: 0 pass, 1 failures, 2 bad usage
// or no browser.
export async function runCheck(name, usage, extra, check) {
  let args;
  try {
    const options = { html: { type: "string" }, metrics: { type: "string" }, trace: { type: "string" }, screenshot: { type: "string" } };
    for (const k of extra) options[k] = { type: "string" };
    args = parseArgs({ options }).values;
    if (!args.html || !args.metrics || !args.trace) throw new Error("--html, --metrics and --trace are required");
    for (const k of ["html", "metrics", "trace"]) {
      if (!fs.existsSync(args[k])) throw new Error(`no such file: ${args[k]}`);
    }
  } catch (e) {
    console.error(`${name}: ${e.message}`);
    console.error(`usage: ${usage}`);
    return 2;
  }
  let browser;
  try {
    browser = await launch(loadPuppeteer());
  } catch (e) {
    console.error(`${name}: cannot start the browser: ${e.message}`);
    return 2;
  }
  try {
    return (await check(browser, args)).report();
  } finally {
    await browser.close();
  }
}

// Runs `body(f)` with a new Failures labelled `label` and returns it. A page
// that breaks the contract can make a step impossible (a click on a hidden
// element): a throw is a failure too, said as one.
export async function collectFailures(label, body) {
  const f = new Failures(label);
  try {
    await body(f);
  } catch (e) {
    f.add(`the check stopped: ${e.message}`);
  }
  return f;
}
