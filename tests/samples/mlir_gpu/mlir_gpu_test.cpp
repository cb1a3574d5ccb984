// The mlir_gpu sample end to end (ctest label: sample): runs the real binary
// as a subprocess and reads back what it wrote.
//
//   Compile.EveryKernelIsAUnitWithItsPhases     9 kernels on 2 threads: one
//       unit slice per kernel, each with its mlir_parse, mlir_lower,
//       llvm_translate, llvm_opt, nvptx_codegen and nvjitlink phases nested
//       in it, in that order
//   Compile.EveryPassIsASpanInsideItsPhase      each MLIR pass once inside its
//       unit's mlir_lower, LLVM's O3 passes inside its llvm_opt, all on the
//       named compile worker threads
//   Compile.RecordsCarryPhasesSizesAndHashes    one metrics line per kernel with
//       every phase column, and sizes and FNV-1a hashes equal to the .mlir and
//       .ptx files written to --out-dir (the test hashes them itself)
//   Compile.CubinsAreSm90ElfHoldingTheKernel    each .cubin: an ELF for
//       EM_CUDA, sm_90, with a .text.<kernel> section and a FUNC symbol of the
//       kernel's name; ptxas -arch=sm_90 takes each .ptx; cuobjdump -elf and
//       nvdisasm list the kernel where those tools are installed
//   Compile.SecondRunHitsTheCache               9 hits, no compile phase and no
//       pass span, the same PTX hashes as the first run
//   Compile.ReportShowsPerPassCompileTimes      jitscope-report's compile_times
//       table has a row per phase and per pass, with the right counts
//   Errors.*                                    bad options; a kernel whose MLIR
//       does not parse (its unit fails with MLIR's diagnostic, the others
//       build); a corrupt cache entry (a miss, said once, rebuilt)
//   Run.OneLineWithoutAGpu                      --run: without a driver exactly
//       one stderr line; on a GPU, every kernel runs correctly
//   Gaps.AnUntracedPtxasIsItsUnitsLongestUnexplainedGap   --ptxas-check: ptxas
//       as a child process outside every span is, whole, each unit's longest
//       unexplained gap in jitscope-report, after its last phase
//   Gpu.RunsEveryKernel                         (label gpu; exit 77 without a GPU)
//       every kernel runs; with CUPTI on, each kernel's GPU slice is named as
//       launched and credited to the unit that built it (its LoadScope)
//
// Durations are real, so only nesting, presence and order are checked, never
// values.
// Not covered: the GPU half on this machine (no driver).
#include "fnv1a_reference.hpp"
#include "samples/sample_support.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef JITSCOPE_MLIR_GPU
#error "JITSCOPE_MLIR_GPU must name the jitscope_mlir_gpu binary"
#endif

