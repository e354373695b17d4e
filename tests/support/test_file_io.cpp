// Reading a mapped window from its file (StaticDataReader) and writing a
// file around the page cache (StreamWriter): the bytes are those of the
// mapping and of the pieces written, whatever path each call takes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support/static_data.h"
#include "support/stream_writer.h"

using namespace qairt;

namespace {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name) : path((std::filesystem::temp_directory_path() / name).string()) {}
  ~TempFile() { std::remove(path.c_str()); }
};

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

void Save(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a reader copies a mapped window's bytes from its file, or from memory", "[support][io]") {
  const ScopedFileReads pread_reads(StaticDataReader::FileReads::kPread);
  TempFile f("qairt_reader_window.bin");
  const std::vector<uint8_t> file = Bytes(100000, 1);
  Save(f.path, file);
  const size_t offset = 777, length = 90000;
  const auto window = StaticData::MapFile(f.path, offset, length).value();
  CHECK(window->file_path() == f.path);
  CHECK(window->file_offset() == offset);
  {
    const StaticDataReader reader(*window);
    REQUIRE(reader.from_file());
    std::vector<uint8_t> got(length);
    reader.Read(0, length, got.data());
    CHECK(std::equal(got.begin(), got.end(), file.begin() + offset));
    // Runs: 40 runs of 333 bytes, 1000 apart, from byte 5 of the window.
    std::vector<uint8_t> runs(40 * 333);
    reader.ReadRuns(5, 333, 1000, 40, runs.data());
    for (size_t i = 0; i < 40; ++i)
      CHECK(std::equal(runs.begin() + static_cast<std::ptrdiff_t>(i * 333),
                       runs.begin() + static_cast<std::ptrdiff_t>((i + 1) * 333),
                       file.begin() + static_cast<std::ptrdiff_t>(offset + 5 + i * 1000)));
  }
  // Another file renamed over its path: not that file's bytes, the mapping's.
  {
    TempFile other("qairt_reader_window_other.bin");
    Save(other.path, Bytes(100000, 9));
    REQUIRE(std::rename(other.path.c_str(), f.path.c_str()) == 0);
    const StaticDataReader replaced(*window);
    CHECK_FALSE(replaced.from_file());
    std::vector<uint8_t> got(length);
    replaced.Read(0, length, got.data());
    CHECK(std::equal(got.begin(), got.end(), file.begin() + offset));
  }
  // The file gone (its mapping stays valid): the bytes come from memory.
  std::remove(f.path.c_str());
  const StaticDataReader gone(*window);
  CHECK_FALSE(gone.from_file());
  std::vector<uint8_t> got(length);
  gone.Read(0, length, got.data());
  CHECK(std::equal(got.begin(), got.end(), file.begin() + offset));
  // Data that is not a file window: from memory.
  const auto owned = StaticData::Copy(file.data(), 1000);
  CHECK(owned->file_path().empty());
  const StaticDataReader mem(*owned);
  CHECK_FALSE(mem.from_file());
  std::vector<uint8_t> m(10);
  mem.Read(990, 10, m.data());
  CHECK(std::equal(m.begin(), m.end(), file.begin() + 990));
}

TEST_CASE("mapped files are read by pread or through the mapping, as set or as timed once", "[support][io]") {
  using FileReads = StaticDataReader::FileReads;
  TempFile f("qairt_reader_timed.bin");
  const std::vector<uint8_t> file = Bytes(9 << 20, 6);  // above the probe's 4 regions of 2 MiB
  Save(f.path, file);
  const auto big = StaticData::MapFile(f.path, 5, file.size() - 5).value();
  const auto small = StaticData::MapFile(f.path, 0, 4096).value();
  auto read_all = [&](const StaticDataReader& r) {
    std::vector<uint8_t> got(big->size());
    r.Read(0, got.size(), got.data());
    return std::equal(got.begin(), got.end(), file.begin() + 5);
  };
  {
    const ScopedFileReads set(FileReads::kMapping);
    const StaticDataReader r(*big);
    CHECK_FALSE(r.from_file());
    CHECK(r.fd() >= 0);  // kept for file-to-file copies
    CHECK(read_all(r));
  }
  {
    const ScopedFileReads set(FileReads::kPread);
    const StaticDataReader r(*big);
    CHECK(r.from_file());
    CHECK(read_all(r));
  }
  // Timed: a file too small to time is read with pread and decides nothing;
  // the first large one decides for every later reader, small ones too.
  // (Not forced by the environment meanwhile.)
  const char* forced = std::getenv("QAIRT_FILE_READS");
  const std::string was = forced ? forced : "";
  if (forced) ::unsetenv("QAIRT_FILE_READS");
  StaticDataReader::SetFileReads(FileReads::kTimed);
  CHECK(StaticDataReader(*small).from_file());
  const StaticDataReader timed(*big);
  CHECK(read_all(timed));
  for (int i = 0; i < 3; ++i) {
    CHECK(StaticDataReader(*big).from_file() == timed.from_file());
    CHECK(StaticDataReader(*small).from_file() == timed.from_file());
  }
  StaticDataReader::SetFileReads(FileReads::kTimed);
  if (!was.empty()) ::setenv("QAIRT_FILE_READS", was.c_str(), 1);
}

