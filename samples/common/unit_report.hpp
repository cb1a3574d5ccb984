// What a sample says about a kernel's build: fields of the open compile
// unit, and the failure text on stderr. `sample` is the program's name, the
// prefix of each stderr line ("nvrtc_jit: ...").
#pragma once

#include <jitscope/compile.hpp>

#include <string>
#include <string_view>

namespace sample_common {

// A field of the open unit's record and of its trace slice (the unit is the
// outermost event on this thread). Skipped without a session: there is no
// metrics file to write it to, and the JITSCOPE_DISABLE build pays nothing.
void record_field(const char* sample, std::string_view key, const jitscope::FieldValue& value);

// Says why `kernel` failed in `stage`, with the tool's log (trailing
// newlines off), as one write.
void report_failure(const char* sample, const std::string& kernel, std::string_view stage,
                    const std::string& error, std::string_view log);

}  // namespace sample_common
