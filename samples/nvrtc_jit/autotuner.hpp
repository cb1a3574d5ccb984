// On the GPU: times every loaded variant of each family on the same inputs
// (CUDA events, a warm-up launch then `reps` launches), checks each
// variant's result against a CPU reference, picks the fastest correct one
// per family, then runs the winners once more.
//
// Trace: a span "autotune" with one "autotune <family>" span per family
// (args: variants, winner, winner_us), and inside it one span per variant
// (args: avg_us, correct); then "run winners" with one "run <kernel>" each.
// Each family is a jitscope::Autotune session: a trial per variant (its
// parameters as the config, its compile unit as its compile, the timed
// launches and the check as its benchmark, its µs per launch as the
// result), the fastest correct one the winner: jitscope-report's autotune
// section.
#pragma once

#include "compile_pool.hpp"

#include <string>
#include <vector>

namespace nvrtc_jit {

struct FamilyWinner {
  std::string family;
  std::string kernel;  // the winner's name
  double avg_us = 0;   // its mean time per launch
  int variants = 0;    // variants timed
};

// False after printing why (a CUDA call failed or a result was wrong); the
// winners found so far are still in *winners. Everything allocated is freed.
bool autotune_and_run(const std::vector<BuiltKernel>& built, int reps,
                      std::vector<FamilyWinner>* winners);

}  // namespace nvrtc_jit
