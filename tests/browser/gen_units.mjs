// Writes a jitscope-shaped trace and metrics file with N compile units, for
// the large-report browser check and bench/report/html_bench.sh.
//
// usage: node gen_units.mjs OUT_DIR N [--seed S]
//   writes OUT_DIR/trace.json and OUT_DIR/metrics.jsonl
//
// Unit i is "model__graph_<i>" on compile thread i % 4, starting at
// i * 2 ms (so start order is i's order), with a wall time of 0.2 to 7.9 ms
// and the phases compile_graph > parse, passes, codegen. Every 10th unit
// (i % 10 == 9) recompiles the previous unit's frame (attempt 1, with a
// recompile_reason); every 37th (i % 37 == 5) fails. Every third (i % 3 == 1)
// also has metrics columns named like Object.prototype's members
// (kBuiltinColumns: constructor_us, toString_us, __proto___us), which the
// others lack. Each unit looks its kernel up in the cache layer "kernel"
// (CompileUnit::cache_lookup's instant) by {source: graph_<frame>, options}:
// a miss, with -O3 where it recompiles and -O2 otherwise, and every 4th
// (i % 4 == 2) looks it up again and hits (expectedCaches). Deterministic
// for a seed.
import fs from "node:fs";
import path from "node:path";

// Metrics columns named like members every JS object inherits: the page
// must show them as columns, and nothing (never "NaN s") for a unit without.
export const kBuiltinColumns = ["constructor", "toString", "__proto__"];

// What the report's caches section must say of genUnits(n)'s lookups, by
// their construction: unit 0's miss is the layer's first; a recompile's
// key differs from its frame's first key in `options` alone, any other
// unit's from the previous frame's first key in `source` alone (the
// nearest earlier keys: every other earlier key differs in more).
export function expectedCaches(n) {
  let hits = 0;
  let recompiles = 0;
  for (let i = 0; i < n; ++i) {
    if (i % 4 === 2) ++hits;
    if (i % 10 === 9) ++recompiles;
  }
  const reasons = { "new layer": 1, options: recompiles, source: n - 1 - recompiles };
  return { layer: "kernel", lookups: n + hits, hits, misses: n, reasons,
           firstChange: { options: "options: -O2 → -O3", source: "source: graph_0 → graph_1" } };
}

