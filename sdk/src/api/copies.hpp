// More than one copy of the SDK in a process (a module that links the
// static library beside libjitscope.so, as Tracy's and Perfetto's users
// meet it) splits the trace: each copy has its own session word, rings and
// current compile unit. Each copy carries an ELF note, so a copy being
// loaded can find the others and say so.
#pragma once

#include <string>
#include <vector>

namespace jitscope::detail {

// The objects (paths) that hold another copy, found by their notes; empty
// when there is none, or when this copy's own note cannot be found.
std::vector<std::string> other_jitscope_copies();

// One `jitscope:` line naming every copy, when there are several.
void say_other_copies();

}  // namespace jitscope::detail
