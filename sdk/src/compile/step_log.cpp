#include <jitscope/jitscope.hpp>
#include <jitscope/step_log.hpp>

#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "compile/state.hpp"
#include "compile/step_log_internal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

namespace jitscope {
namespace {

struct State {
  std::atomic<int> next_step{1};
  std::mutex sink_mu;
  std::shared_ptr<const StepSink> sink;    // guarded by sink_mu; null: default
  std::mutex progress_mu;                  // also keeps bar writes whole
  CompileProgress* active = nullptr;       // guarded by progress_mu
  int progress_fd = STDERR_FILENO;         // guarded by progress_mu
  std::atomic<int> progress_override{-1};  // -1: use JITSCOPE_PROGRESS, 0 off, 1 on
};

// Immortal: hosts log during exit.
State& state() noexcept { return detail::immortal<State>(); }

bool is_terminal(int fd) noexcept {
  const int saved = errno;
  const bool tty = ::isatty(fd) == 1;
  errno = saved;
  return tty;
}

std::size_t terminal_columns(int fd) noexcept {
  const int saved = errno;
  winsize ws{};
  const bool ok = ::ioctl(fd, TIOCGWINSZ, &ws) == 0;
  errno = saved;
  return ok ? ws.ws_col : 0;
}

// Control bytes (ESC included) would break the line the bar rewrites.
std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

// Cuts `text` to at most `max` code points, never inside a UTF-8 sequence.
void truncate_code_points(std::string& text, std::size_t max) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation
    if (seen == max) {
      text.resize(i);
      return;
    }
    ++seen;
  }
}

bool progress_from_env() noexcept {
  static const bool on = detail::parse_progress_env(std::getenv("JITSCOPE_PROGRESS"));
  return on;
}

bool progress_enabled() noexcept {
  // Relaxed: a lone flag; nothing else is published with it.
  const int o = state().progress_override.load(std::memory_order_relaxed);
  return o >= 0 ? o == 1 : progress_from_env();
}

}  // namespace

namespace detail {

// The parts of CompileProgress that run under State::progress_mu.
struct ProgressAccess {
  static constexpr int kBarWidth = 20;

  // "\r<description> [####----] done/stages label\x1b[K"
  static void render(const CompileProgress& p, std::string& out) {
    std::string text;
    if (!p.description_.empty()) {
      text += p.description_;
      text += ' ';
    }
    const int filled = p.stages_ > 0 ? p.done_ * kBarWidth / p.stages_ : 0;
    text += '[';
    text.append(static_cast<std::size_t>(filled), '#');
    text.append(static_cast<std::size_t>(kBarWidth - filled), '-');
    text += "] ";
    text += std::to_string(p.done_);
    text += '/';
    text += std::to_string(p.stages_);
    if (!p.label_.empty()) {
      text += ' ';
      text += p.label_;
    }
    // A wrapped line cannot be rewritten with '\r': stay inside the width.
    if (const std::size_t cols = terminal_columns(p.fd_); cols > 1) {
      truncate_code_points(text, cols - 1);
    }
    out += '\r';
    out += text;
    out += "\x1b[K";
  }

  // Runs `say` (a `jitscope:` line) with a bar drawn on stderr cleared first
  // and redrawn after, as write_stderr_line does for step lines.
  // `locked`: the caller holds progress_mu.
  template <bool kLocked = false>
  static void around_bar(const auto& say) noexcept {
    State& s = state();
    std::unique_lock<std::mutex> lock(s.progress_mu, std::defer_lock);
    if constexpr (!kLocked) {
      if (!guarded_quiet([&] { lock.lock(); })) {
        say();  // the lock failed: say it anyway
        return;
      }
    }
    const CompileProgress* bar = s.active;
    const bool redraw = bar != nullptr && bar->drawn_ && bar->fd_ == STDERR_FILENO;
    if (redraw) write_all(STDERR_FILENO, "\r\x1b[K", 4);
    say();
    if (redraw) draw(*bar);
  }

  static void draw(const CompileProgress& p) noexcept {
    // Quiet: failing, this frame is skipped and the next advance redraws it
    // (nothing is lost), and a line now would land inside the bar.
    guarded_quiet([&] {
      std::string out;
      render(p, out);
      write_all(p.fd_, out.data(), out.size());
    });
  }

  static void advance(CompileProgress& p, std::string_view label) noexcept {
    if (p.done_ < p.stages_) ++p.done_;
    if (!guarded(
            "labelling the progress bar", [&] { p.label_ = printable(label); },
            [](const auto& say) noexcept { around_bar<true>(say); })) {
      p.label_.clear();  // a bar without a label
    }
    if (p.drawn_) draw(p);
  }

  // Stderr gets `line`; a bar drawn there is cleared first and redrawn
  // after, all in one write, so the line never lands inside the bar.
  static void write_stderr_line(std::string_view line) noexcept {
    State& s = state();
    // Failing, the line is dropped (and the lock released before the report).
    guarded(
        "writing a step log line",
        [&] {
          std::lock_guard<std::mutex> lock(s.progress_mu);
          const CompileProgress* bar = s.active;
          const bool redraw = bar != nullptr && bar->drawn_ && bar->fd_ == STDERR_FILENO;
          std::string out;
          out.reserve(line.size() + 8);
          if (redraw) out += "\r\x1b[K";
          out += line;
          out += '\n';
          if (redraw) render(*bar, out);
          write_all(STDERR_FILENO, out.data(), out.size());
        },
        [](const auto& say) noexcept { around_bar(say); });
  }