namespace {

using namespace sample_support;  // NOLINT(google-build-using-namespace): test helpers

constexpr int kKernels = 9;
// make_kernels(9): axpy, reduce, matmul round robin (kernel_catalog.cpp).
const std::set<std::string> kKernelNames = {"axpy_u1_b256",    "axpy_u2_b256",   "axpy_u4_b256",
                                            "reduce_b256_i1",  "reduce_b64_i1",  "reduce_b512_i1",
                                            "matmul_t16_s256", "matmul_t8_s256", "matmul_t32_s256"};
const std::vector<std::string> kCompilePhases = {"mlir_parse", "mlir_lower",    "llvm_translate",
                                                 "llvm_opt",   "nvptx_codegen", "nvjitlink"};
// The lowering pipeline's passes as jitscope::mlir names them (MLIR's
// Pass::getName(), as -mlir-timing does), with their pipeline argument.
const std::vector<std::string> kMlirPasses = {"SCFToControlFlow",
                                              "ConvertGpuOpsToNVVMOps",
                                              "ArithToLLVMConversionPass",
                                              "Canonicalizer",
                                              "CSE",
                                              "ReconcileUnrealizedCasts"};
const std::map<std::string, std::string> kMlirPassArguments = {
    {"SCFToControlFlow", "convert-scf-to-cf"},
    {"ConvertGpuOpsToNVVMOps", "convert-gpu-to-nvvm"},
    {"ArithToLLVMConversionPass", "convert-arith-to-llvm"},
    {"Canonicalizer", "canonicalize"},
    {"CSE", "cse"},
    {"ReconcileUnrealizedCasts", "reconcile-unrealized-casts"}};
// A few of O3's passes that run on every kernel (LLVM 16).
const std::vector<std::string> kLlvmPasses = {"InstCombinePass", "SROAPass", "GVNPass",
                                              "SimplifyCFGPass", "NVVMReflectPass"};

// The sample's own hash (disk_cache.cpp) is the artifacts' 64-bit FNV-1a,
// recomputed here by the tests' reference.
using jitscope::testing::reference_fnv1a;

fs::path test_dir(const std::string& name) { return sample_support::test_dir("mlir_gpu_", name); }

SampleRun run_sample(const fs::path& dir, const std::string& tag, std::vector<std::string> args) {
  Started s = start_sample(JITSCOPE_MLIR_GPU, dir, tag, args);
  return finish(s);
}

// `inner` lies inside `outer`: same thread, inside in time.
bool inside(const json& inner, const json& outer) {
  const double eps = 0.0015;  // µs with three decimals
  const double ts = inner.at("ts").get<double>(), end = ts + inner.at("dur").get<double>();
  const double ots = outer.at("ts").get<double>(), oend = ots + outer.at("dur").get<double>();
  return inner.at("pid") == outer.at("pid") && inner.at("tid") == outer.at("tid") &&
         ts + eps >= ots && end <= oend + eps;
}

// The slices of category `cat` named `name` inside `outer`.
std::vector<const json*> within(const json& trace, const json& outer, const std::string& cat,
                                const std::string& name) {
  std::vector<const json*> out;
  for (const json* s : slices(trace, cat, name)) {
    if (inside(*s, outer)) out.push_back(s);
  }
  return out;
}

std::map<long long, std::string> thread_names(const json& trace) {
  std::map<long long, std::string> out;
  for (const json& e : trace) {
    if (str(e, "ph") == "M" && str(e, "name") == "thread_name") {
      out[e.at("tid").get<long long>()] = str(args(e), "name");
    }
  }
  return out;
}

// ---- 9 kernels on 2 threads, then again from the cache -------------------------

class Compile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(test_dir("compile"));
    first_ = new SampleRun(
        run_sample(*dir_, "first",
                   {"--kernels", std::to_string(kKernels), "--threads", "2", "--cache-dir",
                    (*dir_ / "cache").string(), "--out-dir", (*dir_ / "out").string()}));
  }
  static void TearDownTestSuite() {
    delete first_;
    delete dir_;
  }
  static fs::path* dir_;
  static SampleRun* first_;
};
fs::path* Compile::dir_ = nullptr;
SampleRun* Compile::first_ = nullptr;

TEST_F(Compile, EveryKernelIsAUnitWithItsPhases) {
  const SampleRun& r = *first_;
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err, "") << r.describe();
  EXPECT_NE(r.out.find("cache:            0 hits, 9 misses"), std::string::npos) << r.out;
  const json trace = load_trace(r.trace);
  const std::map<std::string, const json*> units = units_by_kernel(trace);
  std::set<std::string> names;
  for (const auto& [kernel, unit] : units) names.insert(kernel);
  EXPECT_EQ(names, kKernelNames);
  for (const std::string& phase : kCompilePhases) {
    EXPECT_EQ(slices(trace, "phase", phase).size(), static_cast<std::size_t>(kKernels)) << phase;
  }
  for (const auto& [kernel, unit] : units) {
    SCOPED_TRACE(kernel);
    EXPECT_EQ(str(args(*unit), "cache"), "miss");
    double last_ts = -1;
    for (const std::string& name : kCompilePhases) {
      const std::vector<const json*> phase = within(trace, *unit, "phase", name);
      ASSERT_EQ(phase.size(), 1u) << name << " in " << unit->dump();
      EXPECT_EQ(str(args(*phase[0]), "compile_id"), str(args(*unit), "compile_id"));
      EXPECT_GE(phase[0]->at("ts").get<double>(), last_ts) << name << " out of order";
      last_ts = phase[0]->at("ts").get<double>();
    }
  }
}

