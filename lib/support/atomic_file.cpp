#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

Status WriteFileAtomicallyWith(const std::string& path, std::string_view what,
                               const std::function<Status(int fd)>& write) {
  auto io = [&](std::string_view step, int err) {
    return Error(StatusCode::kIoError, "cannot write the {} '{}': {}: {}", what, path, step, std::strerror(err));
  };
  if (path.empty()) return InvalidArgument("cannot write the {}: the output path is empty", what);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    return InvalidArgument("cannot write the {} '{}': not a file name", what, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return io("the path is a directory", EISDIR);

  std::string tmp = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "." + name;
  tmp += kAtomicTempMarker;
  tmp += "XXXXXX";
  std::vector<char> tmpl(tmp.begin(), tmp.end());
  tmpl.push_back('\0');
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return io("cannot create a temporary file in '" + dir + "'", errno);
  tmp.assign(tmpl.data());
  auto fail = [&](std::string_view step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return io(step, err);
  };
  if (Status s = write(fd); !s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Error(s.code(), "cannot write the {} '{}': {}", what, path, s.message());
  }
  // mkstemp creates 0600; give the file the permissions open() would have.
  if (::fchmod(fd, 0666 & ~ProcessUmask()) != 0) return fail("chmod");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io("close", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io("rename", err);
  }
  // Make the rename durable (best effort: not every filesystem fsyncs folders).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace qairt
