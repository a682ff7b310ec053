// Byte patterns of checked execution (--checked), the same on every target.
#pragma once
#include <cstddef>

namespace lockstep {

constexpr unsigned char kSentinelByte = 0xA5;  // guards around buffers, checked after a run
constexpr unsigned char kPoisonByte = 0xFF;    // all-ones: NaN for every float type
constexpr size_t kGuardBytes = 4096;

}  // namespace lockstep
