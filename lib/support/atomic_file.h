// Atomic replacement of an output file: the bytes go to a hidden temporary
// ".<name>.qairt-tmp-XXXXXX" in the destination's folder (mkstemp: created
// with O_EXCL, never through a symlink), which is fsynced and renamed over
// the destination; the folder is fsynced after the rename. On any error the
// temporary is removed and the destination is untouched. A process killed
// mid-write (SIGKILL, power loss) leaves the old file or the new one at the
// destination, plus at most that hidden temporary.
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
