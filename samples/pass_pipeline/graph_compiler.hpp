// The pretend graph compiler: one graph compiled as one jitscope CompileUnit
// (parse, passes, codegen on the worker pool, caches), and the runtime work
// done outside any unit. main.cpp says what the trace shows; this file pair
// is where the compile-unit API is used, main.cpp only drives it.
#pragma once

#include "mock_graph.hpp"
#include "worker_pool.hpp"

#include <jitscope/jitscope.hpp>

#include <string_view>

namespace pass_pipeline {

// Event data refused where this program expects it to be accepted: a warning
// line now, counted for main's exit status.
void expect_ok(const jitscope::Status& st, const char* what);
int refused_count();

// Whether units keep their artifacts (graph dumps, kernel sources, log):
// true when the session has an artifacts folder. Call before compiling.
void set_keep_artifacts(bool on);

// The phase keys are registered at load; this checks each one's options.
void check_phase_keys();

struct Outcome {
  bool failed = false;
};

// Compiles one graph as one compile unit (main thread; kernels on `pool`).
Outcome compile(const Graph& g, WorkerPool& pool, std::string_view recompile_reason = {});

// Runtime work outside any unit: its column goes to the runtime record.
void load_cached_artifacts();

}  // namespace pass_pipeline
