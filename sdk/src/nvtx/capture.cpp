// jitscope as an NVTX tool: every CORE and CORE2 slot of an NVTX instance
// points here once the instance initializes with jitscope as its injection
// (NVTX_INJECTION64_PATH=libjitscope_nvtx.so, or the static form below), so
// ranges, marks and names that other code emits land in the trace.
//
// Push/pop ranges are kept on a per-thread stack and written whole at the
// pop (one kCaptured record), so they never disturb jitscope's own span
// stack, whatever the interleaving. Start/end ranges may end on another
// thread: a process-wide map keeps them from start to end. Without a session
// the handlers only keep push/pop balance (so a pop inside a later session
// is not miscounted) and return.
#define NVTX_NO_IMPL  // a tool: types only, not the NVTX implementation
#include <nvtx3/nvToolsExt.h>

#include "nvtx/captured_names.hpp"
#include "ring/producer.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "nvtx/nvtx.hpp"
#include "base/per_thread.hpp"

#include <jitscope/nvtx.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitscope::detail {

constinit thread_local bool t_nvtx_emitting = false;

namespace {

// ---- state ----

// What the capture lost or could not match (rare paths: a shared atomic is
// fine). What it wrote is counted by the trace writer, off the hot path.
struct Counters {
  // relaxed: independent tallies, read at session end.
  std::atomic<std::uint64_t> thread_names{0}, unbalanced_pops{0}, unknown_ends{0}, dropped{0};
};
struct CountersTag;
Counters& counters() noexcept { return immortal<Counters, CountersTag>(); }
void tally(std::atomic<std::uint64_t>& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }

std::atomic<bool> g_capture_on{true};  // per session config; relaxed: a switch

// The NVTX instances attached (their export table functions), for status
// and for emission to recognise its own instance. Few: one per library.
struct Attached {
  std::mutex mutex;
  std::vector<const void*> instances;
};
struct AttachedTag;
Attached& attached() noexcept { return immortal<Attached, AttachedTag>(); }

// A push not yet popped.
struct OpenRange {
  const CapturedDomain* domain;
  std::uint32_t session;  // 0: pushed with no session; never written
  std::uint64_t start;
  const char* name;       // interned, or nullptr: `name_len` bytes at `name_off` in the arena
  std::uint32_t name_off;
  std::uint32_t name_len;
  ValueType payload_type;
  std::uint64_t payload;
  std::uint32_t category;
};

// Deeper pushes on one thread are counted as dropped, and as many pops are
// then taken for them: a program that pushes without popping cannot grow
// memory without bound.
constexpr std::size_t kMaxOpenPerThread = 4096;
constexpr std::size_t kMaxNameBytes = 4096;  // longer captured names are cut

struct CaptureThread {
  std::vector<OpenRange> stack;
  std::string arena;       // copied names of open ranges, in push order
  std::size_t overflow = 0;  // pushes beyond kMaxOpenPerThread not yet popped
  std::string scratch;     // wide-to-UTF-8 conversions
};
// nullptr while the thread exits: NVTX calls from teardown are then ignored.
using CaptureThreadState = PerThread<CaptureThread, struct CaptureThreadTag>;

int thread_tid() noexcept {
  static constinit thread_local int tid = 0;
  if (tid == 0) tid = static_cast<int>(::syscall(SYS_gettid));
  return tid;
}

// A start/end range in flight.
struct OpenAsync {
  std::uint64_t start;
  int tid;
  const CapturedDomain* domain;
  const char* name;
  std::string dynamic_name;
  ValueType payload_type;
  std::uint64_t payload;
  std::uint32_t category;
};
constexpr std::size_t kMaxOpenAsync = 1u << 20;
// Range ids: session generation in bits 40..61, a counter below; bit 62 set
// when the range was not tracked (no session, or too many open), so its end
// is expected to be unknown.
constexpr std::uint64_t kUntrackedBit = std::uint64_t{1} << 62;
constexpr unsigned kIdGenerationShift = 40;
struct AsyncMap {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, OpenAsync> open;
  std::atomic<std::uint64_t> next{1};
};
struct AsyncTag;
AsyncMap& async_map() noexcept { return immortal<AsyncMap, AsyncTag>(); }

// The low 22 bits of the session's generation (its full 30 do not fit
// beside the 40-bit counter and the untracked bit); sessions 4 M apart could
// share them, which only matters for a range left open that long.
std::uint64_t generation_of(std::uint32_t session) noexcept {
  return (session >> kSessionGenerationShift) & ((1u << 22) - 1);
}

// The session to record into, or 0: none, capture off, or this call is
// jitscope's own emission (already in the trace as a span).
std::uint32_t capture_session() noexcept {
  const std::uint32_t s = session_word();
  if (s == 0 || !g_capture_on.load(std::memory_order_relaxed)) return 0;
  return s;
}

// ---- attributes ----

struct Message {
  const char* name = nullptr;   // interned or a literal
  std::string_view dynamic;     // valid during the call only
};

void wide_to_utf8(const wchar_t* w, std::string& out) {
  out.clear();
  if (w == nullptr) return;
  for (; *w != 0 && out.size() < kMaxNameBytes; ++w) {
    auto c = static_cast<std::uint32_t>(*w);
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
}

std::string utf8(const wchar_t* w) {
  std::string out;
  wide_to_utf8(w, out);
  return out;
}

std::string_view bounded(const char* s) noexcept {
  if (s == nullptr) return {};
  return std::string_view(s, ::strnlen(s, kMaxNameBytes));
}

Message ascii_message(const char* s) noexcept {
  Message m;
  if (s == nullptr) {
    m.name = "(unnamed)";
  } else {
    m.dynamic = bounded(s);
  }
  return m;
}

Message wide_message(const wchar_t* w) {
  Message m;
  CaptureThread* t = CaptureThreadState::get();
  if (w == nullptr || t == nullptr) {
    m.name = "(unnamed)";
    return m;
  }
  wide_to_utf8(w, t->scratch);
  m.dynamic = t->scratch;
  return m;
}

struct Attributes {
  Message message;
  ValueType payload_type = ValueType::kNone;
  std::uint64_t payload = 0;
  std::uint32_t category = 0;
};

// Reads only what the struct's own `size` says it holds (older NVTX
// versions pass shorter ones).
Attributes read_attributes(const nvtxEventAttributes_t* a) {
  Attributes out;
  out.message.name = "(unnamed)";
  if (a == nullptr) return out;
  const std::size_t size = a->size;
  const auto holds = [size](std::size_t offset, std::size_t bytes) {
    return size >= offset + bytes;
  };
  if (holds(offsetof(nvtxEventAttributes_t, category), sizeof a->category)) {
    out.category = a->category;
  }
  if (holds(offsetof(nvtxEventAttributes_t, payload), sizeof a->payload)) {
    const auto& p = a->payload;
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        out.payload_type = ValueType::kUint;
        out.payload = p.ullValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        out.payload_type = ValueType::kInt;
        std::memcpy(&out.payload, &p.llValue, sizeof out.payload);
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        out.payload_type = ValueType::kDouble;
        std::memcpy(&out.payload, &p.dValue, sizeof out.payload);
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        out.payload_type = ValueType::kUint;
        out.payload = p.uiValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT32: {
        out.payload_type = ValueType::kInt;
        const std::int64_t v = p.iValue;
        std::memcpy(&out.payload, &v, sizeof out.payload);
        break;
      }
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        out.payload_type = ValueType::kDouble;
        const double v = p.fValue;
        std::memcpy(&out.payload, &v, sizeof out.payload);
        break;
      }
      default:
        break;  // none, or an extended payload this tool does not read
    }
  }
  if (holds(offsetof(nvtxEventAttributes_t, message), sizeof a->message)) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII: out.message = ascii_message(a->message.ascii); break;
      case NVTX_MESSAGE_TYPE_UNICODE: out.message = wide_message(a->message.unicode); break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        // Handles come from DomainRegisterString below: interned strings.
        if (a->message.registered != nullptr) {
          out.message.name = reinterpret_cast<const char*>(a->message.registered);
        }
        break;
      default: break;
    }
  }
  return out;
}

