// The ring's record, which the inline hot path (<jitscope/detail/hot.hpp>)
// writes too: its definition lives with the public detail headers.
#pragma once

#include <jitscope/detail/record.hpp>