TEST_CASE("a stream writer's file holds the bytes written, direct or through the page cache", "[support][io]") {
  TempFile src("qairt_stream_writer_src.bin");
  const std::vector<uint8_t> source = Bytes(3 << 20, 2);
  Save(src.path, source);
  const auto window = StaticData::MapFile(src.path, 3, source.size() - 10).value();
  const auto owned = StaticData::Copy(source.data() + 100, 50000);
  // Pieces of odd sizes, some crossing the 8 MiB stage, file windows among
  // them, and a total that is not a multiple of the block.
  const std::vector<uint8_t> a = Bytes(5 << 20, 3), b = Bytes(4099, 4), c = Bytes(9 << 20, 5);
  std::vector<uint8_t> want;
  auto append = [&](const uint8_t* p, size_t n) { want.insert(want.end(), p, p + n); };
  append(a.data(), a.size());
  append(source.data() + 3 + 17, 1 << 20);  // window bytes [17, 17 + 1 MiB)
  append(b.data(), b.size());
  append(source.data() + 100, 50000);  // memory data, whole
  append(c.data(), c.size());
  append(source.data() + 3, source.size() - 10);  // the whole window
  append(b.data(), 13);
  for (const uint64_t expected : {uint64_t{1000}, StreamWriter::kDirectFrom}) {
    INFO((expected >= StreamWriter::kDirectFrom ? "direct when the file system allows" : "page cache"));
    TempFile out("qairt_stream_writer_out.bin");
    const int fd = ::open(out.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    {
      StreamWriter w(fd, out.path, "test file", expected);
      if (expected < StreamWriter::kDirectFrom) CHECK_FALSE(w.direct());
      REQUIRE(w.Write(a.data(), a.size()).ok());
      REQUIRE(w.WriteData(*window, 17, 17 + (1 << 20)).ok());
      REQUIRE(w.Write(b.data(), b.size()).ok());
      REQUIRE(w.WriteData(*owned, 0, owned->size()).ok());
      REQUIRE(w.Write(c.data(), c.size()).ok());
      REQUIRE(w.WriteData(*window, 0, window->size()).ok());
      REQUIRE(w.Write(b.data(), 13).ok());
      CHECK(w.written() == want.size());
      // Direct: the first 8 MiB stage is written in place, the second (full
      // at 16 MiB) by the background threads; the rest is the tail.
      CHECK(w.background_bytes() == (w.direct() ? uint64_t{8} << 20 : 0));
      REQUIRE(w.Finish().ok());
      CHECK_FALSE(w.direct());
    }
    // The descriptor is as it was: buffered writes of any size still work.
    CHECK((::fcntl(fd, F_GETFL) & O_DIRECT) == 0);
    REQUIRE(::write(fd, "xyz", 3) == 3);
    ::close(fd);
    std::vector<uint8_t> got = Load(out.path);
    REQUIRE(got.size() == want.size() + 3);
    CHECK(std::equal(want.begin(), want.end(), got.begin()));
    CHECK(std::string(got.end() - 3, got.end()) == "xyz");
  }
}

TEST_CASE("a stream writer leaves runs of zeros as holes, and the file reads the same", "[support][io]") {
  // A sparse source (a data run, a 20 MiB hole, a data run) mapped whole,
  // zeros from memory, and a zero tail: everything reads back; the long zero
  // runs cost no disk.
  TempFile src("qairt_stream_writer_sparse.bin");
  const std::vector<uint8_t> head = Bytes(100000, 6), tail = Bytes(70000, 7);
  const size_t src_size = head.size() + (size_t{20} << 20) + tail.size();
  {
    const int fd = ::open(src.path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
    REQUIRE(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(src_size - tail.size())) ==
            static_cast<ssize_t>(tail.size()));
    ::close(fd);
  }
  const auto sparse = StaticData::MapFile(src.path, 0, src_size).value();
  const std::vector<uint8_t> zeros(size_t{17} << 20, 0), a = Bytes(3 << 20, 8);
  std::vector<uint8_t> want;
  auto append = [&](const uint8_t* p, size_t n) { want.insert(want.end(), p, p + n); };
  append(a.data(), 12345);
  append(sparse->data(), src_size);
  append(zeros.data(), zeros.size());
  append(a.data(), a.size());
  append(zeros.data(), zeros.size());  // the file ends in a hole
  for (const uint64_t expected : {uint64_t{1000}, StreamWriter::kDirectFrom}) {
    INFO((expected >= StreamWriter::kDirectFrom ? "direct when the file system allows" : "page cache"));
    TempFile out("qairt_stream_writer_holes.bin");
    const int fd = ::open(out.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    uint64_t holes = 0;
    {
      StreamWriter w(fd, out.path, "test file", expected);
      REQUIRE(w.Write(a.data(), 12345).ok());
      REQUIRE(w.WriteData(*sparse, 0, src_size).ok());
      REQUIRE(w.Write(zeros.data(), zeros.size()).ok());
      REQUIRE(w.Write(a.data(), a.size()).ok());
      REQUIRE(w.Write(zeros.data(), zeros.size()).ok());
      REQUIRE(w.Finish().ok());
      holes = w.hole_bytes();
    }
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    ::close(fd);
    // At least the source's hole and the two zero runs, less a stage at
    // each end of each run (direct mode leaves whole 8 MiB stages only).
    CHECK(holes >= (size_t{20} << 20) + 2 * (size_t{17} << 20) - 6 * (size_t{8} << 20));
    CHECK(static_cast<uint64_t>(st.st_size) == want.size());
    // What the file system allocated: the data, not the holes (every file
    // system in use here keeps holes; one that filled them would fail this).
    CHECK(static_cast<uint64_t>(st.st_blocks) * 512 <= want.size() - holes + (size_t{1} << 20));
    const std::vector<uint8_t> got = Load(out.path);
    REQUIRE(got.size() == want.size());
    CHECK(got == want);
  }
}

TEST_CASE("a stream writer writes the zeros of a file it did not start (no holes, no seeks)", "[support][io]") {
  // Appending after existing content: a seek to its own count would land
  // inside the old bytes, so zero runs are written, and the file is whole.
  TempFile out("qairt_stream_writer_append.bin");
  const std::vector<uint8_t> old = Bytes(1000, 3), zeros(size_t{3} << 20, 0), a = Bytes(5000, 4);
  Save(out.path, old);
  const int fd = ::open(out.path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::lseek(fd, 0, SEEK_END) == static_cast<off_t>(old.size()));
  {
    StreamWriter w(fd, out.path, "test file", StreamWriter::kDirectFrom);
    REQUIRE(w.Write(zeros.data(), zeros.size()).ok());
    REQUIRE(w.Write(a.data(), a.size()).ok());
    REQUIRE(w.Finish().ok());
    CHECK(w.hole_bytes() == 0);
  }
  ::close(fd);
  std::vector<uint8_t> want = old;
  want.insert(want.end(), zeros.begin(), zeros.end());
  want.insert(want.end(), a.begin(), a.end());
  CHECK(Load(out.path) == want);
}

TEST_CASE("a stream writer's background stages land at their offsets, in any order they finish",
          "[support][io][threads]") {
  // 60 MB in pieces of random sizes (some larger than a stage, some file
  // windows): the first 8 MiB stage in place, six more by the two
  // background threads, the tail in place at Finish.
  TempFile src("qairt_stream_writer_bg_src.bin");
  const std::vector<uint8_t> source = Bytes(5 << 20, 21);
  Save(src.path, source);
  const auto window = StaticData::MapFile(src.path, 0, source.size()).value();
  TempFile out("qairt_stream_writer_bg_out.bin");
  const int fd = ::open(out.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  const std::vector<uint8_t> pool = Bytes(12 << 20, 22);
  std::mt19937 rng(23);
  std::vector<uint8_t> want;
  bool direct = false;
  uint64_t background = 0;
  {
    StreamWriter w(fd, out.path, "test file", StreamWriter::kDirectFrom);
    while (want.size() < (size_t{60} << 20)) {
      if (rng() % 4 == 0) {
        const size_t begin = rng() % (source.size() - 1);
        const size_t end = begin + 1 + rng() % (source.size() - begin - 1);
        REQUIRE(w.WriteData(*window, begin, end).ok());
        want.insert(want.end(), source.begin() + static_cast<std::ptrdiff_t>(begin),
                    source.begin() + static_cast<std::ptrdiff_t>(end));
      } else {
        const size_t n = 1 + rng() % (rng() % 8 == 0 ? pool.size() - 1 : size_t{70000});
        const size_t at = rng() % (pool.size() - n + 1);
        REQUIRE(w.Write(pool.data() + at, n).ok());
        want.insert(want.end(), pool.begin() + static_cast<std::ptrdiff_t>(at),
                    pool.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
    }
    direct = w.direct();
    background = w.background_bytes();
    REQUIRE(w.Finish().ok());
  }
  ::close(fd);
  const std::vector<uint8_t> got = Load(out.path);
  REQUIRE(got.size() == want.size());
  bool same = std::equal(want.begin(), want.end(), got.begin());  // a bool: Catch would print 60 MB
  CHECK(same);
  INFO((direct ? "direct" : "the file system refused O_DIRECT"));
  // Direct: every full stage after the first went to the threads.
  CHECK(background == (direct ? (want.size() / (size_t{8} << 20) - 1) * (size_t{8} << 20) : 0));
}

TEST_CASE("a stream writer copies a mapped window from the file that was mapped, not what is at its path now",
          "[support][io]") {
  TempFile src("qairt_stream_writer_renamed_src.bin");
  const std::vector<uint8_t> source = Bytes(1 << 20, 7);
  Save(src.path, source);
  const auto window = StaticData::MapFile(src.path, 100, 200000).value();
  // A save over the file it was loaded from: a new file renamed to its path.
  TempFile other("qairt_stream_writer_renamed_other.bin");
  Save(other.path, Bytes(1 << 20, 8));
  REQUIRE(std::rename(other.path.c_str(), src.path.c_str()) == 0);
  for (const uint64_t expected : {uint64_t{1000}, StreamWriter::kDirectFrom}) {
    INFO((expected >= StreamWriter::kDirectFrom ? "direct when the file system allows" : "page cache"));
    TempFile out("qairt_stream_writer_renamed_out.bin");
    const int fd = ::open(out.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    {
      StreamWriter w(fd, out.path, "test file", expected);
      REQUIRE(w.WriteData(*window, 0, window->size()).ok());
      REQUIRE(w.Finish().ok());
    }
    ::close(fd);
    const std::vector<uint8_t> got = Load(out.path);
    REQUIRE(got.size() == window->size());
    CHECK(std::equal(got.begin(), got.end(), source.begin() + 100));
  }
}

TEST_CASE("a stream writer reports a write error naming the file", "[support][io]") {
  const std::vector<uint8_t> a = Bytes(1000, 6);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);  // writes fail: EPIPE (SIGPIPE is ignored by the test runner or fails the test)
  ::signal(SIGPIPE, SIG_IGN);
  StreamWriter w(fds[1], "/somewhere/out.qairt", "container", 1000);
  const Status s = w.Write(a.data(), a.size());
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(s.message().find("/somewhere/out.qairt") != std::string::npos);
  ::close(fds[1]);
}

TEST_CASE("a stream writer reports a failed background write naming the file, and every later call too",
          "[support][io][threads]") {
  // A file size limit of 12 MB: the first 8 MB stage is written in place,
  // the next ones by the background threads, where the limit fails them
  // (EFBIG); the failure must come back on a later call.
  TempFile out("qairt_stream_writer_fsize.bin");
  const int fd = ::open(out.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  const std::vector<uint8_t> stage = Bytes(8 << 20, 9);
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = 12 << 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  Status s = Status::Ok();
  bool direct = false;
  uint64_t background = 0;
  {
    StreamWriter w(fd, out.path, "container", StreamWriter::kDirectFrom);
    direct = w.direct();
    for (int k = 0; k < 6 && s.ok(); ++k) s = w.Write(stage.data(), stage.size());
    background = w.background_bytes();
    if (s.ok()) s = w.Finish();
    CHECK(w.Write(stage.data(), stage.size()).code() == StatusCode::kIoError);
    CHECK(w.Finish().code() == StatusCode::kIoError);
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  ::close(fd);
  INFO((direct ? "direct, written in the background" : "the file system refused O_DIRECT"));
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(s.message().find(out.path) != std::string::npos);
  CHECK((background > 0) == direct);  // the failure was the background's
}