Attributes message_only(Message m) {
  Attributes a;
  a.message = m;
  return a;
}

CapturedDomain* domain_of(nvtxDomainHandle_t d) noexcept {
  return d != nullptr ? reinterpret_cast<CapturedDomain*>(d) : captured_default_domain();
}

// ---- events ----

int push(CapturedDomain* domain, const Attributes& a) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return 0;
  CaptureThread* state = CaptureThreadState::get();
  if (state == nullptr) return 0;
  try {
    CaptureThread& t = *state;
    if (t.stack.size() >= kMaxOpenPerThread) {
      ++t.overflow;
      if (capture_session() != 0) tally(counters().dropped);
      return static_cast<int>(t.stack.size() + t.overflow - 1);
    }
    const std::uint32_t s = capture_session();
    OpenRange r{domain, s, s != 0 ? read_clock(s) : 0, a.message.name,
                static_cast<std::uint32_t>(t.arena.size()), 0, a.payload_type, a.payload,
                a.category};
    if (r.name == nullptr && s != 0) {  // a range with no session is never written
      r.name_len = static_cast<std::uint32_t>(a.message.dynamic.size());
      t.arena.append(a.message.dynamic);
    }
    t.stack.push_back(r);
    return static_cast<int>(t.stack.size() - 1);
  } catch (...) {
    return -1;  // out of memory: this range is not kept
  }
}

