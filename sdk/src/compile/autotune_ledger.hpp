// What a tuning session's metrics record sums (<jitscope/autotune.hpp>):
// its trials' steps, results, failures and units, kept per open Autotune
// and written as one "record":"autotune" line when it ends. Steps may end
// on any thread, so the figures live here, by the session's id, under one
// lock: every call is on autotuning's cold path (a library call that
// already copies strings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

// A tuning session begins: `unit` is the compile id of the unit current on
// its thread ("" if none), `begin` its start on the session's clock. Kept
// only when the session writes a metrics file (else every call below finds
// nothing).
void ledger_open(std::uint64_t tune, std::string_view kernel, std::string unit,
                 std::uint32_t session, std::uint64_t begin) noexcept;
// Each of these is ignored for a tune the ledger does not hold (ended, or
// opened while out of memory).
void ledger_trial(std::uint64_t tune, std::uint32_t trial, std::string_view config) noexcept;
void ledger_step(std::uint64_t tune, std::uint32_t trial, bool benchmark, std::uint64_t ns,
                 std::uint64_t end) noexcept;
void ledger_unit(std::uint64_t tune, std::uint32_t trial, std::string_view compile_id) noexcept;
void ledger_result(std::uint64_t tune, std::uint32_t trial, double value) noexcept;
void ledger_failed(std::uint64_t tune, std::uint32_t trial, std::string_view reason) noexcept;
// The session ends at `end` (the session's clock) after `trials` trials;
// `winner` < 0: none. Forgets the tune; with `write`, its line goes to the
// metrics file (when the jitscope session writes one).
void ledger_close(std::uint64_t tune, std::uint32_t trials, std::int64_t winner, std::uint64_t end,
                  bool write) noexcept;

// The ledger's lock across fork() (compile/fork.cpp): no other lock is
// taken while it is held.
void lock_ledger_for_fork() noexcept;
void unlock_ledger_after_fork() noexcept;
// In a forked child, after the unlock: the parent's tuning sessions end
// there, not here.
void ledger_forget_in_child() noexcept;
// Tuning sessions the ledger holds (for tests: 0 once every Autotune ended).
std::size_t ledger_open_count() noexcept;

// The record lists its first kLedgerRowsKept trials as rows; later ones
// count in its sums only ("trial_rows_dropped"). Each text (kernel, config,
// failure, unit id) is kept up to kLedgerTextBytes (cut between
// characters, then "…"), and a trial's first kLedgerUnitsKept units: a
// line stays a few MiB at most, whatever the host passes.
inline constexpr std::uint32_t kLedgerRowsKept = 1000;
inline constexpr std::size_t kLedgerTextBytes = 1024;
inline constexpr std::size_t kLedgerUnitsKept = 64;

}  // namespace jitscope::detail
