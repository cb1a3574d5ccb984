// The NVTX capture's naming slots: domains, registered strings and category
// names (kept in captured_names.cpp, where records may point at them), and
// thread names (the calling thread's becomes its track name; another's is a
// record). The resource slots only answer: this tool reads no resources.
// See capture_state.hpp.
//
// These run once per name, not per event: a failure says one line.
#include "nvtx/capture_attributes.hpp"
#include "nvtx/capture_state.hpp"

#include "base/boundary.hpp"

#include <cstdint>
#include <string_view>

namespace jitscope::detail::nvtx_capture {

namespace {

constexpr std::string_view kNamingThread = "NVTX capture: naming a thread";

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

void NVTX_API core_name_category_a(std::uint32_t id, const char* name) noexcept {
  name_captured_category(captured_default_domain(), id, bounded(name));
}
void NVTX_API core_name_category_w(std::uint32_t id, const wchar_t* name) noexcept {
  (void)guarded(kNamingCapturedCategory,
                [&] { name_captured_category(captured_default_domain(), id, utf8(name)); });
}
void NVTX_API core_name_thread_a(std::uint32_t tid, const char* name) noexcept {
  name_thread(tid, ascii_message(name));
}
void NVTX_API core_name_thread_w(std::uint32_t tid, const wchar_t* name) noexcept {
  (void)guarded(kNamingThread, [&] { name_thread(tid, wide_message(name)); });
}

// ---- the CORE2 (domain) slots ----

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
  (void)guarded(kNamingCapturedCategory,
                [&] { name_captured_category(domain_of(d), id, utf8(name)); });
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d, const char* s) noexcept {
  return reinterpret_cast<nvtxStringHandle_t>(
      const_cast<char*>(captured_string(domain_of(d), bounded(s))));
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d,
                                                     const wchar_t* s) noexcept {
  nvtxStringHandle_t handle = nullptr;  // out of memory: none
  (void)guarded(kRegisteringCapturedString, [&] {
    handle = reinterpret_cast<nvtxStringHandle_t>(
        const_cast<char*>(captured_string(domain_of(d), utf8(s))));
  });
  return handle;
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) noexcept {
  return reinterpret_cast<nvtxDomainHandle_t>(captured_domain(bounded(name)));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) noexcept {
  nvtxDomainHandle_t domain = nullptr;  // out of memory: none (its calls go to the default domain)
  (void)guarded(kCreatingCapturedDomain, [&] {
    domain = reinterpret_cast<nvtxDomainHandle_t>(captured_domain(utf8(name)));
  });
  return domain;
}
// Domains are interned and never freed: records may still point at them.
void NVTX_API domain_destroy(nvtxDomainHandle_t) noexcept {}
void NVTX_API initialize(const void*) noexcept {}

}  // namespace

void add_naming_slots(SlotTables& t) noexcept {
  t.core[NVTX_CBID_CORE_NameCategoryA] = slot(&core_name_category_a);
  t.core[NVTX_CBID_CORE_NameCategoryW] = slot(&core_name_category_w);
  t.core[NVTX_CBID_CORE_NameOsThreadA] = slot(&core_name_thread_a);
  t.core[NVTX_CBID_CORE_NameOsThreadW] = slot(&core_name_thread_w);
  t.core2[NVTX_CBID_CORE2_DomainResourceCreate] = slot(&domain_resource_create);
  t.core2[NVTX_CBID_CORE2_DomainResourceDestroy] = slot(&domain_resource_destroy);
  t.core2[NVTX_CBID_CORE2_DomainNameCategoryA] = slot(&domain_name_category_a);
  t.core2[NVTX_CBID_CORE2_DomainNameCategoryW] = slot(&domain_name_category_w);
  t.core2[NVTX_CBID_CORE2_DomainRegisterStringA] = slot(&domain_register_string_a);
  t.core2[NVTX_CBID_CORE2_DomainRegisterStringW] = slot(&domain_register_string_w);
  t.core2[NVTX_CBID_CORE2_DomainCreateA] = slot(&domain_create_a);
  t.core2[NVTX_CBID_CORE2_DomainCreateW] = slot(&domain_create_w);
  t.core2[NVTX_CBID_CORE2_DomainDestroy] = slot(&domain_destroy);
  t.core2[NVTX_CBID_CORE2_Initialize] = slot(&initialize);
}

}  // namespace jitscope::detail::nvtx_capture