int pop(const CapturedDomain* domain) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return 0;
  CaptureThread* state = CaptureThreadState::existing();
  if (state == nullptr) {  // nothing was ever pushed on this thread, or it is exiting
    if (!CaptureThreadState::gone() && capture_session() != 0) tally(counters().unbalanced_pops);
    return -1;
  }
  CaptureThread& t = *state;
  if (t.overflow > 0) {
    --t.overflow;
    return static_cast<int>(t.stack.size() + t.overflow);
  }
  // The innermost open range of this domain: NVTX nests per domain.
  std::size_t i = t.stack.size();
  while (i > 0 && t.stack[i - 1].domain != domain) --i;
  const std::uint32_t s = capture_session();
  if (i == 0) {
    if (s != 0) tally(counters().unbalanced_pops);
    return -1;
  }
  const OpenRange r = t.stack[i - 1];
  if (r.session != 0 && r.session == s) {
    CapturedEvent e;
    e.kind = CapturedKind::kRange;
    e.start_ts = r.start;
    e.end_ts = read_clock(s);
    e.name = r.name;
    if (r.name == nullptr) e.dynamic_name = std::string_view(t.arena).substr(r.name_off, r.name_len);
    e.domain = r.domain;
    e.payload_type = r.payload_type;
    e.payload = r.payload;
    e.category = r.category;
    emit_captured(s, e);  // a full ring counts it in events_dropped
  } else if (s != 0) {
    tally(counters().dropped);  // pushed before this session began
  }
  t.stack.erase(t.stack.begin() + static_cast<std::ptrdiff_t>(i - 1));
  // The arena holds the copied names of the ranges still open, in push
  // order: it ends where the last of them ends.
  std::size_t keep = 0;
  for (std::size_t k = t.stack.size(); k > 0; --k) {
    if (t.stack[k - 1].name == nullptr) {
      keep = t.stack[k - 1].name_off + t.stack[k - 1].name_len;
      break;
    }
  }
  t.arena.resize(keep);
  return static_cast<int>(t.stack.size());
}

void mark(const CapturedDomain* domain, const Attributes& a) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return;
  const std::uint32_t s = capture_session();
  if (s == 0) return;
  CapturedEvent e;
  e.kind = CapturedKind::kMark;
  e.start_ts = e.end_ts = read_clock(s);
  e.name = a.message.name;
  e.dynamic_name = a.message.dynamic;
  e.domain = domain;
  e.payload_type = a.payload_type;
  e.payload = a.payload;
  e.category = a.category;
  emit_captured(s, e);
}

