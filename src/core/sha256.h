#pragma once
#include <cstddef>
#include <string>

namespace lockstep {
// Lower-case hex SHA-256 (OpenSSL).
std::string sha256_hex(const void* data, size_t size);
}