TEST_F(Compile, EveryPassIsASpanInsideItsPhase) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const json trace = load_trace(first_->trace);
  const std::map<long long, std::string> threads = thread_names(trace);
  for (const auto& [kernel, unit] : units_by_kernel(trace)) {
    SCOPED_TRACE(kernel);
    const std::vector<const json*> lower = within(trace, *unit, "phase", "mlir_lower");
    const std::vector<const json*> opt = within(trace, *unit, "phase", "llvm_opt");
    ASSERT_EQ(lower.size(), 1u);
    ASSERT_EQ(opt.size(), 1u);
    for (const std::string& pass : kMlirPasses) {
      const std::vector<const json*> runs = within(trace, *lower[0], "jitscope", pass);
      ASSERT_EQ(runs.size(), 1u) << pass;
      EXPECT_EQ(runs[0]->at("args").value("pass", ""), kMlirPassArguments.at(pass));
      EXPECT_EQ(runs[0]->at("args").value("op", ""), "gpu.module");
    }
    for (const std::string& pass : kLlvmPasses) {
      EXPECT_GE(within(trace, *opt[0], "jitscope", pass).size(), 1u) << pass;
    }
    // O3 on one small function is still ~150 pass runs; all of them inside.
    std::size_t in_opt = 0;
    for (const json* s : slices(trace, "jitscope")) in_opt += inside(*s, *opt[0]);
    EXPECT_GE(in_opt, 100u);
    const std::string thread = threads.at(unit->at("tid").get<long long>());
    EXPECT_EQ(thread.rfind("compile worker ", 0), 0u) << thread;
  }
  // And no pass span anywhere else (e.g. on a thread of MLIR's pool).
  for (const std::string& pass : kMlirPasses) {
    EXPECT_EQ(slices(trace, "jitscope", pass).size(), static_cast<std::size_t>(kKernels)) << pass;
  }
}

TEST_F(Compile, RecordsCarryPhasesSizesAndHashes) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const std::vector<json> lines = read_json_lines(first_->metrics);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kKernels));
  std::set<std::string> kernels;
  for (const json& line : lines) {
    SCOPED_TRACE(line.dump());
    const std::string kernel = str(line, "kernel");
    kernels.insert(kernel);
    for (const std::string& phase : kCompilePhases) {
      EXPECT_GT(line.value(phase == "nvjitlink" ? "nvjitlink_us" : phase + "_us", 0), 0) << phase;
    }
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr);
    EXPECT_EQ(disk->value("misses", -1), 1);
    const fs::path out = *dir_ / "out";
    const std::string mlir = read_text(out / (kernel + ".mlir"));
    const std::string ptx = read_text(out / (kernel + ".ptx"));
    ASSERT_FALSE(mlir.empty());
    ASSERT_FALSE(ptx.empty());
    EXPECT_EQ(line.value("mlir_bytes", 0u), mlir.size());
    EXPECT_EQ(str(line, "mlir_hash"), reference_fnv1a(mlir));
    EXPECT_EQ(line.value("ptx_bytes", 0u), ptx.size());
    EXPECT_EQ(str(line, "ptx_hash"), reference_fnv1a(ptx));
    EXPECT_EQ(line.value("cubin_bytes", 0u), fs::file_size(out / (kernel + ".cubin")));
    EXPECT_GT(line.value("llvm_ir_bytes", 0), 0);
    EXPECT_NE(ptx.find(".entry " + kernel + "("), std::string::npos);
    EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(line.find("fail_type"), line.end());
    // The unit's artifacts: the source MLIR and the PTX are the files above;
    // the lowered MLIR is in the NVVM dialect, the LLVM IR targets NVPTX.
    std::map<std::string, std::string> artifact;
    for (const json& a : line.value("artifacts", json::array())) {
      artifact[str(a, "kind")] = read_text(str(a, "path"));
      EXPECT_EQ(reference_fnv1a(artifact[str(a, "kind")]), str(a, "fnv1a")) << str(a, "kind");
    }
    EXPECT_EQ(artifact["mlir"], mlir);
    EXPECT_EQ(artifact["ptx"], ptx);
    EXPECT_NE(artifact["mlir_lowered"].find("nvvm."), std::string::npos);
    EXPECT_NE(artifact["llvm_ir"].find("nvptx64-nvidia-cuda"), std::string::npos);
    EXPECT_EQ(artifact["cubin"].size(), fs::file_size(out / (kernel + ".cubin")));
  }
  EXPECT_EQ(kernels, kKernelNames);
}

