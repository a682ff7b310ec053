// Small helpers shared by the test files.
#pragma once
#include <functional>
#include <string>

#include "core/error.h"

namespace lockstep::testing {

// The message of the lockstep::Error that f throws, or "" when it does not throw.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace lockstep::testing
