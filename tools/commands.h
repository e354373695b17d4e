// Subcommands of the qairt CLI. Each lives in its own tools/cmd_*.cpp file and
// is listed once in kCommands (qairt_main.cpp). Conventions: argv[0] is the
// subcommand name; return 0 on success, 1 when the operation failed, 2 on a
// usage error; messages to stderr, results to stdout.
#pragma once

namespace qairt_cli {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
};

}  // namespace qairt_cli
