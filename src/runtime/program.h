// The public execution contract every target implements: Graph -> compile -> Program -> run.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph/bind.h"
#include "graph/graph.h"

namespace lockstep {

struct CompileOptions {
  int threads = 0;  // 0: the target's default
};

class Program {
 public:
  virtual ~Program() = default;
  virtual const std::string& target() const = 0;
  // Outputs in graph output order, in the model's dtypes. Throws Error on bad inputs.
  virtual std::vector<Tensor> run(const TensorMap& inputs) = 0;
};

// Targets lockstep knows by name, whether or not this build can run them.
std::vector<std::string> known_targets();

// Throws Error for an unknown target or one this build cannot run, saying why.
std::unique_ptr<Program> compile(const Graph& g, const std::string& target,
                                 const CompileOptions& opts = {});

}  // namespace lockstep
