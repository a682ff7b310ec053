// User-facing errors: one clear line naming the file or node. Internal invariants use assert.
#pragma once
#include <stdexcept>
#include <string>

namespace lockstep {

// A problem with what the user gave (model, inputs, options). The CLI prints it and exits 2.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Something valid ONNX that lockstep does not implement (op, attribute value, dtype, opset).
// Conformance runs count these as "unsupported" rather than failures.
class Unsupported : public Error {
 public:
  explicit Unsupported(const std::string& what) : Error(what) {}
};

// A broken invariant inside lockstep or generated code the compiler rejects: a lockstep bug,
// not the user's. It is an Error (the verify tools report it like any failure); the CLI exits
// 3 and asks for a report.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what) : Error(what) {}
};

}  // namespace lockstep
