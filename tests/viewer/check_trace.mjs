#!/usr/bin/env node
// Loads a jitscope Chrome trace through Chrome DevTools' own trace engine
// (@paulirish/trace_engine, the engine behind the DevTools Performance panel)
// and checks what the *engine* reports (its threads, entries and entry tree)
// against an expectations file.
//
// usage: node check_trace.mjs <trace.json> <expect.json>
//
// exit 0: all expectations hold; 1: an expectation failed; 2: usage error,
// unreadable/unparsable input or the engine could not be loaded/failed.
//
// The engine package is resolved from $TRACE_ENGINE_DIR (a directory that
// holds node_modules/@paulirish/trace_engine), else from this script's
// directory, else from the current directory.
//
// Expectations (every key optional):
// {
//   "threads": {"main": {"min_slices": 1}, "worker-0": {"min_slices": 4}},
//       thread names (thread_name metadata) the engine must report; per
//       thread: min_slices / max_slices / exact_slices (ph "X" entries in the
//       engine's thread), min_instants / exact_instants (ph "I" entries).
//   "thread_count": 3,            exact number of named threads with entries, in
//                                 all processes (a GPU stream track, thread_name
//                                 "stream 7" in a "GPU 0 (pid P)" process, is one)
//   "process_names": ["hello"],   process_name metadata the engine kept
//   "process_name_patterns": ["^GPU 0 \\(pid \\d+\\)$"],  each JavaScript regular
//                                 expression must match a process name the engine kept
//   "slice_names": ["compile_kernel", ...],  each must be an engine slice
//   "instant_names": ["cache_miss"],         each must be an engine instant
//   "nesting": [["optimize", "lower"], ["session", null]],
//       [child, parent]: every engine entry named child must sit in the
//       engine's tree directly under an entry named parent (null: be a root);
//       [child, parent, thread]: the same for the child's entries on the
//       thread named thread only (at least one must be there)
//   "nesting_patterns": [["^emit_kernel$", "^\\[\\d+/\\d+\\] "], ["^\\[", null]],
//       like "nesting", with JavaScript regular expressions for the names:
//       every engine entry whose name matches the child pattern must sit
//       directly under an entry whose name matches the parent pattern (null:
//       be a root); at least one entry must match each child pattern; an
//       optional third element names the thread, as in "nesting"
//   "exact_slice_counts": {"compile_kernel": 32},
//   "min_slice_counts": {"compile_kernel": 1},
//   "exact_flow_count": 6,        flows the engine built (FlowsHandler: "s"/"t"/"f"
//   "min_flow_count": 1,          events bound to slices; a flow with fewer than
//                                 2 bound slices is not one)
//   "flows": [["cuLaunchKernel", "fused_gemm_relu"], ["cuMemcpyHtoD", "Memcpy HtoD", 1]],
//       [from, to] or [from, to, count]: an engine flow whose first bound
//       slice (in the engine's order: the arrow's tail) is named from and whose
//       last is named to must exist; with count, exactly that many
//   "max_dropped_from_tree": 0,   engine entries the engine could not place
//                                 in its tree (default 0)
//   "max_dropped_events": 0,      X/I/i/B events of the file that the engine
//                                 reports in no thread at all (default 0)
//   "allow_engine_console_errors": false,  (default false)
//   "allow_truncated_last_event": false    drop a partial last event (process
//                                 killed mid-write) instead of failing
// }
// A key not listed here is an error (exit 2), so that a misspelt key does not
// pass unchecked.

import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';

const ENGINE_PKG = '@paulirish/trace_engine';

function die(msg) {
  console.error(`check_trace: ERROR: ${msg}`);
  process.exit(2);
}

// ---------------------------------------------------------------- loading

/** Reads a trace in JSON array form, tolerating a missing closing bracket
 * (trace of a crashed process) and a trailing comma, and optionally a
 * partial last event. The object form
 * {"traceEvents": [...]} is accepted as well. */
