#include "cli/cli.h"

int main(int argc, char** argv) { return lockstep::cli::main(argc, argv); }
