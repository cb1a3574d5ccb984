// A test-only NVTX tool (NVTX_INJECTION64_PATH=libnvtx_test_recorder.so, target
// jitscope_test_nvtx_recorder):
// every NVTX call the process's NVTX copy forwards to it is appended to one
// mutex-protected log, which tests read back through the extern "C"
// accessors at the bottom (dlopen(path, RTLD_NOLOAD | RTLD_NOW) + dlsym).
//
// Dump format (recorder_dump): one event per line, nine tab-separated fields
// (recorded_event.hpp)
//   kind  domain  tid  msg_type  category  payload_type  payload  id  text
// kind:         init, domain_create, register, name_category, push, pop,
//               mark, name_thread, range_start, range_end (domain ranges;
//               core calls are the same kinds with domain "(core)")
// domain:       the domain's name; "(core)" for the non-domain API,
//               "(null)" for a null domain handle, "(unknown)" for a handle
//               this tool never gave out
// tid:          gettid() of the calling thread
// msg_type:     the attributes' NVTX_MESSAGE_TYPE_* (0 without attributes)
// category, payload_type, payload: the attributes' (payload as uint64 bits)
// id:           register: the handle's number; push/mark with a registered
//               message: that number; name_category: the category id;
//               name_thread: the tid named
// text:         message resolved (ASCII, registered or wide as '?' for
//               non-ASCII), domain/category/thread name; '\\', '\t' and
//               '\n' are escaped as \\, \t and \n
#define NVTX_NO_IMPL  // a tool: NVTX's types only
#include <nvtx3/nvToolsExt.h>

#include "recorded_event.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define RECORDER_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Domain {
  std::string name;
};
struct Registered {
  const Domain* domain;
  std::string text;
  std::uint64_t number;
};

using nvtx_recorder::Event;

// Never destroyed: NVTX may call in during or after static destruction.
struct State {
  std::mutex mutex;
  std::vector<Event> events;
  std::map<std::string, std::unique_ptr<Domain>> domains;
  std::vector<std::unique_ptr<Registered>> strings;
  std::map<std::string, std::uint64_t> registrations;   // per text, never cleared
  std::map<std::string, std::uint64_t> domain_creates;  // per name, never cleared
  std::uint64_t inits = 0;
  std::uint64_t next_range = 1;
};
State& state() {
  static State* s = new State;
  return *s;
}

long this_tid() { return static_cast<long>(::syscall(SYS_gettid)); }

constexpr const char* kCore = "(core)";

std::string domain_name(nvtxDomainHandle_t d) {
  if (d == nullptr) return "(null)";
  State& s = state();  // caller holds the lock
  for (const auto& [name, dom] : s.domains) {
    if (reinterpret_cast<nvtxDomainHandle_t>(dom.get()) == d) return name;
  }
  return "(unknown)";
}

std::string from_wide(const wchar_t* w) {
  std::string out;
  if (w == nullptr) return "(null)";
  for (; *w != 0; ++w) out.push_back(*w > 0 && *w < 0x80 ? static_cast<char>(*w) : '?');
  return out;
}

// Fills the message/category/payload fields from attributes (lock held).
void read_attributes(Event& e, const nvtxEventAttributes_t* a) {
  if (a == nullptr) {
    e.text = "(no attributes)";
    return;
  }
  if (a->version != NVTX_VERSION || a->size != NVTX_EVENT_ATTRIB_STRUCT_SIZE) {
    e.text = "(bad attributes: version " + std::to_string(a->version) + ", size " +
             std::to_string(a->size) + ")";
    return;
  }
  e.category = a->category;
  e.payload_type = a->payloadType;
  std::memcpy(&e.payload, &a->payload, sizeof e.payload);
  e.msg_type = a->messageType;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      e.text = a->message.ascii != nullptr ? a->message.ascii : "(null)";
      break;
    case NVTX_MESSAGE_TYPE_UNICODE: e.text = from_wide(a->message.unicode); break;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      e.text = "(unknown registered handle)";
      for (const auto& r : state().strings) {
        if (reinterpret_cast<nvtxStringHandle_t>(r.get()) == a->message.registered) {
          e.text = r->text;
          e.id = r->number;
        }
      }
      break;
    }
    default: e.text = "(no message)"; break;
  }
}

void record(Event e) { state().events.push_back(std::move(e)); }

Event make(const char* kind, std::string domain) {
  Event e;
  e.kind = kind;
  e.domain = std::move(domain);
  e.tid = this_tid();
  return e;
}

// ---- CORE ----

