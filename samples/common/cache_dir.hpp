// The samples' disk caches: their folder, and the one warning when they
// cannot write. `sample` is the program's name, the prefix of the line.
#pragma once

#include <atomic>
#include <string>

namespace sample_common {

// Creates `dir` if needed; false (warned once, through `warned`) when it
// cannot be made or is not a folder.
bool prepare_cache_dir(const char* sample, std::atomic<bool>& warned, const std::string& dir);

// The cache cannot write: said once per run, whichever thread sees it first.
void warn_cache_write_once(const char* sample, std::atomic<bool>& warned, const std::string& why);

}  // namespace sample_common