export function genUnits(dir, n, seed = 1) {
  fs.mkdirSync(dir, { recursive: true });
  let s = BigInt(seed) * 6364136223846793005n + 1442695040888963407n;
  const rand = (lo, hi) => {  // integer in [lo, hi]
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return lo + Number((s >> 33n) % BigInt(hi - lo + 1));
  };
  const pid = 4242;
  const us = (ns) => (ns / 1000).toFixed(3);
  const trace = fs.openSync(path.join(dir, "trace.json"), "w");
  const metrics = fs.openSync(path.join(dir, "metrics.jsonl"), "w");
  let buf = [];
  let mbuf = [];
  const flush = () => {
    if (buf.length) fs.writeSync(trace, buf.join(",\n") + ",\n");
    if (mbuf.length) fs.writeSync(metrics, mbuf.join("\n") + "\n");
    buf = [];
    mbuf = [];
  };
  fs.writeSync(trace, "[\n");
  buf.push(JSON.stringify({ ph: "M", name: "process_name", pid, tid: 0, args: { name: "gen_units" } }));
  for (let t = 0; t < 4; ++t) {
    buf.push(JSON.stringify({ ph: "M", name: "thread_name", pid, tid: pid + 1 + t, args: { name: `compile-${t}` } }));
  }
  const epoch = 1_700_000_000_000_000;  // µs, wall clock of the metrics records
  let frame = -1;
  const walls = [];
  for (let i = 0; i < n; ++i) {
    const recompile = i % 10 === 9;
    if (!recompile) ++frame;
    const id = `${frame}/${recompile ? 1 : 0}`;
    const name = `model__graph_${i}`;
    const failed = i % 37 === 5;
    const tid = pid + 1 + (i % 4);
    const begin = 1_000_000_000 + i * 2_000_000;  // ns
    const wall = rand(200_000, 7_900_000);
    walls.push(wall);
    const inner = wall - 20_000;
    const parse = Math.floor(inner * rand(10, 30) / 100);
    const passes = Math.floor(inner * rand(10, 30) / 100);
    const codegen = inner - parse - passes - 30_000;
    const args = { compile_id: id };
    const x = (cat, nm, ts, dur, a = args) => buf.push(JSON.stringify({ ph: "X", cat, name: nm, ts: Number(us(ts)), dur: Number(us(dur)), pid, tid, args: a }));
    // Children first, as jitscope writes them.
    x("phase", "parse", begin + 20_000, parse);
    x("phase", "passes", begin + 30_000 + parse, passes);
    x("compile_event", "codegen", begin + 40_000 + parse + passes, codegen);
    x("phase", "compile_graph", begin + 10_000, inner);
    x("compile_unit", `[${id}] ${name}`, begin, wall, { compile_id: id, duration_us: Math.floor(inner / 1000) });
    const lookup = (at, hit) => buf.push(JSON.stringify({
      ph: "I", s: "t", name: "cache_lookup", ts: Number(us(at)), pid, tid,
      args: { compile_id: id, layer: "kernel", hit, unit: id,
              key_parts: JSON.stringify({ source: `graph_${frame}`, options: recompile ? "-O3" : "-O2" }) },
    }));
    lookup(begin + 15_000, false);
    if (i % 4 === 2) lookup(begin + 16_000, true);
    const rec = {
      compile_id: id,
      frame_id: frame,
      attempt: recompile ? 1 : 0,
      name,
      is_runtime: false,
      is_forward: i % 2 === 0,
      start_time_us: epoch + Math.floor(begin / 1000),
      end_time_us: epoch + Math.floor((begin + wall) / 1000),
      duration_us: Math.floor(inner / 1000),
      entire_compile_us: Math.floor(inner / 1000),
      parse_us: Math.floor(parse / 1000),
      passes_us: Math.floor(passes / 1000),
      codegen_us: Math.floor(codegen / 1000),
      caches: { kernel: { hits: recompile ? 2 : 0, misses: recompile ? 1 : 3, hit_keys: [], miss_keys: [] } },
    };
    if (recompile) rec.recompile_reason = `input shape changed: graph ${i}`;
    if (failed) Object.assign(rec, { fail_type: "std::runtime_error", fail_reason: `kernel k2 of graph ${i} needs 320 registers` });
    let line = JSON.stringify(rec);
    if (i % 3 === 1) {
      // As text: a "__proto__" key in an object literal would set its prototype.
      const extra = kBuiltinColumns.map((c, k) => `"${c}_us":${(k + 1) * 100 + (i % 7)}`).join(",");
      line = line.slice(0, -1) + "," + extra + "}";
    }
    mbuf.push(line);
    if (buf.length > 5000) flush();
  }
  flush();
  fs.writeSync(trace, JSON.stringify({ ph: "M", name: "thread_name", pid, tid: pid, args: { name: "main" } }) + "\n]\n");
  fs.closeSync(trace);
  fs.closeSync(metrics);
  return { trace: path.join(dir, "trace.json"), metrics: path.join(dir, "metrics.jsonl"), walls };
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const [dir, count, flag, seed] = process.argv.slice(2);
  const n = Number(count);
  if (!dir || !Number.isInteger(n) || n < 1 || (flag !== undefined && flag !== "--seed")) {
    console.error("usage: node gen_units.mjs OUT_DIR N [--seed S]");
    process.exit(2);
  }
  const out = genUnits(dir, n, seed === undefined ? 1 : Number(seed));
  console.log(`gen_units: ${n} units: ${out.trace}, ${out.metrics}`);
}