export function loadTraceEvents(file, {allowTruncatedLast = false} = {}) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    die(`cannot read trace ${file}: ${e.message}`);
  }
  const notes = [];
  let body = text.replace(/^\uFEFF/, '').trim();
  if (body.startsWith('{')) {
    let obj;
    try {
      obj = JSON.parse(body);
    } catch (e) {
      die(`trace ${file} is not valid JSON (object form): ${e.message}`);
    }
    if (!Array.isArray(obj.traceEvents)) die(`trace ${file}: object form without a traceEvents array`);
    return {events: obj.traceEvents, notes};
  }
  if (!body.startsWith('[')) die(`trace ${file}: does not start with '[' (JSON array form expected)`);
  if (!body.endsWith(']')) {
    body = body.replace(/,\s*$/, '');
    body += '\n]';
    notes.push('closing "]" was missing (unterminated trace); appended it');
  } else if (/,\s*\]$/.test(body)) {
    body = body.replace(/,\s*\]$/, '\n]');
    notes.push('trailing comma before "]" removed');
  }
  let events;
  try {
    events = JSON.parse(body);
  } catch (e) {
    // A process killed mid-write can leave a partial last event; dropping it
    // is opt-in so that writer bugs are not hidden.
    const cut = body.lastIndexOf(',\n');
    let recovered = null;
    if (allowTruncatedLast && cut > 0) {
      try {
        recovered = JSON.parse(body.slice(0, cut) + '\n]');
      } catch {
        recovered = null;
      }
    }
    if (!recovered) die(`trace ${file} is not valid JSON even after closing the array: ${e.message}`);
    notes.push(`dropped a truncated last event: ${JSON.stringify(body.slice(cut + 2).replace(/\n\]$/, '').slice(0, 80))}`);
    events = recovered;
  }
  if (!Array.isArray(events)) die(`trace ${file}: top level is not an array`);
  return {events, notes};
}

const EXPECT_KEYS = new Set([
  'threads', 'thread_count', 'process_names', 'process_name_patterns', 'slice_names',
  'instant_names', 'nesting', 'nesting_patterns', 'exact_slice_counts', 'min_slice_counts',
  'exact_flow_count', 'min_flow_count', 'flows', 'max_dropped_from_tree', 'max_dropped_events',
  'allow_engine_console_errors', 'allow_truncated_last_event',
]);

function loadExpect(file) {
  let expect;
  try {
    expect = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    die(`cannot read expectations ${file}: ${e.message}`);
  }
  if (expect === null || typeof expect !== 'object' || Array.isArray(expect)) {
    die(`expectations ${file}: top level is not an object`);
  }
  const unknown = Object.keys(expect).filter(k => !EXPECT_KEYS.has(k));
  if (unknown.length) die(`expectations ${file}: unknown key(s) ${unknown.map(k => JSON.stringify(k)).join(', ')}`);
  return expect;
}

async function importEngine() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const bases = [...new Set([process.env.TRACE_ENGINE_DIR, here, process.cwd()].filter(Boolean).map(b => path.resolve(b)))];
  const tried = [];
  for (const base of bases) {
    try {
      const req = createRequire(path.join(base, 'noop.js'));
      const entry = req.resolve(ENGINE_PKG);
      const pkgJson = JSON.parse(fs.readFileSync(req.resolve(`${ENGINE_PKG}/package.json`), 'utf8'));
      const mod = await import(pathToFileURL(entry).href);
      return {Trace: mod, version: pkgJson.version, entry};
    } catch (e) {
      tried.push(`${base}: ${e.code ?? e.message}`);
    }
  }
  die(`cannot load ${ENGINE_PKG} (run npm ci next to package.json, or set TRACE_ENGINE_DIR); tried ${tried.join('; ')}`);
}

// The engine assumes a browser; the package README says to polyfill DOMRect
// in Node. Only layout-shift style handlers use it, but keep it faithful.
function polyfillDOMRect() {
  if (typeof globalThis.DOMRect !== 'undefined') return;
  globalThis.DOMRect = class DOMRect {
    constructor(x = 0, y = 0, width = 0, height = 0) {
      Object.assign(this, {x: +x, y: +y, width: +width, height: +height});
    }
    get left() { return this.x + Math.min(0, this.width); }
    get right() { return this.x + Math.max(0, this.width); }
    get top() { return this.y + Math.min(0, this.height); }
    get bottom() { return this.y + Math.max(0, this.height); }
  };
}

// ---------------------------------------------------------------- main

