#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace qairt {

Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view what) {
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
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) return fail("chmod");
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
