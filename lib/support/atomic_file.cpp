#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace qairt {

namespace {

// The process umask without changing it (umask(2) would race with other
// threads creating files): Linux reports it in /proc/self/status.
mode_t ProcessUmask() {
  int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 022;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 022;
  buf[n] = '\0';
  const char* line = std::strstr(buf, "Umask:");
  unsigned value = 022;
  if (!line || std::sscanf(line, "Umask: %o", &value) != 1) return 022;
  return static_cast<mode_t>(value & 0777);
}

Status WriteAll(int fd, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error(StatusCode::kIoError, "write: {}", std::strerror(n == 0 ? EIO : errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view what) {
  return WriteFileAtomicallyWith(path, what, [&](int fd) { return WriteAll(fd, bytes); });
}

namespace {

// Test hook (tests/hostile): QAIRT_TEST_STOP_IN_WRITE=<text> stops the
// process (SIGSTOP) inside every write whose destination contains <text>,
// once its bytes are in the file and before the file has a name, so a test
// can kill it at exactly that point. Unset in normal use (one getenv per
// file written: nothing next to the write itself).
void StopHereForTest(const std::string& path) {
  const char* const hook = std::getenv("QAIRT_TEST_STOP_IN_WRITE");
  if (hook && *hook && path.find(hook) != std::string::npos) ::raise(SIGSTOP);
}

// A name for the temporary, unique in `prefix`'s folder: mkstemp's pattern
// with an O_EXCL create, so nothing planted there is followed.
int CreateNamedTemporary(std::string* tmp) {
  std::vector<char> tmpl(tmp->begin(), tmp->end());
  for (const char c : std::string_view("XXXXXX")) tmpl.push_back(c);
  tmpl.push_back('\0');
  const int fd = ::mkstemp(tmpl.data());
  if (fd >= 0) tmp->assign(tmpl.data());
  return fd;
}

// Gives the unnamed (O_TMPFILE) file `fd` the name `*tmp` + a unique suffix:
// linkat by descriptor, else through /proc. False when neither works here
// (a filesystem or sandbox without them): the caller copies the bytes.
bool NameUnnamedFile(int fd, std::string* tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = fmt::format("{}{}-{}", *tmp, ::getpid(), counter.fetch_add(1));
    if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return *tmp = name, true;
    if (errno == EEXIST) continue;
    const std::string proc = fmt::format("/proc/self/fd/{}", fd);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return *tmp = name, true;
    if (errno == EEXIST) continue;
    return false;
  }
  return false;
}

// Copies the whole of `from` (read from offset 0) into `to`.
bool CopyAll(int from, int to) {
  char buf[1 << 16];
  for (off_t off = 0;;) {
    const ssize_t n = ::pread(from, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (!WriteAll(to, std::string_view(buf, static_cast<size_t>(n))).ok()) return false;
    off += n;
  }
}

}  // namespace

Result<AtomicFile> AtomicFile::Create(const std::string& path, std::string_view what) {
  AtomicFile f;
  f.path_ = path;
  f.what_ = std::string(what);
  if (path.empty()) return InvalidArgument("cannot write the {}: the output path is empty", what);
  const size_t slash = path.rfind('/');
  f.dir_ = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    return InvalidArgument("cannot write the {} '{}': not a file name", what, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return f.Io("the path is a directory", EISDIR);

  f.tmp_ = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "." + name;
  f.tmp_ += kAtomicTempMarker;
  // An unnamed file (O_TMPFILE) while the bytes go in: a writer killed before
  // the end leaves nothing behind. Where the filesystem has none, a hidden
  // named temporary.
  f.fd_ = ::open(f.dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  f.unnamed_ = f.fd_ >= 0;
  if (!f.unnamed_) {
    f.fd_ = CreateNamedTemporary(&f.tmp_);
    if (f.fd_ < 0) return f.Io("cannot create a temporary file in '" + f.dir_ + "'", errno);
  }
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)), what_(std::move(o.what_)), dir_(std::move(o.dir_)), tmp_(std::move(o.tmp_)),
      fd_(o.fd_), unnamed_(o.unnamed_) {
  o.fd_ = -1;
}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    Discard();
    path_ = std::move(o.path_);
    what_ = std::move(o.what_);
    dir_ = std::move(o.dir_);
    tmp_ = std::move(o.tmp_);
    fd_ = o.fd_;
    unnamed_ = o.unnamed_;
    o.fd_ = -1;
  }
  return *this;
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!unnamed_) ::unlink(tmp_.c_str());
  fd_ = -1;
}

Status AtomicFile::Io(std::string_view step, int err) const {
  return Error(StatusCode::kIoError, "cannot write the {} '{}': {}: {}", what_, path_, step, std::strerror(err));
}

Status AtomicFile::Fail(std::string_view step) {
  const int err = errno;
  Discard();
  return Io(step, err);
}

Status AtomicFile::Commit() {
  StopHereForTest(path_);
  return CommitWithoutTestStop();
}

Status AtomicFile::CommitInOrder(std::initializer_list<AtomicFile*> files) {
  for (AtomicFile* f : files) StopHereForTest(f->path_);
  for (AtomicFile* f : files)
    if (f->fd_ >= 0 && ::fsync(f->fd_) != 0) return f->Fail("fsync");
  for (AtomicFile* f : files) QAIRT_RETURN_IF_ERROR(f->CommitWithoutTestStop());
  return Status::Ok();
}

Status AtomicFile::CommitWithoutTestStop() {
  if (fd_ < 0) return Error(StatusCode::kInternal, "the {} '{}' was already committed or discarded", what_, path_);
  // mkstemp creates 0600 and O_TMPFILE ignores no umask bits we can rely on
  // everywhere: give the file the permissions open() would have.
  if (::fchmod(fd_, 0666 & ~ProcessUmask()) != 0) return Fail("chmod");
  if (::fsync(fd_) != 0) return Fail("fsync");
  if (unnamed_ && !NameUnnamedFile(fd_, &tmp_)) {
    // No way to link an unnamed file here: copy it into a named temporary.
    const int named = CreateNamedTemporary(&tmp_);
    if (named < 0) return Fail("cannot create a temporary file in '" + dir_ + "'");
    const bool copied = CopyAll(fd_, named) && ::fsync(named) == 0 && ::fchmod(named, 0666 & ~ProcessUmask()) == 0;
    const int err = errno;
    ::close(fd_);
    fd_ = named;
    unnamed_ = false;
    if (!copied) {
      Discard();
      return Io("copy into the temporary", err ? err : EIO);
    }
  }
  unnamed_ = false;  // from here on a name exists that Discard must remove
  if (::close(fd_) != 0) {
    const int err = errno;
    fd_ = -1;
    ::unlink(tmp_.c_str());
    return Io("close", err);
  }
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    return Io("rename", err);
  }
  // Make the rename durable (best effort: not every filesystem fsyncs folders).
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status WriteFileAtomicallyWith(const std::string& path, std::string_view what,
                               const std::function<Status(int fd)>& write) {
  Result<AtomicFile> file = AtomicFile::Create(path, what);
  if (!file.ok()) return file.status();
  if (Status s = write(file.value().fd()); !s.ok()) {
    // A writer that named the file already (a stream writer's I/O error)
    // is not wrapped in a second "cannot write ... '<path>'".
    if (s.message().find(path) != std::string::npos) return s;
    return Error(s.code(), "cannot write the {} '{}': {}", what, path, s.message());
  }
  return file.value().Commit();
}

}  // namespace qairt
