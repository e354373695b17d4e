// Flags of the vendor's converters and quantizer (qnn-onnx-converter,
// qairt-converter, qairt-quantizer, snpe-dlc-quant) that qairt convert does
// not implement as options of its own: each is either accepted because qairt
// already behaves that way, or refused with the reason. None is silently
// ignored, and none is an "unknown argument".
#pragma once

#include <string>
#include <vector>

namespace qairt_cli {

// Handles argv[*i] when it is one of these flags: a no-op flag is consumed
// (its values too) with a note on stderr and returns 1; a refused one prints
// the reason and returns -1. Anything else returns 0.
int ParseVendorFlag(int argc, char** argv, int* i, const char* command);

// `qairt help vendor`: the table, one line a flag.
void PrintVendorFlags();

// Splits "--flag=value" into "--flag" "value" (the vendor tools accept both
// forms); single-dash "-x=y" spellings are left alone.
void SplitEqualsForms(int argc, char** argv, std::vector<std::string>* storage, std::vector<char*>* out);

}  // namespace qairt_cli
