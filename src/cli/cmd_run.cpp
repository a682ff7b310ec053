// TODO(helper): run subcommand.
#include "cli/cli.h"

namespace lockstep::cli {
Action add_run(CLI::App& app) { return [] { return kExitOk; }; }
}  // namespace lockstep::cli
