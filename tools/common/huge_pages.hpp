// A tool's heap in 2 MiB pages (transparent huge pages) where the kernel
// gives them on request (its "madvise" mode, Debian's default; "always"
// needs nothing; with "never", or strict overcommit, nothing is changed).
// jitscope-report spent about a quarter of its CPU on the faults and TLB
// misses of 4 KiB pages: on a 42,000-unit trace, 30,000 page faults,
// against about 1,000 with this (docs/performance.md, "the report's heap
// in 2 MiB pages").
//
// Quickstart (a tool's main, before it allocates much):
//   jitscope::tools::prefer_huge_pages();
//   ... every few thousand events: jitscope::tools::advise_heap_growth();
//
// What it does (glibc on Linux; elsewhere nothing): malloc grows its heap
// 256 MiB ahead and never gives its top back, takes allocations of up to
// 32 MiB from that heap (not each from its own mapping), and the heap is
// advised MADV_HUGEPAGE, again wherever it grew since. The memory a tool
// touches is what it was; its peak RSS may grow by a few percent (a 2 MiB
// page backed where 4 KiB ones were not all touched), and freed blocks
// stay in the heap until exit. With the kernel's default defrag
// ("madvise"), a fault on a fragmented host may compact memory first.
// From one thread (the tools read on one).
#pragma once

namespace jitscope::tools {

// malloc set up as above, and the heap so far advised. Call once; true
// when the heap was advised. False, malloc as it was: not worth asking
// (above), not glibc's brk heap (a sanitizer's allocator), or refused.
bool prefer_huge_pages() noexcept;

// The heap's growth since the last call advised too: no system call unless
// it grew (sbrk(0) is libc's own record). Nothing before prefer_huge_pages.
void advise_heap_growth() noexcept;

}  // namespace jitscope::tools
