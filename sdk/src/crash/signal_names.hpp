// The signals a flight-recorder snapshot may take (Config::snapshot_signal):
// those a process does not use for itself by default; the crash signals
// are the crash handler's. Header-only: the config's checks use them too.
#pragma once

#include <signal.h>

#include <charconv>
#include <string>
#include <string_view>

namespace jitscope::detail {

struct NamedSignal {
  const char* name;
  int signo;
};
inline constexpr NamedSignal kSnapshotSignals[] = {{"SIGUSR1", SIGUSR1},
                                                   {"SIGUSR2", SIGUSR2},
                                                   {"SIGHUP", SIGHUP},
                                                   {"SIGWINCH", SIGWINCH},
                                                   {"SIGURG", SIGURG}};

// "SIGUSR2" for its number, "signal N" for others.
inline std::string signal_name(int signo) {
  for (const NamedSignal& s : kSnapshotSignals) {
    if (s.signo == signo) return s.name;
  }
  return "signal " + std::to_string(signo);
}

// The number of "SIGUSR2", "USR2" or "12" among kSnapshotSignals; 0 if none.
inline int signal_number(std::string_view text) noexcept {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  const bool number = ec == std::errc() && end == text.data() + text.size();
  if (!number && text.substr(0, 3) == "SIG") text.remove_prefix(3);
  for (const NamedSignal& s : kSnapshotSignals) {
    if (number ? s.signo == n : text == std::string_view(s.name).substr(3)) return s.signo;
  }
  return 0;
}

}  // namespace jitscope::detail
