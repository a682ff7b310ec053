// lockstep's public C++ API: load a model, compile it for a target, run it.
//
//   lockstep::Graph g = lockstep::load_onnx("decoder.onnx");
//   auto program = lockstep::compile(g, "cpu");          // or "ref", "cuda"
//   std::vector<lockstep::Tensor> out = program->run({{"z_p", z}, {"y_mask", mask}});
//
// lockstep::targets() lists the registered targets (unavailable_reason says why one cannot run
// here); a new backend registers a TargetInfo with a Device of its own (runtime/target.h).
//
// The CLI is built on exactly these calls. Errors in what the caller gives (model, inputs,
// options) are lockstep::Error exceptions whose message names the file or node;
// lockstep::Unsupported marks valid ONNX that lockstep does not implement.
#pragma once

#include "backend/registry.h"
#include "core/error.h"
#include "core/tensor.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "graph/graph.h"
#include "runtime/program.h"
#include "runtime/target.h"
#include "verify/compare.h"
#include "verify/parity.h"
