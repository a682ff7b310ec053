// --by stage: which runtime stage first differs. In order: constants as resident on the target
// (after upload, after a run), each kernel on the reference's inputs, readback, cache on vs
// off, a repeated run and compile, A-B-A. Stops at the first stage that differs.
#include <functional>

#include "verify/bisect_steps.h"

namespace lockstep {

namespace {


// ONNX nodes of `g` that read any of `values`.
std::vector<std::string> readers(const Graph& g, const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n)
    for (int v : g.nodes[n].inputs)
      if (v >= 0 && std::find(values.begin(), values.end(), g.values[v].name) != values.end()) {
        out.push_back(node_id(g, n));
        break;
      }
  return out;
}

StageFinding differs(const StageRow& row, bool runtime, std::vector<std::string> nodes = {}) {
  return StageFinding{true, runtime, row.stage, row.detail, std::move(nodes)};
}

}  // namespace

StageFinding Bisector::stages() {
  const std::string& t = s_.target();
  std::vector<std::string> changed;
  StageRow row = stage_constants(t, main(), "after upload", &changed);
  add_stage(row);
  if (row.status == StageRow::Differ) {
    std::vector<std::string> nodes = readers(g_, changed);
    row.detail += " (read by " + brief_list(nodes, 6) + ")";
    return differs(row, true, nodes);
  }
  main_outputs();
  row = stage_constants(t, main(), "after run 1", &changed);
  add_stage(row);
  if (row.status == StageRow::Differ) {
    std::vector<std::string> nodes = readers(g_, changed);
    row.detail += " (overwritten while running; read by " + brief_list(nodes, 6) + ")";
    return differs(row, true, nodes);
  }

  // Each kernel against the reference: the program as compiled, captured group by group.
  GroupTracer* tr = tracer();
  if (!tr) {
    add_stage({t, "kernels", StageRow::Skipped, "the target cannot capture fusion-group values", {}});
  } else if (int bad = tr->first_bad(); bad >= 0) {
    const Program::GroupValue& gv = tr->caps()[bad];
    const ProbeOutcome& alone = group_alone();
    TracePoint p;
    for (const TracePoint& q : tr->points())
      if (q.kernel == gv.kernel) p = q;
    row = {t, "kernels", StageRow::Differ,
           gv.kernel + " (" + brief_list(gv.nodes, 6) + ") is the first fusion group to diverge (cosine " + fmt_cosine(p.a.cosine) +
               ", rel_l2 " + fmt_sci(p.a.rel_l2) + "); alone on the reference's inputs it " +
               (alone.diverges ? "diverges" : "agrees (it diverges only inside the program)"),
           {}};
    add_stage(row);
    return differs(row, false, gv.nodes);
  } else {
    add_stage({t, "kernels", StageRow::Agree, std::to_string(tr->points().size()) + " fusion groups agree", {}});
  }

  // Readback: the outputs handed back must be the values the kernels computed.
  std::vector<std::string> sha = output_sha256(main_outputs());
  if (outputs_diverge()) {
    row = {t, "readback", StageRow::Differ, "every kernel agrees, but the outputs read back diverge", sha};
    add_stage(row);
    return differs(row, true);
  }
  add_stage({t, "readback", StageRow::Agree, "outputs agree with the reference", sha});

  std::vector<std::function<StageRow()>> later = {
      [&] { return stage_cache(s_, g_, in_, sha); },
      [&] {
        std::vector<std::string> again = output_sha256(main().run(in_));
        return StageRow{t, "run-to-run", again == sha ? StageRow::Agree : StageRow::Differ,
                        "a second run of the same program", again};
      },
      [&] { return stage_repeat(s_, g_, in_, sha, 2); },
      [&] { return stage_aba(s_, g_, in_, sha, o_.aba, o_.aba_inputs, o_.process); },
  };
  for (const auto& next : later) {
    row = next();
    add_stage(row);
    if (row.status != StageRow::Differ) continue;
    if (row.corrupted.empty()) return differs(row, true);
    // A later compile's uploads went wrong: the staging race's face that needs an earlier compile.
    std::vector<std::string> nodes = readers(g_, row.corrupted);
    StageRow c{t, "constants", StageRow::Differ,
               "resident bytes differ from the host after upload in stage " + row.stage + ": " +
                   brief_list(row.corrupted, 4, "'") + " (read by " + brief_list(nodes, 6) + ")",
               {}, {}};
    add_stage(c);
    return differs(c, true, nodes);
  }
  return {};
}

}  // namespace lockstep
