#include "core/sha256.h"

#include <openssl/evp.h>

#include <cstdio>

namespace lockstep {

std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, size, md, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int k = 0; k < len; ++k) {
    std::snprintf(buf, sizeof buf, "%02x", md[k]);
    hex += buf;
  }
  return hex;
}

}  // namespace lockstep
