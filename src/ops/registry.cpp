#include <algorithm>
#include <unordered_map>

#include "ops/op.h"

namespace lockstep {

std::vector<const OpDef*> registered_ops() {
  std::vector<const OpDef*> all;
  using Table = std::span<const OpDef> (*)();
  static const Table kFamilies[] = {elementwise_ops, elementwise_variadic_ops,
                                    movement_ops,    generator_ops,
                                    conv_ops,        linalg_ops,
                                    reduce_ops,      softmax_ops,
                                    masking_ops,     activation_ops,
                                    cumulative_ops,  normalization_ops,
                                    pool_ops,        loss_ops,
                                    resize_ops,      attention_ops,
                                    rotary_ops,      scatter_ops,
                                    topk_ops,        causal_conv_ops,
                                    einsum_ops,      grid_sample_ops,
                                    random_ops,      selection_ops};
  for (Table family : kFamilies)
    for (const OpDef& d : family()) all.push_back(&d);
  return all;
}

const OpDef* find_op(const std::string& domain, const std::string& op_type) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  static const std::unordered_map<std::string, const OpDef*> by_name = [] {
    std::unordered_map<std::string, const OpDef*> m;
    for (const OpDef* d : registered_ops()) m.emplace(d->name, d);
    return m;
  }();
  auto it = by_name.find(op_type);  // shape rules run at every bind of a new length
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace lockstep