nvtxRangeId_t range_start(const CapturedDomain* domain, const Attributes& a) noexcept {
  AsyncMap& m = async_map();
  // relaxed: ids only need to be unique.
  const std::uint64_t n = m.next.fetch_add(1, std::memory_order_relaxed) &
                          ((std::uint64_t{1} << kIdGenerationShift) - 1);
  const std::uint32_t s =
      t_nvtx_emitting || captured_domain_is_self(domain) ? 0 : capture_session();
  if (s == 0) return n | kUntrackedBit;
  const std::uint64_t id = (generation_of(s) << kIdGenerationShift) | n;
  try {
    OpenAsync open{read_clock(s), thread_tid(), domain, a.message.name, {}, a.payload_type,
                   a.payload, a.category};
    if (open.name == nullptr) open.dynamic_name.assign(a.message.dynamic);
    std::lock_guard<std::mutex> lock(m.mutex);
    if (m.open.size() >= kMaxOpenAsync) {
      tally(counters().dropped);
      return id | kUntrackedBit;
    }
    m.open.emplace(id, std::move(open));
    return id;
  } catch (...) {
    tally(counters().dropped);
    return id | kUntrackedBit;
  }
}

void range_end(nvtxRangeId_t id) noexcept {
  if (t_nvtx_emitting) return;
  if ((id & kUntrackedBit) != 0) return;  // started with no session: nothing to write
  const std::uint32_t s = capture_session();
  AsyncMap& m = async_map();
  OpenAsync open;
  bool found = false;
  try {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (auto it = m.open.find(id); it != m.open.end()) {
      open = std::move(it->second);
      m.open.erase(it);
      found = true;
    }
  } catch (...) {
    return;
  }
  if (s == 0) return;
  const std::uint64_t generation = id >> kIdGenerationShift;
  if (generation != generation_of(s)) {
    // Ids carry the generation of the session that started them (never 0):
    // one from an earlier session lost its entry when this one began.
    tally(generation != 0 ? counters().dropped : counters().unknown_ends);
    return;
  }
  if (!found) {
    tally(counters().unknown_ends);  // never started, or ended twice
    return;
  }
  CapturedEvent e;
  e.kind = CapturedKind::kAsyncRange;
  e.start_ts = open.start;
  e.end_ts = read_clock(s);
  e.name = open.name;
  e.dynamic_name = open.dynamic_name;
  e.domain = open.domain;
  e.payload_type = open.payload_type;
  e.payload = open.payload;
  e.category = open.category;
  // The counter part only: unique within the session (the file), and below
  // 2^53, so JSON readers that parse numbers as doubles keep it exact.
  e.id = id & ((std::uint64_t{1} << kIdGenerationShift) - 1);
  e.tid = open.tid;
  emit_captured(s, e);
}

void name_thread(std::uint32_t tid, Message m) noexcept {
  if (t_nvtx_emitting) return;
  const std::uint32_t s = capture_session();
  if (s == 0) return;  // capture off: other code does not rename jitscope's threads
  const std::string_view name = m.name != nullptr ? std::string_view(m.name) : m.dynamic;
  if (static_cast<int>(tid) == thread_tid()) {
    set_thread_name(name);  // also remembered for later sessions
    tally(counters().thread_names);
    return;
  }
  CapturedEvent e;
  e.kind = CapturedKind::kThreadName;
  e.dynamic_name = name;
  e.domain = captured_default_domain();
  e.tid = static_cast<std::int32_t>(tid);
  if (emit_captured(s, e)) tally(counters().thread_names);
}

// ---- the CORE slots ----