// The cubin's sections and symbols, read with <elf.h>. Empty, or what is wrong.
std::string check_cubin(const std::string& image, const std::string& kernel) {
  if (image.size() < sizeof(Elf64_Ehdr) || image.compare(0, 4, ELFMAG) != 0) return "not ELF";
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return "not ELF64";
  if (eh.e_machine != EM_CUDA) return "e_machine " + std::to_string(eh.e_machine) + ", not EM_CUDA";
  // The SM number sits in e_flags: bits 8-15 since CUDA 12.8 (0x6005a04 for
  // sm_90 from nvJitLink 13), bits 0-7 before.
  if (((eh.e_flags >> 8) & 0xff) != 90 && (eh.e_flags & 0xff) != 90) {
    return "e_flags " + std::to_string(eh.e_flags) + " is not sm_90";
  }
  if (eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > image.size()) {
    return "section headers past the end";
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), image.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  auto text_at = [&](const Elf64_Shdr& table, std::uint32_t offset) {
    return std::string(image.c_str() + table.sh_offset + offset);
  };
  bool has_text = false, has_symbol = false;
  for (const Elf64_Shdr& s : sections) {
    if (text_at(sections.at(eh.e_shstrndx), s.sh_name) == ".text." + kernel) has_text = true;
    if (s.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr& names = sections.at(s.sh_link);
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, image.data() + s.sh_offset + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && text_at(names, sym.st_name) == kernel &&
          sym.st_size > 0) {
        has_symbol = true;
      }
    }
  }
  if (!has_text) return "no .text." + kernel + " section";
  if (!has_symbol) return "no FUNC symbol " + kernel;
  return {};
}

TEST_F(Compile, CubinsAreSm90ElfHoldingTheKernel) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const fs::path out = *dir_ / "out";
  const std::string ptxas = JITSCOPE_PTXAS, cuobjdump = JITSCOPE_CUOBJDUMP,
                    nvdisasm = JITSCOPE_NVDISASM;
  for (const std::string& kernel : kKernelNames) {
    SCOPED_TRACE(kernel);
    const fs::path cubin = out / (kernel + ".cubin");
    EXPECT_EQ(check_cubin(read_text(cubin), kernel), "");
    if (!ptxas.empty()) {
      const SampleRun r = run_program(out, kernel + ".ptxas",
                                      {ptxas, "-arch=sm_90", (out / (kernel + ".ptx")).string(),
                                       "-o", (out / (kernel + ".ptxas.cubin")).string()});
      EXPECT_EQ(r.exit_code, 0) << r.describe();
    }
    if (!cuobjdump.empty()) {
      const SampleRun r =
          run_program(out, kernel + ".cuobjdump", {cuobjdump, "-elf", cubin.string()});
      EXPECT_EQ(r.exit_code, 0) << r.describe();
      EXPECT_NE(r.out.find(".text." + kernel), std::string::npos) << r.describe();
    }
    if (!nvdisasm.empty()) {
      const SampleRun r = run_program(out, kernel + ".nvdisasm", {nvdisasm, cubin.string()});
      EXPECT_EQ(r.exit_code, 0) << r.describe();
      EXPECT_NE(r.out.find(kernel), std::string::npos) << r.describe();
    }
  }
  std::printf("note: ptxas %s, cuobjdump %s, nvdisasm %s\n", ptxas.empty() ? "absent" : "ran",
              cuobjdump.empty() ? "absent" : "ran", nvdisasm.empty() ? "absent" : "ran");
}

TEST_F(Compile, SecondRunHitsTheCache) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const SampleRun r = run_sample(*dir_, "second",
                                 {"--kernels", std::to_string(kKernels), "--threads", "2",
                                  "--cache-dir", (*dir_ / "cache").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("cache:            9 hits, 0 misses"), std::string::npos) << r.out;
  const json trace = load_trace(r.trace);
  EXPECT_EQ(slices(trace, "compile_unit").size(), static_cast<std::size_t>(kKernels));
  EXPECT_EQ(slices(trace, "phase", "cache lookup").size(), static_cast<std::size_t>(kKernels));
  for (const std::string& phase : kCompilePhases) {
    EXPECT_TRUE(slices(trace, "phase", phase).empty()) << phase << " ran on a hit";
  }
  for (const std::string& pass : kMlirPasses) EXPECT_TRUE(slices(trace, "jitscope", pass).empty());
  for (const std::string& pass : kLlvmPasses) EXPECT_TRUE(slices(trace, "jitscope", pass).empty());

  std::map<std::string, std::string> first_ptx;
  for (const json& line : read_json_lines(first_->metrics)) {
    first_ptx[str(line, "kernel")] = str(line, "ptx_hash");
  }
  const std::vector<json> lines = read_json_lines(r.metrics);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kKernels));
  for (const json& line : lines) {
    SCOPED_TRACE(line.dump());
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr);
    EXPECT_EQ(disk->value("hits", 0), 1);
    EXPECT_EQ(disk->value("misses", 0), 0);
    EXPECT_EQ(str(line, "cache"), "hit");
    EXPECT_EQ(line.find("llvm_opt_us"), line.end());
    EXPECT_EQ(str(line, "ptx_hash"), first_ptx[str(line, "kernel")]);
    EXPECT_GT(line.value("cubin_bytes", 0), 0);
  }
}