void NVTX_API core_mark_ex(const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("mark", kCore);
  read_attributes(e, a);
  record(std::move(e));
}
void NVTX_API core_mark_a(const char* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("mark", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_ASCII;
  e.text = m != nullptr ? m : "(null)";
  record(std::move(e));
}
void NVTX_API core_mark_w(const wchar_t* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("mark", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_UNICODE;
  e.text = from_wide(m);
  record(std::move(e));
}
nvtxRangeId_t NVTX_API core_range_start_ex(const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_start", kCore);
  read_attributes(e, a);
  const std::uint64_t id = state().next_range++;
  e.id = id;
  record(std::move(e));
  return id;
}
nvtxRangeId_t NVTX_API core_range_start_a(const char* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_start", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_ASCII;
  e.text = m != nullptr ? m : "(null)";
  const std::uint64_t id = state().next_range++;
  e.id = id;
  record(std::move(e));
  return id;
}
nvtxRangeId_t NVTX_API core_range_start_w(const wchar_t* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_start", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_UNICODE;
  e.text = from_wide(m);
  const std::uint64_t id = state().next_range++;
  e.id = id;
  record(std::move(e));
  return id;
}
void NVTX_API core_range_end(nvtxRangeId_t id) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_end", kCore);
  e.id = id;
  record(std::move(e));
}
int NVTX_API core_range_push_ex(const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("push", kCore);
  read_attributes(e, a);
  record(std::move(e));
  return 0;
}
int NVTX_API core_range_push_a(const char* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("push", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_ASCII;
  e.text = m != nullptr ? m : "(null)";
  record(std::move(e));
  return 0;
}
int NVTX_API core_range_push_w(const wchar_t* m) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("push", kCore);
  e.msg_type = NVTX_MESSAGE_TYPE_UNICODE;
  e.text = from_wide(m);
  record(std::move(e));
  return 0;
}
int NVTX_API core_range_pop() {
  std::lock_guard<std::mutex> lock(state().mutex);
  record(make("pop", kCore));
  return 0;
}
void NVTX_API core_name_category_a(std::uint32_t id, const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_category", kCore);
  e.id = id;
  e.text = name != nullptr ? name : "(null)";
  record(std::move(e));
}
void NVTX_API core_name_category_w(std::uint32_t id, const wchar_t* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_category", kCore);
  e.id = id;
  e.text = from_wide(name);
  record(std::move(e));
}
void NVTX_API core_name_thread_a(std::uint32_t tid, const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_thread", kCore);
  e.id = tid;
  e.text = name != nullptr ? name : "(null)";
  record(std::move(e));
}
void NVTX_API core_name_thread_w(std::uint32_t tid, const wchar_t* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_thread", kCore);
  e.id = tid;
  e.text = from_wide(name);
  record(std::move(e));
}

// ---- CORE2 (domains) ----

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("mark", domain_name(d));
  read_attributes(e, a);
  record(std::move(e));
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_start", domain_name(d));
  read_attributes(e, a);
  const std::uint64_t id = state().next_range++;
  e.id = id;
  record(std::move(e));
  return id;
}
void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("range_end", domain_name(d));
  e.id = id;
  record(std::move(e));
}
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("push", domain_name(d));
  read_attributes(e, a);
  record(std::move(e));
  return 0;
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) {
  std::lock_guard<std::mutex> lock(state().mutex);
  record(make("pop", domain_name(d)));
  return 0;
}
int g_resource;
nvtxResourceHandle_t NVTX_API domain_resource_create(nvtxDomainHandle_t,
                                                     nvtxResourceAttributes_t*) {
  return reinterpret_cast<nvtxResourceHandle_t>(&g_resource);
}
void NVTX_API domain_resource_destroy(nvtxResourceHandle_t) {}
void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, std::uint32_t id, const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_category", domain_name(d));
  e.id = id;
  e.text = name != nullptr ? name : "(null)";
  record(std::move(e));
}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, std::uint32_t id, const wchar_t* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Event e = make("name_category", domain_name(d));
  e.id = id;
  e.text = from_wide(name);
  record(std::move(e));
}
nvtxStringHandle_t register_string(nvtxDomainHandle_t d, std::string text) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  Event e = make("register", domain_name(d));
  auto r = std::make_unique<Registered>();
  r->domain = reinterpret_cast<const Domain*>(d);
  r->text = text;
  r->number = s.strings.size() + 1;
  e.id = r->number;
  e.text = text;
  ++s.registrations[text];
  s.strings.push_back(std::move(r));
  record(std::move(e));
  return reinterpret_cast<nvtxStringHandle_t>(s.strings.back().get());
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d, const char* str) {
  return register_string(d, str != nullptr ? str : "(null)");
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d, const wchar_t* str) {
  return register_string(d, from_wide(str));
}
nvtxDomainHandle_t create_domain(std::string name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.domain_creates[name];
  std::unique_ptr<Domain>& dom = s.domains[name];
  if (!dom) dom = std::make_unique<Domain>(Domain{name});
  Event e = make("domain_create", name);
  e.text = name;
  record(std::move(e));
  return reinterpret_cast<nvtxDomainHandle_t>(dom.get());
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  return create_domain(name != nullptr ? name : "(null)");
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  return create_domain(from_wide(name));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}  // handles stay valid: records name them
void NVTX_API initialize(const void*) {}