void NVTX_API core_mark_ex(const nvtxEventAttributes_t* a) noexcept {
  try { mark(captured_default_domain(), read_attributes(a)); } catch (...) {}
}
void NVTX_API core_mark_a(const char* s) noexcept {
  mark(captured_default_domain(), message_only(ascii_message(s)));
}
void NVTX_API core_mark_w(const wchar_t* s) noexcept {
  try { mark(captured_default_domain(), message_only(wide_message(s))); } catch (...) {}
}
nvtxRangeId_t NVTX_API core_range_start_ex(const nvtxEventAttributes_t* a) noexcept {
  try { return range_start(captured_default_domain(), read_attributes(a)); } catch (...) { return 0; }
}
nvtxRangeId_t NVTX_API core_range_start_a(const char* s) noexcept {
  return range_start(captured_default_domain(), message_only(ascii_message(s)));
}
nvtxRangeId_t NVTX_API core_range_start_w(const wchar_t* s) noexcept {
  try { return range_start(captured_default_domain(), message_only(wide_message(s))); } catch (...) { return 0; }
}
void NVTX_API core_range_end(nvtxRangeId_t id) noexcept { range_end(id); }
int NVTX_API core_range_push_ex(const nvtxEventAttributes_t* a) noexcept {
  try { return push(captured_default_domain(), read_attributes(a)); } catch (...) { return -1; }
}
int NVTX_API core_range_push_a(const char* s) noexcept {
  return push(captured_default_domain(), message_only(ascii_message(s)));
}
int NVTX_API core_range_push_w(const wchar_t* s) noexcept {
  try { return push(captured_default_domain(), message_only(wide_message(s))); } catch (...) { return -1; }
}
int NVTX_API core_range_pop() noexcept { return pop(captured_default_domain()); }
void NVTX_API core_name_category_a(std::uint32_t id, const char* name) noexcept {
  name_captured_category(captured_default_domain(), id, bounded(name));
}
void NVTX_API core_name_category_w(std::uint32_t id, const wchar_t* name) noexcept {
  try {
    name_captured_category(captured_default_domain(), id, utf8(name));
  } catch (...) {
  }
}
void NVTX_API core_name_thread_a(std::uint32_t tid, const char* name) noexcept {
  name_thread(tid, ascii_message(name));
}
void NVTX_API core_name_thread_w(std::uint32_t tid, const wchar_t* name) noexcept {
  try { name_thread(tid, wide_message(name)); } catch (...) {}
}

// ---- the CORE2 (domain) slots ----

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  try { mark(domain_of(d), read_attributes(a)); } catch (...) {}
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d,
                                             const nvtxEventAttributes_t* a) noexcept {
  try { return range_start(domain_of(d), read_attributes(a)); } catch (...) { return 0; }
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { range_end(id); }
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  try { return push(domain_of(d), read_attributes(a)); } catch (...) { return -1; }
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) noexcept { return pop(domain_of(d)); }