async function main() {
  const [tracePath, expectPath] = process.argv.slice(2);
  if (!tracePath || !expectPath || process.argv.length > 4) {
    console.error('usage: node check_trace.mjs <trace.json> <expect.json>');
    process.exit(2);
  }
  const expect = loadExpect(expectPath);
  const {events, notes} = loadTraceEvents(tracePath, {allowTruncatedLast: !!expect.allow_truncated_last_event});
  const {Trace, version} = await importEngine();
  polyfillDOMRect();

  console.log(`check_trace: ${tracePath}`);
  console.log(`  engine: ${ENGINE_PKG}@${version} (TraceModel.Model.createWithAllHandlers().parse)`);
  for (const n of notes) console.log(`  loader: ${n}`);

  // Input census, used only to account for events the engine dropped.
  const inputByPhase = new Map();
  for (const e of events) inputByPhase.set(e.ph, (inputByPhase.get(e.ph) ?? 0) + 1);
  console.log(`  input: ${events.length} events (${[...inputByPhase].map(([p, n]) => `${p}:${n}`).join(' ')})`);

  // ---- run the real engine pipeline, capturing what it complains about.
  const engineMessages = [];
  const saved = {error: console.error, warn: console.warn};
  console.error = (...a) => engineMessages.push(`error: ${a.map(String).join(' ')}`);
  console.warn = (...a) => engineMessages.push(`warn: ${a.map(String).join(' ')}`);
  let parsed;
  try {
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events);
    parsed = model.parsedTrace();
  } catch (e) {
    console.error = saved.error;
    console.warn = saved.warn;
    die(`the trace engine threw while parsing: ${e.stack ?? e}`);
  } finally {
    console.error = saved.error;
    console.warn = saved.warn;
  }
  if (!parsed?.data) die('the trace engine returned no parsed data');
  const data = parsed.data;

  // ---- what the engine reports.
  const threads = Trace.Handlers.Threads.threadsInTrace(data);
  const entryToNode = data.Renderer.entryToNode;
  const sliceCount = new Map();    // name -> count of ph X entries
  const instantCount = new Map();  // name -> count of ph I entries
  const byName = new Map();        // name -> [{entry, thread}]
  const droppedFromTree = [];
  let engineEntries = 0;
  const threadSummaries = [];
  for (const t of threads) {
    let slices = 0, instants = 0;
    for (const e of t.entries) {
      engineEntries++;
      if (e.ph === 'X') {
        slices++;
        sliceCount.set(e.name, (sliceCount.get(e.name) ?? 0) + 1);
      } else if (e.ph === 'I') {
        instants++;
        instantCount.set(e.name, (instantCount.get(e.name) ?? 0) + 1);
      }
      if (!byName.has(e.name)) byName.set(e.name, []);
      byName.get(e.name).push({entry: e, thread: t});
      if (!t.entryToNode.get(e)) droppedFromTree.push({entry: e, thread: t});
    }
    threadSummaries.push({
      name: t.name, pid: t.pid, tid: t.tid, slices, instants,
      roots: t.tree.roots.size, depth: t.tree.maxDepth, type: t.type,
    });
  }
  threadSummaries.sort((a, b) => (a.pid - b.pid) || String(a.name).localeCompare(String(b.name)) || (a.tid - b.tid));

  const processNames = new Map();
  for (const [pid, ev] of data.Meta.processNames ?? []) processNames.set(pid, ev?.args?.name);

  console.log(`  engine: ${threads.length} thread(s), ${engineEntries} entries, trace span ` +
      `${(data.Meta.traceBounds.range / 1000).toFixed(3)} ms, generic trace: ${data.Meta.traceIsGeneric}`);
  for (const [pid, name] of processNames) console.log(`    process ${pid}: ${JSON.stringify(name)}`);
  for (const s of threadSummaries) {
    console.log(`    thread ${JSON.stringify(s.name)} pid=${s.pid} tid=${s.tid}: ${s.slices} slices, ` +
        `${s.instants} instants, ${s.roots} roots, depth ${s.depth}`);
  }
  const names = [...new Set([...sliceCount.keys(), ...instantCount.keys()])].sort();
  console.log(`  entries by name: ${names.map(n => {
    const parts = [];
    if (sliceCount.has(n)) parts.push(`${sliceCount.get(n)}`);
    if (instantCount.has(n)) parts.push(`${instantCount.get(n)} instant`);
    return `${n}=${parts.join('+')}`;
  }).join(', ')}`);

  // Events of the file that belong on a thread track (complete, instant,
  // begin; B/E pairs become one entry, so count B only) but that the engine
  // reports in no thread. Note "i" (lowercase, the spec's current instant
  // phase) is counted here: this engine version only knows uppercase "I".
  const trackable = ['X', 'I', 'i', 'B'];
  const inputTrackable = trackable.reduce((n, p) => n + (inputByPhase.get(p) ?? 0), 0);
  const droppedEvents = Math.max(0, inputTrackable - engineEntries);
  // Flow phases ("s", "t", "f") go to the engine's Flows handler, not to a thread.
  const ignoredPhases = [...inputByPhase].filter(([p]) => !['X', 'I', 'B', 'E', 'M', 's', 't', 'f'].includes(p));
  if (ignoredPhases.length) {
    console.log(`  note: no engine handler consumes phase(s) ${ignoredPhases.map(([p, n]) => `"${p}" (${n})`).join(', ')}` +
        ` for generic traces; they do not appear as thread entries`);
  }
  if (engineMessages.length) {
    console.log(`  engine console output during parse (${engineMessages.length}):`);
    for (const m of engineMessages.slice(0, 20)) console.log(`    ${m}`);
  }
  const warnings = data.Warnings?.perWarning;
  if (warnings?.size) {
    for (const [w, evs] of warnings) console.log(`  engine warning ${w}: ${evs.length} event(s)`);
  }

  // Flows as the engine built them: each an array of the slices its flow
  // events bound to (same ts, pid, tid and cat), in the engine's order.
  const flows = data.Flows?.flows ?? [];
  const threadName = new Map(threadSummaries.map(s => [`${s.pid}:${s.tid}`, s.name]));
  const endName = e => `${e.name} on ${JSON.stringify(threadName.get(`${e.pid}:${e.tid}`) ?? `${e.pid}:${e.tid}`)}`;
  const flowPairs = new Map();  // "from\0to" -> count
  for (const f of flows) {
    const key = `${f[0].name}\0${f[f.length - 1].name}`;
    flowPairs.set(key, (flowPairs.get(key) ?? 0) + 1);
  }
  const flowStarts = inputByPhase.get('s') ?? 0;
  if (flowStarts || flows.length) {
    console.log(`  engine: ${flows.length} flow(s) from ${flowStarts} flow start(s) in the file`);
    const shown = new Map();  // "from on thread -> to on thread" -> count
    for (const f of flows) {
      const k = `${f.map(endName).join(' -> ')}`;
      shown.set(k, (shown.get(k) ?? 0) + 1);
    }
    for (const [k, n] of [...shown].slice(0, 20)) console.log(`    flow ${k}${n > 1 ? ` (x${n})` : ''}`);
    if (shown.size > 20) console.log(`    ... ${shown.size - 20} more kind(s)`);
  }

  // ---- expectations.
  const failures = [];
  const fail = msg => failures.push(msg);
  const describe = ({entry, thread}) =>
      `${entry.name}@${entry.ts}${entry.dur !== undefined ? `+${entry.dur}` : ''} on ${JSON.stringify(thread.name)} (tid ${thread.tid})`;

  const namedThreads = new Map();
  for (const s of threadSummaries) {
    if (s.name === null) continue;
    if (!namedThreads.has(s.name)) namedThreads.set(s.name, []);
    namedThreads.get(s.name).push(s);
  }
  for (const [name, want] of Object.entries(expect.threads ?? {})) {
    const got = namedThreads.get(name);
    if (!got) {
      fail(`thread ${JSON.stringify(name)} not reported by the engine (engine threads: ${
          [...namedThreads.keys()].map(n => JSON.stringify(n)).join(', ') || 'none'})`);
      continue;
    }
    const slices = got.reduce((n, s) => n + s.slices, 0);
    const instants = got.reduce((n, s) => n + s.instants, 0);
    const w = want ?? {};
    if (w.min_slices !== undefined && slices < w.min_slices) fail(`thread ${JSON.stringify(name)}: ${slices} slices < min_slices ${w.min_slices}`);
    if (w.max_slices !== undefined && slices > w.max_slices) fail(`thread ${JSON.stringify(name)}: ${slices} slices > max_slices ${w.max_slices}`);
    if (w.exact_slices !== undefined && slices !== w.exact_slices) fail(`thread ${JSON.stringify(name)}: ${slices} slices != exact_slices ${w.exact_slices}`);
    if (w.min_instants !== undefined && instants < w.min_instants) fail(`thread ${JSON.stringify(name)}: ${instants} instants < min_instants ${w.min_instants}`);
    if (w.exact_instants !== undefined && instants !== w.exact_instants) fail(`thread ${JSON.stringify(name)}: ${instants} instants != exact_instants ${w.exact_instants}`);
  }
  if (expect.thread_count !== undefined && namedThreads.size !== expect.thread_count) {
    fail(`engine reports ${namedThreads.size} named thread(s), expected thread_count ${expect.thread_count}`);
  }
  const procNameSet = new Set(processNames.values());
  for (const p of expect.process_names ?? []) {
    if (!procNameSet.has(p)) fail(`process name ${JSON.stringify(p)} not reported by the engine`);
  }
  for (const p of expect.process_name_patterns ?? []) {
    let re;
    try {
      re = new RegExp(p);
    } catch (e) {
      fail(`bad process_name_patterns expectation ${JSON.stringify(p)}: ${e.message}`);
      continue;
    }
    if (![...procNameSet].some(n => typeof n === 'string' && re.test(n))) {
      fail(`no process name reported by the engine matches /${p}/ (engine: ${
          [...procNameSet].map(n => JSON.stringify(n)).join(', ') || 'none'})`);
    }
  }
  for (const n of expect.slice_names ?? []) {
    if (!sliceCount.has(n)) fail(`slice ${JSON.stringify(n)} not reported by the engine`);
  }
  for (const n of expect.instant_names ?? []) {
    if (!instantCount.has(n)) fail(`instant ${JSON.stringify(n)} not reported by the engine`);
  }
  for (const [n, c] of Object.entries(expect.exact_slice_counts ?? {})) {
    const got = sliceCount.get(n) ?? 0;
    if (got !== c) fail(`slice ${JSON.stringify(n)}: engine reports ${got}, expected exactly ${c}`);
  }
  for (const [n, c] of Object.entries(expect.min_slice_counts ?? {})) {
    const got = sliceCount.get(n) ?? 0;
    if (got < c) fail(`slice ${JSON.stringify(n)}: engine reports ${got}, expected at least ${c}`);
  }
  // Every instance of `child` must have a parent accepted by `parentOk`
  // (which gets the parent's name, or null for a root).
  const checkNesting = (label, instances, parentOk, parentLabel) => {
    if (!instances.length) {
      fail(`nesting ${label} -> ${parentLabel}: no entry matches ${label}`);
      return;
    }
    let bad = 0;
    const examples = [];
    for (const inst of instances) {
      const node = inst.thread.entryToNode.get(inst.entry);
      const gotParent = node ? (node.parent ? node.parent.entry.name : null) : undefined;
      if (gotParent === undefined || !parentOk(gotParent)) {
        bad++;
        if (examples.length < 3) {
          examples.push(`${describe(inst)} has ${node ? (gotParent === null ? 'no parent (root)' : `parent ${JSON.stringify(gotParent)}`) : 'no tree node'}`);
        }
      }
    }
    if (bad) {
      fail(`nesting ${label} -> ${parentLabel}: ` +
          `${bad} of ${instances.length} instance(s) wrong, e.g. ${examples.join('; ')}`);
    } else {
      console.log(`  nesting ok: ${label} -> ${parentLabel} (${instances.length} instance(s))`);
    }
  };
  // The optional third element of a nesting rule: only that thread's entries.
  const onThread = (instances, thread) =>
      (thread === undefined ? instances : instances.filter(i => i.thread.name === thread));
  const onLabel = thread => (thread === undefined ? '' : ` on ${JSON.stringify(thread)}`);
  for (const pair of expect.nesting ?? []) {
    if (!Array.isArray(pair) || (pair.length !== 2 && pair.length !== 3) ||
        (pair.length === 3 && typeof pair[2] !== 'string')) {
      fail(`bad nesting expectation ${JSON.stringify(pair)} (want [child, parent] or [child, parent, thread])`);
      continue;
    }
    const [child, parent, thread] = pair;
    checkNesting(JSON.stringify(child) + onLabel(thread), onThread(byName.get(child) ?? [], thread),
        got => got === parent, parent === null ? 'root' : JSON.stringify(parent));
  }
  for (const pair of expect.nesting_patterns ?? []) {
    let child, parent;
    try {
      if (!Array.isArray(pair) || (pair.length !== 2 && pair.length !== 3) ||
          typeof pair[0] !== 'string' || (pair[1] !== null && typeof pair[1] !== 'string') ||
          (pair.length === 3 && typeof pair[2] !== 'string')) {
        throw new Error('want [child_pattern, parent_pattern_or_null] or [child_pattern, parent_pattern_or_null, thread]');
      }
      child = new RegExp(pair[0]);
      parent = pair[1] === null ? null : new RegExp(pair[1]);
    } catch (e) {
      fail(`bad nesting_patterns expectation ${JSON.stringify(pair)}: ${e.message}`);
      continue;
    }
    const instances = onThread([...byName].filter(([n]) => child.test(n)).flatMap(([, insts]) => insts), pair[2]);
    checkNesting(`/${pair[0]}/${onLabel(pair[2])}`, instances,
        got => (parent === null ? got === null : got !== null && parent.test(got)),
        parent === null ? 'root' : `/${pair[1]}/`);
  }
  if (expect.exact_flow_count !== undefined && flows.length !== expect.exact_flow_count) {
    fail(`engine reports ${flows.length} flow(s), expected exact_flow_count ${expect.exact_flow_count}`);
  }
  if (expect.min_flow_count !== undefined && flows.length < expect.min_flow_count) {
    fail(`engine reports ${flows.length} flow(s), expected min_flow_count ${expect.min_flow_count}`);
  }
  for (const want of expect.flows ?? []) {
    if (!Array.isArray(want) || (want.length !== 2 && want.length !== 3) ||
        typeof want[0] !== 'string' || typeof want[1] !== 'string' ||
        (want.length === 3 && !Number.isInteger(want[2]))) {
      fail(`bad flows expectation ${JSON.stringify(want)} (want [from, to] or [from, to, count])`);
      continue;
    }
    const [from, to, count] = want;
    const got = flowPairs.get(`${from}\0${to}`) ?? 0;
    const label = `flow ${JSON.stringify(from)} -> ${JSON.stringify(to)}`;
    if (count === undefined ? got === 0 : got !== count) {
      fail(`${label}: engine reports ${got}, expected ${count === undefined ? 'at least 1' : `exactly ${count}`} ` +
          `(engine flows: ${[...flowPairs].map(([k, n]) => `${k.replace('\0', ' -> ')} x${n}`).join(', ') || 'none'})`);
    } else {
      console.log(`  flow ok: ${label} (${got})`);
    }
  }
  const maxDroppedTree = expect.max_dropped_from_tree ?? 0;
  if (droppedFromTree.length > maxDroppedTree) {
    fail(`${droppedFromTree.length} engine entr(y/ies) could not be placed in the engine's tree ` +
        `(overlapping a sibling/parent end?), e.g. ${droppedFromTree.slice(0, 3).map(describe).join('; ')}`);
  }
  const maxDroppedEvents = expect.max_dropped_events ?? 0;
  if (droppedEvents > maxDroppedEvents) {
    fail(`${droppedEvents} X/I/i/B event(s) of the file are reported in no engine thread ` +
        `(input X/I/i/B: ${inputTrackable}, engine entries: ${engineEntries})`);
  }
  if (engineMessages.length && !expect.allow_engine_console_errors) {
    fail(`the engine logged ${engineMessages.length} error/warning message(s) while parsing (see above)`);
  }

  if (failures.length) {
    console.log(`FAIL: ${failures.length} expectation(s) not met:`);
    for (const f of failures) console.log(`  - ${f}`);
    process.exit(1);
  }
  console.log(`PASS: all expectations met (${tracePath})`);
}

await main();
