#include "api/copies.hpp"

#include "base/log.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

// An ELF note in every copy of the SDK (static library or libjitscope.so),
// in the loaded image: the loader lists each object's notes, so a copy can
// count the others. Name "jitscope", type "JS".
constexpr std::uint32_t kNoteType = 0x534a;
struct CopyNote {
  std::uint32_t namesz = 9;  // "jitscope" and its NUL
  std::uint32_t descsz = 4;
  std::uint32_t type = kNoteType;
  char name[12] = "jitscope";  // padded to 4 bytes
  std::uint32_t desc = 1;      // the note's own version
};
// ".note*" sections are SHT_NOTE; the linker puts them in a PT_NOTE segment.
__attribute__((section(".note.jitscope"), used, aligned(4))) const CopyNote g_copy_note{};

struct Scan {
  std::vector<std::string> others;  // the objects holding another copy
  bool found_self = false;
};

std::string object_name(const dl_phdr_info* info) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return info->dlpi_name;
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string("the program");
}

int scan_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* scan = static_cast<Scan*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* at = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = at + ph.p_memsz;
    while (at + 12 <= end) {
      std::uint32_t head[3];
      std::memcpy(head, at, sizeof head);
      const std::size_t name_room = (head[0] + 3u) & ~std::size_t{3};
      const std::size_t desc_room = (head[1] + 3u) & ~std::size_t{3};
      const std::size_t size = 12 + name_room + desc_room;
      if (size > static_cast<std::size_t>(end - at)) break;
      if (head[2] == kNoteType && head[0] == 9 && std::memcmp(at + 12, "jitscope", 9) == 0) {
        if (at == reinterpret_cast<const char*>(&g_copy_note)) {
          scan->found_self = true;
        } else {
          scan->others.push_back(object_name(info));
        }
      }
      at += size;
    }
  }
  return 0;
}

}  // namespace

std::vector<std::string> other_jitscope_copies() {
  Scan scan;
  ::dl_iterate_phdr(scan_object, &scan);
  // This copy's note not found: the notes are not where this scan looks
  // (stripped, or a loader without them); then no answer rather than a
  // wrong one.
  if (!scan.found_self) return {};
  return scan.others;
}

void say_other_copies() {
  const std::vector<std::string> others = other_jitscope_copies();
  if (others.empty()) return;
  Dl_info self{};
  std::string here = "this one";
  if (::dladdr(&g_copy_note, &self) != 0 && self.dli_fname != nullptr && self.dli_fname[0]) {
    here = self.dli_fname;
  }
  std::string line = std::to_string(others.size() + 1) + " copies of jitscope are loaded (" + here;
  for (const std::string& o : others) line += ", " + o;
  line +=
      "): each has its own session and compile units, so what one records is not in the "
      "other's trace; link every module to libjitscope.so (jitscope::shared)";
  log_line(line);
}

}  // namespace jitscope::detail