  static void begin(CompileProgress& p) noexcept {
    const bool enabled = progress_enabled();  // outside the lock: may log
    State& s = state();
    std::lock_guard<std::mutex> lock(s.progress_mu);
    if (s.active != nullptr) return;  // another bar is active: this one is inert
    s.active = &p;
    p.fd_ = s.progress_fd;
    p.drawn_ = enabled && is_terminal(p.fd_);
    if (p.drawn_) draw(p);
  }

  static void end(CompileProgress& p) noexcept {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.progress_mu);
    if (p.drawn_) write_all(p.fd_, "\n", 1);
    if (s.active == &p) s.active = nullptr;
    p.drawn_ = false;
  }

  static void advance_active(std::string_view label) noexcept {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.progress_mu);
    if (s.active != nullptr) advance(*s.active, label);
  }
};

void lock_step_log_for_fork() noexcept {
  (void)progress_from_env();  // its one-time initialization is never in flight across fork()
  State& s = state();
  s.sink_mu.lock();
  s.progress_mu.lock();
}

void unlock_step_log_after_fork() noexcept {
  State& s = state();
  s.progress_mu.unlock();
  s.sink_mu.unlock();
}

void set_progress_fd(int fd) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.progress_mu);
  s.progress_fd = fd;
}

bool parse_progress_env(const char* value) noexcept {
  if (value == nullptr || std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") == 0) return true;
  // Quiet: failing to quote the value, the line below says the same without it.
  if (!guarded_quiet([&] {
        log_line("JITSCOPE_PROGRESS='" + printable(value) + "' is not 0 or 1; progress bar off");
      })) {
    log_line("JITSCOPE_PROGRESS is not 0 or 1; progress bar off");
  }
  return false;
}

}  // namespace detail

void set_step_sink(StepSink sink) noexcept {
  std::shared_ptr<const StepSink> next;
  // Failing, the old sink stays.
  if (sink && !detail::guarded("setting the step sink",
                               [&] { next = std::make_shared<const StepSink>(std::move(sink)); })) {
    return;
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.sink_mu);
  s.sink.swap(next);
  // The old sink is released here under the lock; a log() that copied it
  // keeps it alive until its call returns.
}

void reset_steps() noexcept {
  // Relaxed: the counter only hands out distinct numbers.
  state().next_step.store(1, std::memory_order_relaxed);
}

void set_progress_enabled(bool enabled) noexcept {
  // Relaxed: a lone flag; nothing else is published with it.
  state().progress_override.store(enabled ? 1 : 0, std::memory_order_relaxed);
}

StepLogger::StepLogger(std::string_view stage) noexcept
    // Relaxed: only distinct numbers matter, not an order with other memory.
    : step_(state().next_step.fetch_add(1, std::memory_order_relaxed)) {
  // Failing, the logger works with an empty stage.
  detail::guarded(
      "naming a compile step", [&] { stage_.assign(stage); },
      [](const auto& say) noexcept { detail::ProgressAccess::around_bar(say); });
  detail::ProgressAccess::advance_active(stage);
}

void StepLogger::log(std::string_view message, LogLevel level) const noexcept {
  if (active()) {
    instant(std::string_view("step"), {{"step", step_}, {"message", message}});
  }
  State& s = state();
  std::shared_ptr<const StepSink> sink;
  {
    std::lock_guard<std::mutex> lock(s.sink_mu);
    sink = s.sink;
  }
  if (!sink && level < LogLevel::kInfo) return;  // the default sink drops it
  std::string line;
  if (!detail::guarded(
          "writing a step log line",
          [&] {
            line = "Step " + std::to_string(step_) + ": ";
            line.append(message);
          },
          [](const auto& say) noexcept { detail::ProgressAccess::around_bar(say); })) {
    return;  // the line is dropped
  }
  if (!sink) {
    detail::ProgressAccess::write_stderr_line(line);
    return;
  }
  // Quiet: the sink is the host's own logger, and step_log.hpp promises that
  // an exception from it is caught and ignored; it must not reach the host's
  // compile path.
  detail::guarded_quiet([&] { (*sink)(level, line); });
}

CompileProgress::CompileProgress(std::string_view description, int stages) noexcept
    : stages_(stages < 0 ? 0 : stages) {
  // Failing, a bar without a description.
  detail::guarded(
      "describing the progress bar", [&] { description_ = printable(description); },
      [](const auto& say) noexcept { detail::ProgressAccess::around_bar(say); });
  detail::ProgressAccess::begin(*this);
}

CompileProgress::~CompileProgress() { detail::ProgressAccess::end(*this); }

void CompileProgress::advance(std::string_view label) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.progress_mu);
  detail::ProgressAccess::advance(*this, label);
}

int CompileProgress::done() const noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.progress_mu);
  return done_;
}

}  // namespace jitscope
