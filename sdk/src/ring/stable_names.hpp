// The kept-names table's lock across fork() (stable_name is declared in
// <jitscope/detail/hot.hpp>): a leaf, held only around its own lookups.
#pragma once

namespace jitscope::detail {

void stable_names_lock_for_fork() noexcept;
void stable_names_unlock_after_fork() noexcept;

}  // namespace jitscope::detail
