// TODO(helper): info subcommand.
#include "cli/cli.h"

namespace lockstep::cli {
Action add_info(CLI::App& app) { return [] { return kExitOk; }; }
}  // namespace lockstep::cli