template <class F>
NvtxFunctionPointer fn(F f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

bool install(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module,
             const NvtxFunctionPointer* fns, unsigned count) {
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (unsigned i = 1; i < count && i < size; ++i) {
    if (table[i] != nullptr && fns[i] != nullptr) *table[i] = fns[i];
  }
  return true;
}

}  // namespace

RECORDER_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  if (get_export_table == nullptr) return 0;
  const auto* cb =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->GetModuleFunctionTable == nullptr) return 0;

  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  core[NVTX_CBID_CORE_MarkEx] = fn(&core_mark_ex);
  core[NVTX_CBID_CORE_MarkA] = fn(&core_mark_a);
  core[NVTX_CBID_CORE_MarkW] = fn(&core_mark_w);
  core[NVTX_CBID_CORE_RangeStartEx] = fn(&core_range_start_ex);
  core[NVTX_CBID_CORE_RangeStartA] = fn(&core_range_start_a);
  core[NVTX_CBID_CORE_RangeStartW] = fn(&core_range_start_w);
  core[NVTX_CBID_CORE_RangeEnd] = fn(&core_range_end);
  core[NVTX_CBID_CORE_RangePushEx] = fn(&core_range_push_ex);
  core[NVTX_CBID_CORE_RangePushA] = fn(&core_range_push_a);
  core[NVTX_CBID_CORE_RangePushW] = fn(&core_range_push_w);
  core[NVTX_CBID_CORE_RangePop] = fn(&core_range_pop);
  core[NVTX_CBID_CORE_NameCategoryA] = fn(&core_name_category_a);
  core[NVTX_CBID_CORE_NameCategoryW] = fn(&core_name_category_w);
  core[NVTX_CBID_CORE_NameOsThreadA] = fn(&core_name_thread_a);
  core[NVTX_CBID_CORE_NameOsThreadW] = fn(&core_name_thread_w);

  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
  core2[NVTX_CBID_CORE2_DomainMarkEx] = fn(&domain_mark_ex);
  core2[NVTX_CBID_CORE2_DomainRangeStartEx] = fn(&domain_range_start_ex);
  core2[NVTX_CBID_CORE2_DomainRangeEnd] = fn(&domain_range_end);
  core2[NVTX_CBID_CORE2_DomainRangePushEx] = fn(&domain_range_push_ex);
  core2[NVTX_CBID_CORE2_DomainRangePop] = fn(&domain_range_pop);
  core2[NVTX_CBID_CORE2_DomainResourceCreate] = fn(&domain_resource_create);
  core2[NVTX_CBID_CORE2_DomainResourceDestroy] = fn(&domain_resource_destroy);
  core2[NVTX_CBID_CORE2_DomainNameCategoryA] = fn(&domain_name_category_a);
  core2[NVTX_CBID_CORE2_DomainNameCategoryW] = fn(&domain_name_category_w);
  core2[NVTX_CBID_CORE2_DomainRegisterStringA] = fn(&domain_register_string_a);
  core2[NVTX_CBID_CORE2_DomainRegisterStringW] = fn(&domain_register_string_w);
  core2[NVTX_CBID_CORE2_DomainCreateA] = fn(&domain_create_a);
  core2[NVTX_CBID_CORE2_DomainCreateW] = fn(&domain_create_w);
  core2[NVTX_CBID_CORE2_DomainDestroy] = fn(&domain_destroy);
  core2[NVTX_CBID_CORE2_Initialize] = fn(&initialize);

  if (!install(cb, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE) ||
      !install(cb, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE)) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().inits;
  record(make("init", ""));
  return 1;
}

// The log as text (format at the top). Writes at most `cap` bytes (no NUL)
// and returns the full length: call again with a larger buffer if it is
// larger than `cap`.
RECORDER_EXPORT std::size_t recorder_dump(char* buf, std::size_t cap) {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (const Event& e : state().events) nvtx_recorder::append_line(out, e);
  }
  if (buf != nullptr && cap > 0) std::memcpy(buf, out.data(), out.size() < cap ? out.size() : cap);
  return out.size();
}

// Forgets the events logged so far (counters, domains and strings stay).
RECORDER_EXPORT void recorder_clear() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().events.clear();
}

// How many times `text` was registered (any domain) since the tool loaded.
RECORDER_EXPORT std::uint64_t recorder_registrations(const char* text) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().registrations.find(text != nullptr ? text : "");
  return it == state().registrations.end() ? 0 : it->second;
}

// How many times domain `name` was created since the tool loaded.
RECORDER_EXPORT std::uint64_t recorder_domain_creates(const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().domain_creates.find(name != nullptr ? name : "");
  return it == state().domain_creates.end() ? 0 : it->second;
}

// How many NVTX copies initialized with this tool.
RECORDER_EXPORT std::uint64_t recorder_inits() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().inits;
}
