// --by node. Capture mode: the values of every fusion group of the program as compiled (no
// recompilation, so the bug cannot hide) against the reference; the first diverging group,
// then the node inside it, by compiling prefixes of the group alone on the reference's
// inputs. Cuts mode: prefix cuts at node outputs with binary search, O(log n) compiles.
#include <algorithm>

#include "graph/cut.h"
#include "verify/bisect_steps.h"

namespace lockstep {

namespace {

CompileOptions checked(CompileOptions o) {
  o.checked = true;  // poisoned memory shows elements nobody wrote; sentinels catch stray writes
  return o;
}

}  // namespace

std::vector<int> Bisector::group_nodes(int cap) {
  std::map<std::string, int> pos = node_positions(g_);
  std::vector<int> nodes;
  for (const std::string& id : tracer()->caps()[cap].nodes)
    if (auto it = pos.find(id); it != pos.end()) nodes.push_back(it->second);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

const ProbeOutcome& Bisector::group_alone() {
  if (alone_) return *alone_;
  int bad = tracer()->first_bad();
  const Program::GroupValue& gv = tracer()->caps()[bad];
  std::vector<int> nodes = group_nodes(bad);
  std::vector<bool> in_group(g_.nodes.size(), false);
  for (int n : nodes) in_group[n] = true;
  // The group's value and whatever else it hands to nodes outside it.
  std::vector<int> outputs = {g_.find_value(gv.value)};
  for (int n = 0; n < static_cast<int>(g_.nodes.size()); ++n)
    for (int v : g_.nodes[n].inputs)
      if (v >= 0 && !in_group[n] && g_.values[v].producer >= 0 && in_group[g_.values[v].producer]) outputs.push_back(v);
  for (int v : g_.outputs)
    if (g_.values[v].producer >= 0 && in_group[g_.values[v].producer]) outputs.push_back(v);
  Isolated iso = isolate(g_, nodes, values_for(nodes), outputs);
  alone_ = probe("group", gv.kernel + " alone on reference inputs (" + std::to_string(nodes.size()) + " nodes)",
                 iso.graph, iso.inputs, checked(o_.compile));
  return *alone_;
}

NodeFinding Bisector::groups() {
  NodeFinding f;
  GroupTracer* tr = tracer();
  if (!tr) return cuts();
  int bad = tr->first_bad();
  if (bad < 0) {
    f.detail = "every fusion group agrees with the reference";
    return f;
  }
  const Program::GroupValue& gv = tr->caps()[bad];
  f.found = true;
  f.kernel = gv.kernel;
  f.group = gv.nodes;
  const ProbeOutcome& alone = group_alone();
  f.alone_diverges = alone.diverges;
  std::vector<int> nodes = group_nodes(bad);
  if (!alone.diverges) {
    for (int n : nodes) f.culprits.push_back(node_id(g_, n));
    f.detail = "fusion group " + gv.kernel + " diverges in the program but agrees alone on the reference's inputs";
    return f;
  }
  // The shortest prefix of the group (every value exposed, so no fusion hides a node) that
  // diverges ends at the culprit.
  const TensorMap& known = values_for(nodes);
  int lo = 0, hi = static_cast<int>(nodes.size());
  int64_t poison = alone.poisoned;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    Isolated iso = isolate(g_, std::vector<int>(nodes.begin(), nodes.begin() + mid), known);
    ProbeOutcome out = probe("node", "first " + std::to_string(mid) + " of " + std::to_string(nodes.size()) +
                                         " nodes of " + gv.kernel + ", up to " + node_id(g_, nodes[mid - 1]),
                             iso.graph, iso.inputs, checked(o_.compile));
    if (out.diverges) hi = mid, poison = out.poisoned;
    else lo = mid;
  }
  f.culprits = {node_id(g_, nodes[hi - 1])};
  f.unwritten = poison > 0;
  f.detail = "in fusion group " + gv.kernel + " (" + std::to_string(nodes.size()) +
             " nodes), the first to diverge on the reference's inputs" +
             (f.unwritten ? "; " + std::to_string(poison) + " elements keep checked mode's poison" : "");
  return f;
}

NodeFinding Bisector::cuts() {
  NodeFinding f;
  int n = static_cast<int>(g_.nodes.size());
  if (!outputs_diverge()) {
    f.detail = "the outputs agree";
    return f;
  }
  std::vector<int> last_use(g_.values.size(), -1);
  for (int k = 0; k < n; ++k)
    for (int v : g_.nodes[k].inputs)
      if (v >= 0) last_use[v] = k;
  for (int v : g_.outputs) last_use[v] = n;
  // Every value live after node m, so a divergence anywhere before it shows.
  auto frontier = [&](int m) {
    std::vector<std::string> names;
    for (int k = 0; k <= m; ++k)
      for (int v : g_.nodes[k].outputs)
        if (v >= 0 && (last_use[v] > m || k == m)) names.push_back(g_.values[v].name);
    return names;
  };
  int lo = -1, hi = n - 1;  // the whole graph (hi) diverges
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    std::vector<std::string> names = frontier(mid);
    Graph cut = cut_at(g_, names);
    TensorMap in;
    for (int v : cut.inputs) in[cut.values[v].name] = in_.at(cut.values[v].name);
    ProbeOutcome out = probe("cut", "after #" + std::to_string(mid) + " " + node_id(g_, mid) + " (" +
                                        std::to_string(names.size()) + " values)",
                             cut, in, o_.compile);
    if (out.diverges) hi = mid;
    else lo = mid;
  }
  f.found = true;
  f.culprits = {node_id(g_, hi)};
  f.detail = "the first prefix cut that diverges ends at node #" + std::to_string(hi) + " (" + g_.nodes[hi].op_type + ")";
  return f;
}

}  // namespace lockstep
