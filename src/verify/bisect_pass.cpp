// --by pass: binary search over --pass-limit (LLVM's -opt-bisect-limit) for the first pass
// application after which the target diverges. Every limit is a correct program by design,
// so a limit that diverges has a wrong application at or before it.
#include "passes/schedule.h"
#include "verify/bisect_steps.h"

namespace lockstep {

PassFinding Bisector::passes(bool zero_first) {
  PassFinding f;
  if (!outputs_diverge()) {
    f.kind = PassFinding::NoDivergence;
    return f;
  }
  std::vector<std::string> log = main().pass_log();
  int total = static_cast<int>(log.size());
  // The schedule record closes the log and always runs: no limit can leave it out.
  while (total > 0 && parse_pass_record(log[total - 1]).pass == kSchedulePass) --total;
  if (o_.compile.pass_limit >= 0) total = std::min(total, o_.compile.pass_limit);
  auto diverges_at = [&](int limit) {
    CompileOptions o = o_.compile;
    o.pass_limit = limit;
    return probe("pass-limit", "--pass-limit " + std::to_string(limit), g_, in_, o, &ref_outputs()).diverges;
  };
  // Limit 0 first when the divergence already showed without the program's context: then it
  // is most likely no pass at all, and one compile says so.
  bool zero_known = false;
  if (total == 0 || (zero_first && diverges_at(0))) {
    f.kind = PassFinding::NotAPass;
    return f;
  }
  zero_known = zero_first;
  int lo = 0, hi = total;  // hi diverges (the program under test); lo assumed to agree
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (diverges_at(mid)) hi = mid;
    else lo = mid;
  }
  if (lo == 0 && !zero_known && diverges_at(0)) {
    f.kind = PassFinding::NotAPass;
    return f;
  }
  f.kind = PassFinding::Found;
  f.line = log[hi - 1];
  f.app = parse_pass_record(f.line);
  r_.notes.push_back("first diverging pass application: " + f.line);
  return f;
}

}  // namespace lockstep