// Resources name objects for other NVTX modules this tool does not read; a
// stable non-null handle keeps callers that check for null happy.
struct ResourceTag {};
ResourceTag g_resource;
nvtxResourceHandle_t NVTX_API domain_resource_create(nvtxDomainHandle_t,
                                                     nvtxResourceAttributes_t*) noexcept {
  return reinterpret_cast<nvtxResourceHandle_t>(&g_resource);
}
void NVTX_API domain_resource_destroy(nvtxResourceHandle_t) noexcept {}
void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, std::uint32_t id,
                                     const char* name) noexcept {
  name_captured_category(domain_of(d), id, bounded(name));
}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, std::uint32_t id,
                                     const wchar_t* name) noexcept {
  try {
    name_captured_category(domain_of(d), id, utf8(name));
  } catch (...) {
  }
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d,
                                                     const char* s) noexcept {
  return reinterpret_cast<nvtxStringHandle_t>(
      const_cast<char*>(captured_string(domain_of(d), bounded(s))));
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d,
                                                     const wchar_t* s) noexcept {
  try {
    return reinterpret_cast<nvtxStringHandle_t>(
        const_cast<char*>(captured_string(domain_of(d), utf8(s))));
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) noexcept {
  return reinterpret_cast<nvtxDomainHandle_t>(captured_domain(bounded(name)));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) noexcept {
  try {
    return reinterpret_cast<nvtxDomainHandle_t>(captured_domain(utf8(name)));
  } catch (...) {
    return nullptr;
  }
}
// Domains are interned and never freed: records may still point at them.
void NVTX_API domain_destroy(nvtxDomainHandle_t) noexcept {}
void NVTX_API initialize(const void*) noexcept {}

template <class F>
NvtxFunctionPointer slot(F f) noexcept {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

// Writes `fns[i]` into slot i of the module's table (slot 0 is unused).
// Patches only the slots this NVTX version has.
bool patch(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module,
           const NvtxFunctionPointer* fns, unsigned count) noexcept {
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (unsigned i = 1; i < count && i < size; ++i) {
    if (table[i] != nullptr && fns[i] != nullptr) *table[i] = fns[i];
  }
  return true;
}

int attach(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (get_export_table == nullptr) return 0;
  const auto* cb =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks) ||
      cb->GetModuleFunctionTable == nullptr) {
    log_unique("NVTX capture: an NVTX instance offers no callback table; its ranges are not captured");
    return 0;
  }
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  core[NVTX_CBID_CORE_MarkEx] = slot(&core_mark_ex);
  core[NVTX_CBID_CORE_MarkA] = slot(&core_mark_a);
  core[NVTX_CBID_CORE_MarkW] = slot(&core_mark_w);
  core[NVTX_CBID_CORE_RangeStartEx] = slot(&core_range_start_ex);
  core[NVTX_CBID_CORE_RangeStartA] = slot(&core_range_start_a);
  core[NVTX_CBID_CORE_RangeStartW] = slot(&core_range_start_w);
  core[NVTX_CBID_CORE_RangeEnd] = slot(&core_range_end);
  core[NVTX_CBID_CORE_RangePushEx] = slot(&core_range_push_ex);
  core[NVTX_CBID_CORE_RangePushA] = slot(&core_range_push_a);
  core[NVTX_CBID_CORE_RangePushW] = slot(&core_range_push_w);
  core[NVTX_CBID_CORE_RangePop] = slot(&core_range_pop);
  core[NVTX_CBID_CORE_NameCategoryA] = slot(&core_name_category_a);
  core[NVTX_CBID_CORE_NameCategoryW] = slot(&core_name_category_w);
  core[NVTX_CBID_CORE_NameOsThreadA] = slot(&core_name_thread_a);
  core[NVTX_CBID_CORE_NameOsThreadW] = slot(&core_name_thread_w);

  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
  core2[NVTX_CBID_CORE2_DomainMarkEx] = slot(&domain_mark_ex);
  core2[NVTX_CBID_CORE2_DomainRangeStartEx] = slot(&domain_range_start_ex);
  core2[NVTX_CBID_CORE2_DomainRangeEnd] = slot(&domain_range_end);
  core2[NVTX_CBID_CORE2_DomainRangePushEx] = slot(&domain_range_push_ex);
  core2[NVTX_CBID_CORE2_DomainRangePop] = slot(&domain_range_pop);
  core2[NVTX_CBID_CORE2_DomainResourceCreate] = slot(&domain_resource_create);
  core2[NVTX_CBID_CORE2_DomainResourceDestroy] = slot(&domain_resource_destroy);
  core2[NVTX_CBID_CORE2_DomainNameCategoryA] = slot(&domain_name_category_a);
  core2[NVTX_CBID_CORE2_DomainNameCategoryW] = slot(&domain_name_category_w);
  core2[NVTX_CBID_CORE2_DomainRegisterStringA] = slot(&domain_register_string_a);
  core2[NVTX_CBID_CORE2_DomainRegisterStringW] = slot(&domain_register_string_w);
  core2[NVTX_CBID_CORE2_DomainCreateA] = slot(&domain_create_a);
  core2[NVTX_CBID_CORE2_DomainCreateW] = slot(&domain_create_w);
  core2[NVTX_CBID_CORE2_DomainDestroy] = slot(&domain_destroy);
  core2[NVTX_CBID_CORE2_Initialize] = slot(&initialize);

  if (!patch(cb, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE) ||
      !patch(cb, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE)) {
    log_unique("NVTX capture: an NVTX instance refused its core callback tables");
    return 0;
  }
  if (const auto* version = static_cast<const NvtxExportTableVersionInfo*>(
          get_export_table(NVTX_ETID_VERSIONINFO));
      version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  // Called once per NVTX instance (each library has its own); calling it
  // again for the same instance only writes the same pointers again.
  try {
    Attached& a = attached();
    std::lock_guard<std::mutex> lock(a.mutex);
    const void* key = reinterpret_cast<const void*>(get_export_table);
    if (std::find(a.instances.begin(), a.instances.end(), key) == a.instances.end()) {
      a.instances.push_back(key);
    }
  } catch (...) {
  }
  return 1;
}

// The path in NVTX_INJECTION64_PATH, if it is not jitscope's own library.
std::string foreign_injection_path() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return {};
  std::string_view p(path);
  const std::size_t slash = p.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? p : p.substr(slash + 1);
  if (base.starts_with("libjitscope_nvtx.so")) return {};
  return std::string(p);
}

}  // namespace

