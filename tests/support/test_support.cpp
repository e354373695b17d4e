#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "ir/graph.h"
#include "support/huge_pages.h"
#include "support/json_writer.h"
#include "support/static_data.h"

namespace qairt {
namespace {

std::string TempFile(const std::string& contents) {
  char path[] = "/tmp/qairt_test_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()));
  close(fd);
  return path;
}

long MinorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

TEST_CASE("FaultInPages faults in every page of the range, on any number of threads", "[support]") {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (const unsigned threads : {1u, 2u, 3u, 8u}) {
    for (const size_t bytes : {size_t{0}, size_t{1}, page + 1, kHugePageBytes * 3 + 5 * page + 7}) {
      INFO(threads << " threads, " << bytes << " bytes");
      const size_t mapped = bytes + page;  // a page past the range stays untouched
      void* m = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      REQUIRE(m != MAP_FAILED);
      auto* p = static_cast<char*>(m);
      FaultInPages(p, bytes, threads);
      // Writing every page of the range now takes no page fault; the page
      // after it still does (the count can see a fault).
      const long before = MinorFaults();
      for (size_t i = 0; i < bytes; i += page) static_cast<volatile char*>(p)[i] = 1;
      if (bytes) static_cast<volatile char*>(p)[bytes - 1] = 1;
      const long after_range = MinorFaults();
      static_cast<volatile char*>(p)[(bytes + page - 1) / page * page] = 1;
      const long after_next = MinorFaults();
      CHECK(after_range - before == 0);
      CHECK(after_next - after_range >= 1);
      ::munmap(m, mapped);
    }
  }
}

TEST_CASE("static data can be memory-mapped without a copy", "[support]") {
  std::string bytes(64, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
  const std::string path = TempFile(bytes);
  auto mapped = StaticData::MapFile(path, 16, 32);
  REQUIRE(mapped.ok());
  CHECK(mapped.value()->origin() == StaticDataOrigin::kMapped);
  CHECK(mapped.value()->size() == 32);
  CHECK(mapped.value()->data()[0] == 16);

  // A graph constant over the mapping points into it, and clones share it.
  Graph g;
  auto t = g.AddConstant("w", DType::kFloat32, Shape{8}, mapped.value());
  REQUIRE(t.ok());
  CHECK(g.tensor(t.value()).data->data() == mapped.value()->data());
  Graph copy = g;
  CHECK(copy.tensor(t.value()).data->data() == mapped.value()->data());
  std::remove(path.c_str());
  // The mapping outlives the file's name.
  CHECK(copy.tensor(t.value()).data->data()[31] == 47);
}

TEST_CASE("mapping rejects windows outside the file, naming it", "[support]") {
  const std::string path = TempFile(std::string(10, 'x'));
  auto past_end = StaticData::MapFile(path, 8, 4);
  REQUIRE(!past_end.ok());
  CHECK(past_end.status().message().find(path) != std::string::npos);
  auto overflow = StaticData::MapFile(path, UINT64_MAX - 1, 4);
  CHECK(!overflow.ok());
  auto missing = StaticData::MapFile(path + ".missing", 0, 1);
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::kIoError);
  auto dir = StaticData::MapFile("/tmp", 0, 0);
  CHECK(!dir.ok());
  std::remove(path.c_str());
}

TEST_CASE("borrowed static data is not copied", "[support]") {
  float values[4] = {1, 2, 3, 4};
  auto borrowed = StaticData::Borrow(values, sizeof values);
  CHECK(borrowed->data() == reinterpret_cast<const uint8_t*>(values));
  CHECK(!borrowed->owned());
  auto copied = StaticData::Copy(values, sizeof values);
  CHECK(copied->data() != reinterpret_cast<const uint8_t*>(values));
  CHECK(copied->owned());
}

TEST_CASE("JSON writer escapes hostile strings", "[support]") {
  JsonWriter w;
  w.BeginObject();
  w.Key("name");
  w.String(std::string("a\"b\\c\n\x01\xff\xc3\xa9", 10));
  w.Key("nums");
  w.BeginArray();
  w.Double(1.5);
  w.Double(std::numeric_limits<double>::infinity());
  w.Int(-3);
  w.EndArray();
  w.EndObject();
  CHECK(w.str() == "{\"name\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\xc3\xa9\",\"nums\":[1.5,null,-3]}");
}

}  // namespace
}  // namespace qairt

#include "capi/capi_internal.h"

namespace qairt {
namespace {

TEST_CASE("C API maps constants from a file and names file or tensor on error", "[support][capi]") {
  std::string bytes(8 + 16, '\0');
  const float w[4] = {1.0f, -2.0f, 3.0f, 0.5f};
  std::memcpy(&bytes[8], w, sizeof w);
  const std::string path = TempFile(bytes);
  qairt_graph_t* g = nullptr;
  REQUIRE(qairt_graph_create(nullptr, &g) == nullptr);
  qairt_tensor_desc d;
  qairt_tensor_desc_init(&d);
  d.name = "weight";
  d.dtype = QAIRT_DTYPE_FLOAT32;
  const int64_t dims[1] = {4};
  d.rank = 1;
  d.dims = dims;
  qairt_tensor_id id = QAIRT_INVALID_ID;
  REQUIRE(qairt_graph_add_constant_mapped(g, &d, path.c_str(), 8, 16, &id) == nullptr);
  const void* data = nullptr;
  size_t size = 0;
  REQUIRE(qairt_graph_tensor_data(g, id, &data, &size) == nullptr);
  CHECK(size == 16);
  CHECK(static_cast<const float*>(data)[1] == -2.0f);

  qairt_status_t* s = qairt_graph_add_constant_mapped(g, &d, path.c_str(), 16, 16, &id);  // past the end
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  CHECK(std::string(qairt_status_message(s)).find(path) != std::string::npos);
  qairt_status_free(s);
  d.name = "short";
  s = qairt_graph_add_constant_mapped(g, &d, path.c_str(), 0, 12, &id);  // 12 bytes for 4 floats
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  CHECK(std::string(qairt_status_message(s)).find("'short'") != std::string::npos);
  qairt_status_free(s);
  qairt_graph_destroy(g);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace qairt