TEST_F(Compile, ReportShowsPerPassCompileTimes) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const std::string report = JITSCOPE_REPORT;
  if (report.empty()) GTEST_SKIP() << "jitscope-report is not built";
  const SampleRun r = run_program(*dir_, "report",
                                  {report, first_->trace.string(), "--metrics",
                                   first_->metrics.string(), "-s", "compile_times"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  // "name   count  total  mean  min  max", one row per span name.
  std::vector<std::string> rows = {"mlir_parse", "mlir_lower",    "llvm_translate",
                                   "llvm_opt",   "nvptx_codegen", "nvjitlink"};
  rows.insert(rows.end(), kMlirPasses.begin(), kMlirPasses.end());
  for (const std::string& name : rows) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\n" + name + " +9 +[0-9.]+ [^ ]*s ")))
        << name << "\n"
        << r.out;
  }
  for (const std::string& name : kLlvmPasses) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\n" + name + " +[1-9][0-9]* ")))
        << name << "\n"
        << r.out;
  }
}

TEST_F(Compile, ReportGroupsThePassesIntoTheirPhasesPipelines) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const std::string report = JITSCOPE_REPORT;
  if (report.empty()) GTEST_SKIP() << "jitscope-report is not built";
  const SampleRun r =
      run_program(*dir_, "report_passes",
                  {report, first_->trace.string(), "-s", "compile_times", "-f", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json rep = json::parse(r.out);
  std::map<std::string, const json*> rows, pipelines;
  for (const json& n : rep.at("compile_times")) rows[str(n, "name")] = &n;
  for (const json& n : rep.at("pipelines")) pipelines[str(n, "name")] = &n;
  std::vector<std::string> passes = kMlirPasses;
  passes.insert(passes.end(), kLlvmPasses.begin(), kLlvmPasses.end());
  for (const std::string& pass : passes) {
    ASSERT_TRUE(rows.count(pass)) << pass;
    EXPECT_TRUE(rows[pass]->value("pass", false)) << pass;
  }
  for (const std::string& phase : kCompilePhases) {
    ASSERT_TRUE(rows.count(phase)) << phase;
    EXPECT_FALSE(rows[phase]->contains("pass")) << phase;
  }
  // Each pipeline, from the trace: the pass spans (args "pass" or "ir", no
  // analysis) in the phase that are not inside another pass span.
  const json trace = load_trace(first_->trace);
  const auto is_pass = [](const json* s) {
    const json& a = args(*s);
    return (a.contains("pass") || a.contains("ir")) && !a.value("analysis", false);
  };
  const auto ns = [](const json& s) { return std::llround(s.at("dur").get<double>() * 1000); };
  for (const std::string& phase : {std::string("mlir_lower"), std::string("llvm_opt")}) {
    SCOPED_TRACE(phase);
    long long want = 0;
    for (const json* p : slices(trace, "phase", phase)) {
      std::vector<const json*> in;
      for (const json* s : within(trace, *p, "jitscope", "")) {
        if (is_pass(s)) in.push_back(s);
      }
      for (const json* s : in) {
        bool nested = false;
        for (const json* o : in) nested = nested || (o != s && inside(*s, *o) && ns(*o) > ns(*s));
        if (!nested) want += ns(*s);
      }
    }
    ASSERT_TRUE(pipelines.count(phase)) << rep.at("pipelines").dump();
    EXPECT_EQ(pipelines[phase]->at("count"), kKernels);
    EXPECT_GT(want, 0);
    EXPECT_EQ(pipelines[phase]->at("total_ns").get<long long>(), want);
  }
}

TEST_F(Compile, AnotherOptLevelMissesTheCacheAndComparesPassByPass) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const SampleRun o2 = run_sample(*dir_, "o2",
                                  {"--kernels", std::to_string(kKernels), "--threads", "2",
                                   "--opt-level", "2", "--cache-dir", (*dir_ / "cache").string()});
  ASSERT_EQ(o2.exit_code, 0) << o2.describe();
  // The level is in the cache key: the O3 entries are not O2's.
  EXPECT_NE(o2.out.find("cache:            0 hits, 9 misses"), std::string::npos) << o2.out;
  EXPECT_NE(o2.out.find(" O2, "), std::string::npos) << o2.out;
  // Each kernel's key differs from its O3 key in the part opt_level alone,
  // which a merged trace's report then names as the misses' reason.
  std::map<std::string, json> o3_keys;
  for (const CacheLookup& l : cache_lookups(load_trace(first_->trace), "disk_cache")) {
    o3_keys[str(l.parts, "kernel")] = l.parts;
  }
  const std::vector<CacheLookup> o2_lookups = cache_lookups(load_trace(o2.trace), "disk_cache");
  ASSERT_EQ(o2_lookups.size(), static_cast<std::size_t>(kKernels));
  ASSERT_EQ(o3_keys.size(), static_cast<std::size_t>(kKernels));
  for (const CacheLookup& l : o2_lookups) {
    const std::string kernel = str(l.parts, "kernel");
    SCOPED_TRACE(kernel);
    EXPECT_FALSE(l.hit);
    ASSERT_EQ(o3_keys.count(kernel), 1u);
    const json& was = o3_keys[kernel];
    EXPECT_EQ(str(was, "opt_level"), "O3");
    EXPECT_EQ(str(l.parts, "opt_level"), "O2");
    EXPECT_EQ(l.parts.size(), was.size());
    EXPECT_EQ(l.parts.size(), 6u);  // mlir_pipeline, llvm, opt_level, nvjitlink, kernel, source
    for (const auto& [part, value] : l.parts.items()) {
      if (part != "opt_level") {
        EXPECT_EQ(value, was.value(part, json())) << part;
      }
    }
  }
  const std::string report = JITSCOPE_REPORT;
  if (report.empty()) GTEST_SKIP() << "jitscope-report is not built";
  const SampleRun r =
      run_program(*dir_, "report_o3_o2",
                  {report, "--baseline", first_->trace.string(), o2.trace.string(), "-f", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json rep = json::parse(r.out);
  std::map<std::string, std::string> passes, pipelines;
  for (const json& row : rep.at("passes")) passes[str(row, "name")] = str(row, "change");
  for (const json& row : rep.at("pipelines")) pipelines[str(row, "name")] = str(row, "change");
  // The MLIR pipeline is the same at both levels; O3 runs passes O2 does not.
  for (const std::string& pass : kMlirPasses) {
    ASSERT_TRUE(passes.count(pass)) << pass;
    EXPECT_NE(passes[pass], "added") << pass;
    EXPECT_NE(passes[pass], "removed") << pass;
  }
  std::size_t removed = 0;
  for (const auto& [name, change] : passes) removed += change == "removed";
  EXPECT_GT(removed, 0u) << rep.at("passes").dump();
  EXPECT_TRUE(pipelines.count("mlir_lower")) << rep.at("pipelines").dump();
  EXPECT_TRUE(pipelines.count("llvm_opt")) << rep.at("pipelines").dump();
  // None of the passes is among the plain span names.
  for (const json& row : rep.at("names")) EXPECT_FALSE(passes.count(str(row, "name"))) << row;

  // Both runs' traces merged: the O2 run's misses are all for opt_level.
  const std::string merge = JITSCOPE_MERGE;
  if (merge.empty()) GTEST_SKIP() << "jitscope-merge is not built";
  const fs::path merged = *dir_ / "o3_o2_merged.json";
  const SampleRun m =
      run_program(*dir_, "merge_o3_o2",
                  {merge, first_->trace.string(), o2.trace.string(), "-o", merged.string()});
  ASSERT_EQ(m.exit_code, 0) << m.describe();
  const SampleRun c = run_program(*dir_, "report_caches",
                                  {report, merged.string(), "--section", "caches", "-f", "json"});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const json caches = json::parse(c.out).at("caches");
  ASSERT_EQ(caches.size(), 1u) << caches.dump();
  EXPECT_EQ(str(caches[0], "layer"), "disk_cache");
  std::map<std::string, int> reasons;
  for (const json& r : caches[0].at("reasons")) reasons[str(r, "reason")] = r.value("misses", 0);
  EXPECT_EQ(reasons["opt_level"], kKernels) << caches.dump();
}

// ---- an untraced child process: unexplained time ---------------------------------

// --ptxas-check runs CUDA's ptxas on each kernel's PTX as a child process,
// in its unit but outside every span (as an uninstrumented call out): the
// report's longest unexplained gap of each unit holds the whole of it
// (the sample's own clock around the child, ptxas_check_ns in its record)
// and begins after the unit's last phase, nvjitlink.
TEST(Gaps, AnUntracedPtxasIsItsUnitsLongestUnexplainedGap) {
  const std::string ptxas = JITSCOPE_PTXAS, report = JITSCOPE_REPORT;
  if (ptxas.empty() || report.empty()) {
    GTEST_SKIP() << "needs ptxas and jitscope-report";
  }
  const fs::path dir = test_dir("gaps");
  const SampleRun r = run_sample(
      dir, "run",
      {"--kernels", "3", "--threads", "1", "--no-cache", "--ptxas-check", "--ptxas", ptxas});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::map<std::string, long long> ptxas_ns;  // by kernel
  for (const json& rec : read_json_lines(r.metrics)) {
    if (rec.contains("record")) continue;
    ptxas_ns[str(rec, "kernel")] = rec.value("ptxas_check_ns", -1LL);
  }
  ASSERT_EQ(ptxas_ns.size(), 3u);
  const json trace = load_trace(r.trace);
  const std::map<std::string, const json*> units = units_by_kernel(trace);
  const SampleRun rep =
      run_program(dir, "report",
                  {report, r.trace.string(), "--metrics", r.metrics.string(), "--format", "json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.describe();
  const json report_units = json::parse(rep.out).at("units");
  ASSERT_EQ(report_units.size(), 3u);
  for (const json& u : report_units) {
    const std::string kernel = str(u, "frame");
    SCOPED_TRACE(kernel);
    ASSERT_EQ(units.count(kernel), 1u);
    const long long ns = ptxas_ns.at(kernel);
    EXPECT_GT(ns, 0);
    const std::vector<const json*> link = within(trace, *units.at(kernel), "phase", "nvjitlink");
    ASSERT_EQ(link.size(), 1u);
    const double link_end_us = link[0]->at("ts").get<double>() + link[0]->at("dur").get<double>();
    ASSERT_TRUE(u.at("longest_gap").is_object()) << u.dump();
    const long long gap_ns = u["longest_gap"]["dur_ns"], gap_start = u["longest_gap"]["start_ns"];
    EXPECT_GE(gap_ns, ns) << "the child's whole run is one stretch no span covers";
    EXPECT_GE(u["unexplained_ns"].get<long long>(), ns);
    EXPECT_GE(static_cast<double>(gap_start), link_end_us * 1000 - 2) << "after the last phase";
  }
}

TEST(Gaps, PtxasCheckWithoutAPtxasIsABadOption) {
  const fs::path dir = test_dir("gaps_no_ptxas");
  const SampleRun r = run_sample(dir, "run", {"--ptxas-check", "--ptxas", (dir / "none").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("--ptxas-check: no ptxas to run at"), std::string::npos) << r.describe();
}

// ---- error paths ----------------------------------------------------------------

TEST(Errors, BadOptionsExitWithAMessage) {
  const fs::path dir = test_dir("bad_options");
  const BadOptions cases = {{{"--kernels", "0"}, "--kernels"},
                            {{"--kernels", "25"}, "--kernels"},
                            {{"--threads", "0"}, "--threads"},
                            {{"--opt-level", "0"}, "--opt-level"},
                            {{"--opt-level", "4"}, "--opt-level"},
                            {{"--no-cache", "--cache-dir", "x"}, "--no-cache"},
                            {{"--inject-error", "no_such_kernel"}, "no_such_kernel"},
                            {{"--no-such-option"}, "--no-such-option"}};
  expect_each_rejected(
      cases, [&](const std::vector<std::string>& argv) { return run_sample(dir, "bad", argv); });
}

TEST(Errors, KernelThatDoesNotParseFailsItsUnitNotTheRun) {
  const fs::path dir = test_dir("parse_error");
  const SampleRun r = run_sample(
      dir, "run",
      {"--kernels", "3", "--threads", "2", "--no-cache", "--inject-error", "reduce_b256_i1"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("kernel reduce_b256_i1 failed: MLIR parse of reduce_b256_i1.mlir failed"),
            std::string::npos)
      << r.describe();
  // MLIR's own diagnostic, with the kernel's file name and line.
  EXPECT_TRUE(std::regex_search(r.err, std::regex("reduce_b256_i1\\.mlir\":[0-9]+:[0-9]+\\): use "
                                                  "of value '%zero_f' expects different type")))
      << r.describe();
  EXPECT_NE(r.err.find("1 of 3 kernels failed: reduce_b256_i1"), std::string::npos) << r.describe();
  const std::vector<json> lines = read_json_lines(r.metrics);
  ASSERT_EQ(lines.size(), 3u);
  for (const json& line : lines) {
    if (str(line, "kernel") == "reduce_b256_i1") {
      EXPECT_EQ(str(line, "fail_type"), "mlir_parse") << line.dump();
      EXPECT_EQ(line.find("mlir_lower_us"), line.end()) << line.dump();
    } else {
      EXPECT_EQ(line.find("fail_type"), line.end()) << line.dump();
      EXPECT_GT(line.value("cubin_bytes", 0), 0) << line.dump();
    }
  }
  EXPECT_NO_THROW(load_trace(r.trace));
}

TEST(Errors, CorruptCacheEntryIsAMiss) {
  const fs::path dir = test_dir("corrupt");
  const std::vector<std::string> argv = {"--kernels", "2",           "--threads",
                                         "2",         "--cache-dir", (dir / "cache").string()};
  const SampleRun fill = run_sample(dir, "fill", argv);
  ASSERT_EQ(fill.exit_code, 0) << fill.describe();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir / "cache")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 2u) << "one entry per kernel, no temporary file left";
  fs::resize_file(entries[0], fs::file_size(entries[0]) - 100);  // a torn write

  const SampleRun r = run_sample(dir, "corrupt", argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("is corrupt"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("1 hits, 1 misses"), std::string::npos) << r.out;
  const SampleRun again = run_sample(dir, "again", argv);  // rebuilt and stored again
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_NE(again.out.find("2 hits, 0 misses"), std::string::npos) << again.describe();
}

// ---- --run ------------------------------------------------------------------------

constexpr const char* kSkippedLine = "mlir_gpu: --run skipped: ";

TEST(Run, OneLineWithoutAGpu) {
  const fs::path dir = test_dir("run");
  const SampleRun r = run_sample(dir, "run", {"--kernels", "3", "--run", "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  if (r.err.find(kSkippedLine) != std::string::npos) {
    EXPECT_EQ(lines_of(r.err).size(), 1u) << "only the skipped line\n" << r.describe();
    EXPECT_EQ(r.err.rfind(kSkippedLine, 0), 0u) << r.describe();
  } else {
    EXPECT_NE(r.out.find("3 of 3 kernels ran correctly"), std::string::npos) << r.describe();
  }
}

TEST(Gpu, RunsEveryKernel) {
  const fs::path dir = test_dir("gpu");
  const SampleRun r = run_sample(dir, "gpu", {"--kernels", "24", "--threads", "4", "--run"});
  if (r.err.find(kSkippedLine) != std::string::npos && !require_gpu()) {
    // ctest's entry asks for exit 77 (reported as Skipped); run by hand, a gtest skip.
    if (std::getenv("MLIR_GPU_TEST_SKIP_EXIT") != nullptr) {
      std::printf("SKIP: %s", r.err.c_str());
      std::fflush(stdout);
      std::_Exit(77);
    }
    GTEST_SKIP() << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("24 of 24 kernels ran correctly"), std::string::npos) << r.describe();
  const json trace = load_trace(r.trace);
  EXPECT_EQ(slices(trace, "jitscope", "run matmul_t16_s256").size(), 1u);
  // Each kernel's GPU slice: named as launched (the runner unloads each
  // module, and the driver reuses function handles, which CUPTI's own names
  // follow), and credited to the unit that built it (loaded under a LoadScope).
  // Only with the collector on (not under JITSCOPE_CUPTI=off or another
  // CUPTI tool such as Nsight Systems).
  if (const std::string state = cupti_state(trace); state != "on") {
    std::printf("note: CUPTI is %s: GPU slices not checked\n", state.c_str());
    return;
  }
  const std::map<std::string, const json*> units = units_by_kernel(trace);
  std::size_t kernels = 0;
  for (const json* k : slices(trace, "cuda")) {
    const json& a = args(*k);
    if (!a.contains("grid")) continue;  // not a kernel
    ++kernels;
    const std::string span = str(a, "span");
    ASSERT_EQ(span.rfind("run ", 0), 0u) << k->dump();
    const std::string kernel = span.substr(4);
    EXPECT_EQ(str(*k, "name"), kernel) << k->dump();
    const auto unit = units.find(kernel);
    ASSERT_NE(unit, units.end()) << kernel;
    EXPECT_EQ(str(a, "compiled_by"), str(*unit->second, "name")) << k->dump();
  }
  EXPECT_EQ(kernels, 24u);
}

}  // namespace
