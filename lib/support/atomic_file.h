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
#include <initializer_list>
#include <string>
#include <string_view>

#include "support/status.h"

namespace qairt {

// Prefix of the temporaries after the leading '.' and the destination name.
inline constexpr std::string_view kAtomicTempMarker = ".qairt-tmp-";

// `what` names the output in messages ("container", "encodings", ...).
Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view what);

// One output being written: Create opens the unnamed temporary, the caller
// writes through fd() (write or pwrite; it may also read back), Commit names
// it and renames it over the path. Destroyed without Commit, nothing is left.
// Outputs that belong together (a model and its external data) are all
// written first and committed last, in the order a reader needs them.
class AtomicFile {
 public:
  static Result<AtomicFile> Create(const std::string& path, std::string_view what);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // fsync, name, rename over path(), fsync the folder. Errors name the path.
  Status Commit();
  // Commits several outputs in the given order (a reader's order: data
  // before the model that names it), after every one of them is complete
  // and fsynced: a process killed before the first rename leaves no new
  // file; only the instants between the renames expose a partial set.
  static Status CommitInOrder(std::initializer_list<AtomicFile*> files);

 private:
  AtomicFile() = default;
  Status CommitWithoutTestStop();
  void Discard();
  Status Io(std::string_view step, int err) const;
  Status Fail(std::string_view step);

  std::string path_, what_, dir_, tmp_;
  int fd_ = -1;
  bool unnamed_ = false;  // O_TMPFILE: no name to remove on discard
};

// The same with the bytes produced by `write(fd)` straight into the
// temporary (e.g. protobuf serialization, no second copy of the weights in
// memory). An error from `write` is reported naming the path.
Status WriteFileAtomicallyWith(const std::string& path, std::string_view what,
                               const std::function<Status(int fd)>& write);

}  // namespace qairt
