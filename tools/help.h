// Help of the qairt commands (tools/help.cpp): one table per command that
// lists every option its parser accepts, so `qairt help CMD`, `CMD --help`,
// the usage line of a usage error and the "did you mean" suggestions all
// come from the same place.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace qairt_cli {

// Prints the full help of `command` (usage, grouped options with their
// defaults, an example); false when there is no help for that name.
bool PrintCommandHelp(const std::string& command, FILE* out);

// Prints the usage line(s) of `command` and where to find the options: what a
// usage error shows, short enough not to bury the message above it.
void PrintCommandUsage(const std::string& command, FILE* out);

// " (did you mean '--input_list'?)" when `arg` is close to an option of
// `command` (edit distance or unique prefix), "" otherwise. Appended to the
// parsers' "unknown argument" messages.
std::string SuggestFlag(const std::string& command, const std::string& arg);

// The candidate `word` most likely misspells (edit distance <= 2, <= 1 for
// short words, or the only candidate it is a prefix of); "" when none is.
std::string ClosestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace qairt_cli