void nvtx_capture_begin_session(const Config& config) noexcept {
  g_capture_on.store(config.nvtx_capture, std::memory_order_relaxed);
  {
    // Ranges started in an earlier session can never be written now.
    AsyncMap& m = async_map();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.open.clear();
  }
  if (!config.nvtx_capture) return;
  try {
    const std::string other = foreign_injection_path();
    if (!other.empty()) {
      static std::atomic<bool> said{false};
      log_once(said, "NVTX capture off: NVTX_INJECTION64_PATH=" + other +
                         " belongs to another tool (e.g. Nsight Systems); jitscope's own "
                         "ranges still go to it");
    }
  } catch (...) {
  }
}

CaptureTotals nvtx_capture_totals() noexcept {
  Counters& c = counters();
  CaptureTotals t;
  t.thread_names = c.thread_names.load(std::memory_order_relaxed);
  t.unbalanced_pops = c.unbalanced_pops.load(std::memory_order_relaxed);
  t.unknown_ends = c.unknown_ends.load(std::memory_order_relaxed);
  t.dropped = c.dropped.load(std::memory_order_relaxed);
  return t;
}

bool nvtx_capture_attached_to(const void* get_export_table) noexcept {
  Attached& a = attached();
  std::lock_guard<std::mutex> lock(a.mutex);
  return std::find(a.instances.begin(), a.instances.end(), get_export_table) != a.instances.end();
}

// Lock order: emitter, attached copies, open async ranges, names (the
// emitter's NVTX calls may attach and register; no path takes them the other way).
void nvtx_lock_for_fork() noexcept {
  nvtx_emit_lock_for_fork();
  attached().mutex.lock();
  async_map().mutex.lock();
  lock_captured_names_for_fork();
}
void nvtx_unlock_after_fork() noexcept {
  unlock_captured_names_after_fork();
  async_map().mutex.unlock();
  attached().mutex.unlock();
  nvtx_emit_unlock_after_fork();
}

std::size_t nvtx_capture_instances() noexcept {
  Attached& a = attached();
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.instances.size();
}

}  // namespace jitscope::detail

// The entry points. jitscope_nvtx_attach is what the injection library
// (libjitscope_nvtx.so) forwards to; InitializeInjectionNvtx2_fnptr is NVTX's
// static injection: NVTX instances in the binary jitscope is linked into
// find it when NVTX_INJECTION64_PATH is unset.
extern "C" {

int jitscope_nvtx_attach(const void* (*get_export_table)(std::uint32_t)) noexcept {
  return jitscope::detail::attach(get_export_table);
}

static int jitscope_static_injection_init(NvtxGetExportTableFunc_t get_export_table) noexcept {
  return jitscope::detail::attach(get_export_table);
}

// A strong definition: it overrides the weak null one that every NVTX
// instance in this binary carries.
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = jitscope_static_injection_init;

}  // extern "C"
