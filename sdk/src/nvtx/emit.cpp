// Emission: a session's spans, phases, units and instants as NVTX ranges and
// marks in the "jitscope" domain (nvtx.hpp). Runs on the producing thread,
// only while the session word has kSessionNvtxBit, i.e. only when a tool
// other than jitscope's own capture listens.
#include <nvtx3/nvToolsExt.h>

#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/per_thread.hpp"
#include "nvtx/nvtx.hpp"
#include "ring/record.hpp"
#include "ring/span_mirror.hpp"

#include <jitscope/nvtx.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

namespace jitscope::detail {
namespace {

struct Emitter {
  // Never held across a call into NVTX (a tool may do anything there).
  std::mutex mutex;
  // Registered handles per static name (pointer), and a category per unit.
  std::unordered_map<const char*, nvtxStringHandle_t> strings;
  std::unordered_map<std::uint64_t, std::uint32_t> unit_categories;
  std::uint32_t next_category = 1;
};
struct EmitterTag;
Emitter& emitter() noexcept { return immortal<Emitter, EmitterTag>(); }

std::atomic<bool> g_emitting{false};  // for nvtx_status(); relaxed: a report
// The domain, published once created (never changes afterwards).
std::atomic<nvtxDomainHandle_t> g_domain{nullptr};
// The only tool on jitscope's NVTX copy is jitscope's capture. Written once
// before g_domain's release store.
bool g_self = false;

// Marks the calling thread's NVTX calls as jitscope's own, so that
// jitscope's capture (if it is the tool) ignores them.
struct Emitting {
  Emitting() noexcept { t_nvtx_emitting = true; }
  ~Emitting() { t_nvtx_emitting = false; }
};

// Per thread, on the heap: a direct-mapped cache of registered static
// names (a miss takes the emitter's lock once per name and thread) and the
// compile unit of each open unit range. On the heap because libjitscope.so
// uses static TLS, of which a dlopen()ed library gets only a few hundred bytes.
struct NameCacheEntry {
  const char* name;
  nvtxStringHandle_t handle;
  std::uint32_t generation;  // g_names_generation when it was filled
};
// Bumped when an image is unloaded: its names' addresses may come back with
// other text, so every cached pointer -> handle pair is stale.
std::atomic<std::uint32_t> g_names_generation{0};
constexpr std::size_t kNameCacheSize = 256;
constexpr std::size_t kMaxUnitDepth = 64;
struct UnitTag {
  std::uint32_t depth;  // emitted ranges open when the unit's range began
  std::uint32_t category;
  std::uint64_t packed_id;
};
struct EmitThread {
  std::uint32_t depth = 0;  // jitscope ranges this thread has open in NVTX
  std::uint32_t units = 0;
  UnitTag unit[kMaxUnitDepth] = {};
  NameCacheEntry names[kNameCacheSize] = {};
};
// nullptr if it cannot be allocated, or while the thread exits: then no
// cache and no unit tags (pushes and pops still pair up).
using EmitThreadState = PerThread<EmitThread, struct EmitThreadTag>;

nvtxStringHandle_t registered(EmitThread* t, nvtxDomainHandle_t domain, const char* name) noexcept {
  const auto h = reinterpret_cast<std::uintptr_t>(name);
  NameCacheEntry scratch{};
  NameCacheEntry& e = t != nullptr ? t->names[(h >> 3 ^ h >> 12) & (kNameCacheSize - 1)] : scratch;
  // relaxed: a name is used only by code of an image that is still mapped,
  // which began after the unload that bumped the generation.
  const std::uint32_t generation = g_names_generation.load(std::memory_order_relaxed);
  if (e.name == name && e.generation == generation) return e.handle;
  Emitter& em = emitter();
  nvtxStringHandle_t handle = nullptr;  // failed: the caller sends the name as text
  (void)guarded("NVTX emission: registering a name", [&] {
    {
      std::lock_guard<std::mutex> lock(em.mutex);
      if (auto it = em.strings.find(name); it != em.strings.end()) {
        e = {name, it->second, generation};
        handle = it->second;
        return;
      }
    }
    // Registered outside the lock; if two threads race, the first stored wins.
    const nvtxStringHandle_t fresh = nvtxDomainRegisterStringA(domain, name);
    std::lock_guard<std::mutex> lock(em.mutex);
    handle = em.strings.try_emplace(name, fresh).first->second;
    e = {name, handle, generation};
  });
  return handle;
}

// A NUL-terminated copy of a dynamic name for NVTX's ASCII message.
struct CString {
  char text[256];
  explicit CString(std::string_view s) noexcept {
    const std::size_t n = std::min(s.size(), sizeof text - 1);
    if (n != 0) std::memcpy(text, s.data(), n);  // an empty view may have a null data()
    text[n] = '\0';
  }
};

// The unit's NVTX category, named "[frame/attempt] name" on first use.
std::uint32_t unit_category(nvtxDomainHandle_t domain, std::uint64_t packed,
                            std::string_view display) noexcept {
  Emitter& em = emitter();
  std::uint32_t category = 0;
  bool added = false;
  // Failed: 0, no category (the range still carries the unit's id).
  if (!guarded("NVTX emission: naming a compile unit's category", [&] {
        std::lock_guard<std::mutex> lock(em.mutex);
        const auto emplaced = em.unit_categories.try_emplace(packed, 0);
        added = emplaced.second;
        if (added) emplaced.first->second = em.next_category++;
        category = emplaced.first->second;
      })) {
    return 0;
  }
  if (!added) return category;
  const CString name(display);                           // cut as the range's own message is
  nvtxDomainNameCategoryA(domain, category, name.text);  // outside the lock
  return category;
}

void fill_message(nvtxEventAttributes_t& a, EmitThread* t, nvtxDomainHandle_t domain,
                  const char* name, const CString* dynamic) noexcept {
  if (name != nullptr) {
    if (nvtxStringHandle_t h = registered(t, domain, name); h != nullptr) {
      a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
      a.message.registered = h;
      return;
    }
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    return;
  }
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = dynamic->text;
}

void tag_with_unit(nvtxEventAttributes_t& a, const EmitThread* t) noexcept {
  if (t == nullptr || t->units == 0) return;
  const UnitTag& u = t->unit[t->units - 1];
  a.category = u.category;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = u.packed_id;
}

nvtxEventAttributes_t blank_attributes() noexcept {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

// The SpanMirror the producer calls while the session emits.
void nvtx_emit_push(const char* name, std::string_view dynamic_name, std::uint8_t flags,
                    std::uint64_t value) noexcept {
  nvtxDomainHandle_t domain = g_domain.load(std::memory_order_acquire);
  EmitThread* t = EmitThreadState::get();
  nvtxEventAttributes_t a = blank_attributes();
  const CString dynamic(name == nullptr ? dynamic_name : std::string_view());
  Emitting guard;
  fill_message(a, t, domain, name, &dynamic);
  if (t != nullptr) {
    if ((flags & kFlagUnit) != 0) {
      // The unit's own range: the display name "[3/1] name" is its message.
      const std::uint32_t category = unit_category(domain, value, dynamic_name);
      // Deeper than kMaxUnitDepth units: they keep the 64th's tag.
      if (t->units < kMaxUnitDepth) t->unit[t->units++] = {t->depth, category, value};
    }
    tag_with_unit(a, t);
    ++t->depth;
  }
  nvtxDomainRangePushEx(domain, &a);
}

void nvtx_emit_pop() noexcept {
  nvtxDomainHandle_t domain = g_domain.load(std::memory_order_acquire);
  if (EmitThread* t = EmitThreadState::existing()) {
    if (t->depth == 0) return;  // jitscope pushed nothing here: a pop would close another's range
    --t->depth;
    if (t->units > 0 && t->unit[t->units - 1].depth == t->depth) --t->units;
  }
  Emitting guard;
  nvtxDomainRangePop(domain);
}

void nvtx_emit_mark(const char* name, std::string_view dynamic_name) noexcept {
  nvtxDomainHandle_t domain = g_domain.load(std::memory_order_acquire);
  nvtxEventAttributes_t a = blank_attributes();
  const CString dynamic(name == nullptr ? dynamic_name : std::string_view());
  EmitThread* t = EmitThreadState::get();
  Emitting guard;
  fill_message(a, t, domain, name, &dynamic);
  tag_with_unit(a, t);
  nvtxDomainMarkEx(domain, &a);
}

void nvtx_emit_thread_name(std::string_view name) noexcept {
  const CString text(name);
  Emitting guard;
  nvtxNameOsThreadA(static_cast<std::uint32_t>(::syscall(SYS_gettid)), text.text);
}

}  // namespace

void nvtx_emit_prepare() noexcept {
  // Once per process; a second caller waits for the first. The first NVTX
  // call initializes this NVTX copy: it loads the tool named in
  // NVTX_INJECTION64_PATH, or jitscope's static injection.
  static const bool created = [] {
    Emitting guard;
    nvtxDomainHandle_t domain = nvtxDomainCreateA("jitscope");
    g_self = nvtx_capture_attached_to(
        reinterpret_cast<const void*>(&NVTX_VERSIONED_IDENTIFIER(nvtxGetExportTable)));
    g_domain.store(domain, std::memory_order_release);  // pairs with the acquire loads
    return true;
  }();
  (void)created;
}

void nvtx_emit_forget_static_names() noexcept {
  Emitter& em = emitter();
  (void)guarded("NVTX emission: forgetting an unloaded image's names", [&] {
    std::lock_guard<std::mutex> lock(em.mutex);
    em.strings.clear();
    g_names_generation.fetch_add(1, std::memory_order_relaxed);
  });
}

bool nvtx_emit_begin_session(const Config& config) noexcept {
  bool on = false;
  if (config.nvtx_emit) {
    nvtx_emit_prepare();
    // No domain: no tool implements NVTX here, every call would be a no-op.
    on = g_domain.load(std::memory_order_acquire) != nullptr && !g_self;
  }
  g_emitting.store(on, std::memory_order_relaxed);
  if (on) {
    // The producer mirrors through this table while the session word has
    // kSessionNvtxBit; start() publishes that word (release) after this.
    static constexpr SpanMirror kNvtxMirror{&nvtx_emit_push, &nvtx_emit_pop, &nvtx_emit_mark,
                                            &nvtx_emit_thread_name};
    g_span_mirror.store(&kNvtxMirror, std::memory_order_relaxed);  // see span_mirror.hpp
  }
  return on;
}

void nvtx_emit_lock_for_fork() noexcept { emitter().mutex.lock(); }
void nvtx_emit_unlock_after_fork() noexcept { emitter().mutex.unlock(); }

}  // namespace jitscope::detail

namespace jitscope {

NvtxStatus nvtx_status() noexcept {
  NvtxStatus s;
  s.compiled_in = true;
  s.emitting = detail::g_emitting.load(std::memory_order_relaxed) && active();
  s.captured_instances = detail::nvtx_capture_instances();
  return s;
}

}  // namespace jitscope
