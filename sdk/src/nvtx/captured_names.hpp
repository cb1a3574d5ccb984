// Names that captured events (NVTX, capture_naming.cpp) point at: domains,
// registered strings and category names. Entries are never freed, so a ring
// record may hold a pointer to them and the flusher can read it later; they
// are interned (same name, same entry), so memory grows with the number of
// distinct names, not with the number of events. Always built: the trace
// writer resolves names with or without NVTX.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

struct CapturedDomain;

// What a failure says (`jitscope: <what> failed: <reason>`), here and in
// the NVTX slots that call these.
inline constexpr std::string_view kCreatingCapturedDomain = "NVTX capture: creating a domain";
inline constexpr std::string_view kRegisteringCapturedString = "NVTX capture: registering a string";
inline constexpr std::string_view kNamingCapturedCategory = "NVTX capture: naming a category";

// The domain of jitscope::async_slice's slices (api/async_slice.cpp):
// written as captured async ranges, not counted as NVTX captures.
inline constexpr std::string_view kAsyncSliceDomain = "jitscope.async";

// The NVTX default domain (category "nvtx").
CapturedDomain* captured_default_domain() noexcept;
// The domain named `name`, created on first use; the same pointer for the
// same name. nullptr only when out of memory (and said).
CapturedDomain* captured_domain(std::string_view name) noexcept;
// The domain's name: its events' category in the trace.
const char* captured_domain_name(const CapturedDomain* domain) noexcept;
// True for the domain jitscope itself emits into: its ranges are jitscope's
// own spans, already in the trace.
bool captured_domain_is_self(const CapturedDomain* domain) noexcept;

// A stable copy of `text` registered in `domain`: the same pointer for the
// same text. Past the cap (kMaxCapturedStrings in all) or out of memory
// (said): a fixed "<too many registered strings>" string.
const char* captured_string(CapturedDomain* domain, std::string_view text) noexcept;
inline constexpr std::size_t kMaxCapturedStrings = 1u << 20;

// Names category number `id` of `domain` (renaming is allowed: last wins);
// out of memory is said, and the category may then show no name.
void name_captured_category(CapturedDomain* domain, std::uint32_t id,
                            std::string_view name) noexcept;
// The category's name, or false if it was never named. try_only (a crash
// cycle, where the crashed thread may hold the lock): false if it is locked.
bool captured_category_name(const CapturedDomain* domain, std::uint32_t id, std::string& out,
                            bool try_only = false);

// fork() support: the registry's lock held across fork.
void lock_captured_names_for_fork() noexcept;
void unlock_captured_names_after_fork() noexcept;

// Test support: how many distinct registered strings exist.
std::size_t captured_string_count() noexcept;

}  // namespace jitscope::detail
