// Atomic replacement of an output file. The bytes go to an unnamed file
// (O_TMPFILE) in the destination's folder, which is fsynced, named with a
// hidden temporary name ".<name>.qairt-tmp-..." and renamed over the
// destination; the folder is fsynced after the rename. Where the filesystem
// has no O_TMPFILE, a hidden named temporary (mkstemp: O_EXCL, never through
// a symlink) takes the bytes instead. On any error the temporary is removed
// and the destination is untouched. A process killed mid-write (SIGKILL,
// power loss) leaves the old file or the new one at the destination and,
// with O_TMPFILE, nothing else (without it, at most the hidden temporary).
// Test hook: QAIRT_TEST_STOP_IN_WRITE (atomic_file.cpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "support/status.h"

namespace qairt {

// Prefix of the temporaries after the leading '.' and the destination name.
inline constexpr std::string_view kAtomicTempMarker = ".qairt-tmp-";

// `what` names the output in messages ("container", "encodings", ...).
Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view what);

// The same with the bytes produced by `write(fd)` straight into the
// temporary (e.g. protobuf serialization, no second copy of the weights in
// memory). An error from `write` is reported naming the path.
Status WriteFileAtomicallyWith(const std::string& path, std::string_view what,
                               const std::function<Status(int fd)>& write);

}  // namespace qairt
