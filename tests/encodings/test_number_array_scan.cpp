// The reader's fast path for numeric arrays must give, bit for bit, the
// doubles simdjson gives for the same text, and decline everything else.
#include <simdjson.h>

#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "encodings/encodings.h"
#include "encodings/number_array_scan.h"

namespace qairt::encodings {
namespace {

// The text with simdjson's padding (zeros, like SourceText's).
std::string Padded(const std::string& s) { return s + std::string(simdjson::SIMDJSON_PADDING + 16, '\0'); }

bool Scan(const std::string& text, NumberArrayScan* out, int max_rank = 8) {
  const std::string buf = Padded(text);
  if (!ScanNumberArray(buf.data(), max_rank, out)) return false;
  CHECK(out->end - buf.data() == static_cast<std::ptrdiff_t>(text.size()));
  return true;
}

// The reader's slow path: simdjson on-demand, every leaf through get_double()
// (which, unlike the DOM parser, reads integers beyond 64 bits too).
void Reference(simdjson::ondemand::value v, size_t depth, std::vector<int64_t>* shape, std::vector<double>* values) {
  simdjson::ondemand::json_type t = simdjson::ondemand::json_type::null;
  REQUIRE(!v.type().get(t));
  if (t == simdjson::ondemand::json_type::array) {
    int64_t n = 0;
    for (auto child : v.get_array()) {
      simdjson::ondemand::value c;
      REQUIRE(!child.get(c));
      Reference(c, depth + 1, shape, values);
      ++n;
    }
    if (shape->size() <= depth) shape->resize(depth + 1);
    (*shape)[depth] = n;
  } else {
    double d = 0;
    REQUIRE(!v.get_double().get(d));
    values->push_back(d);
  }
}

void ExpectSameAsSimdjson(const std::string& text) {
  INFO(text);
  NumberArrayScan scan;
  REQUIRE(Scan(text, &scan));
  simdjson::ondemand::parser parser;
  const simdjson::padded_string json(text);
  simdjson::ondemand::document doc;
  REQUIRE(!parser.iterate(json).get(doc));
  simdjson::ondemand::value root;
  REQUIRE(!doc.get_value().get(root));
  std::vector<int64_t> shape;
  std::vector<double> values;
  Reference(root, 0, &shape, &values);
  CHECK(scan.shape == shape);
  REQUIRE(scan.values.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    INFO("element " << i);
    CHECK(std::memcmp(&scan.values[i], &values[i], sizeof(double)) == 0);
  }
}

TEST_CASE("number array scan: tricky single numbers equal simdjson's", "[encodings][scan]") {
  const char* tokens[] = {
      "0", "-0", "0.0", "-0.0", "0e0", "-0E-5", "1", "-1", "9", "10", "0.5", "-0.5", "0.1", "0.2", "0.3",
      "1e22", "1e23", "1E-22", "1e-23", "9007199254740992", "9007199254740993", "9007199254740995",
      "1234567890123456789",                  // 19 digits
      "0.1234567890123456",                   // 16-digit fraction run
      "1.7976931348623157e308", "2.2250738585072014e-308", "1e-300", "123.456e-7", "-9.999999e+10",
      "0.000001", "0.0003317205", "0.006752321", "3.4028234663852886e+38", "1.401298464324817e-45",
      "12345678", "123456789", "1234567890123456", "12345678901234567", "0.000000000000000001",
      "4.940656458412465e-300", "7e-10", "7E+10", "1000000000000000000e5", "1e-30", "1e30", "5e-300",
  };
  for (const char* t : tokens) {
    ExpectSameAsSimdjson(std::string("[") + t + "]");
    ExpectSameAsSimdjson(std::string("[ ") + t + " , " + t + "\n]");
  }
}

size_t MantissaDigits(const char* token) {
  size_t n = 0;
  for (const char* c = token; *c && *c != 'e' && *c != 'E'; ++c) n += *c >= '0' && *c <= '9';
  return n;
}

TEST_CASE("number array scan: random numbers in every spelling equal simdjson's", "[encodings][scan]") {
  std::mt19937_64 rng(20261130);
  const char* formats[] = {"%.17g", "%.9g", "%.7g", "%.3g", "%g", "%e", "%.12e", "%.0f", "%.10f", "%.20f"};
  for (int round = 0; round < 60; ++round) {
    std::string text = "[";
    const char* fmt = formats[round % (sizeof(formats) / sizeof(*formats))];
    for (int i = 0; i < 300; ++i) {
      double v;
      switch (rng() % 4) {
        case 0: v = std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 80)); break;
        case 1: v = std::uniform_real_distribution<double>(-1e-2, 1e-2)(rng); break;
        case 2: v = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000); break;
        default: v = std::ldexp(1.0, static_cast<int>(rng() % 200) - 100) * 1.2345; break;
      }
      char buf[512];
      std::snprintf(buf, sizeof buf, fmt, v);
      if (MantissaDigits(buf) > 19) {  // declined: simdjson reads it
        NumberArrayScan scan;
        CHECK(!Scan(std::string("[") + buf + "]", &scan));
        continue;
      }
      if (text.size() > 1) text += (rng() % 5 == 0) ? " ,\t" : ",";
      text += buf;
    }
    text += "]";
    if (text != "[]") ExpectSameAsSimdjson(text);
  }
}

TEST_CASE("number array scan: nested shapes, whitespace and integers", "[encodings][scan]") {
  ExpectSameAsSimdjson("[[1,2,3],[4,5,6]]");
  ExpectSameAsSimdjson("[ [ 1 , 2 ] ,\n [ 3 , 4 ] ,\r\n\t[5,6] ]");
  ExpectSameAsSimdjson("[[[0.5],[1.5]],[[2.5],[3.5]],[[4],[5]]]");
  NumberArrayScan scan;
  REQUIRE(Scan("[[[1,2],[3,4],[5,6]]]", &scan));
  CHECK(scan.shape == std::vector<int64_t>{1, 3, 2});
  // Literal kinds are tracked (for zero points, where 1.0 is not 1).
  REQUIRE(Scan("[1, 2, 3]", &scan));
  CHECK(!scan.any_float_literal);
  REQUIRE(Scan("[1, 2.0, 3]", &scan));
  CHECK(scan.any_float_literal);
  REQUIRE(Scan("[1, 2e0]", &scan));
  CHECK(scan.any_float_literal);
  // Buffers are reused: a second scan starts empty.
  REQUIRE(Scan("[7]", &scan));
  CHECK(scan.values == std::vector<double>{7});
  CHECK(scan.shape == std::vector<int64_t>{1});
}

TEST_CASE("number array scan: declines what simdjson must read or report", "[encodings][scan]") {
  const char* declined[] = {
      "[]", "[[]]", "[[1],[]]", "[1,]", "[,1]", "[1 2]", "[01]", "[-01]", "[1.]", "[.5]", "[+1]", "[1e]",
      "[1e+]", "[-]", "[--1]", "[1.5.3]", "[0x10]", "[NaN]", "[-Infinity]", "[Infinity]", "[nan]", "[inf]",
      "[null]", "[true]", "[\"1\"]", "[{}]", "[1}", "[1", "[1,2", "[[1,2],[3]]", "[[1,2],3]", "[1,[2]]",
      "[1e400]", "[-1e400]", "[1e-400]", "[4.9e-324]", "[1.5x]", "1",
      "[00000000000000000000000000000000000000000]",
  };
  for (const char* t : declined) {
    INFO(t);
    NumberArrayScan scan;
    const std::string text = t;
    const std::string buf = Padded(text);
    CHECK(!ScanNumberArray(buf.data(), 8, &scan));
  }
  NumberArrayScan scan;
  // What follows the array is the caller's (simdjson's) to judge.
  const std::string trailing = Padded("[1]x");
  REQUIRE(ScanNumberArray(trailing.data(), 8, &scan));
  CHECK(scan.end - trailing.data() == 3);
  CHECK(!Scan("[[[1]]]", &scan, 2));  // deeper than max_rank
  CHECK(Scan("[[1]]", &scan, 2));
  // More than 19 digits: simdjson's reading is the reference, not ours.
  CHECK(!Scan("[12345678901234567890]", &scan));
  CHECK(!Scan("[0.00000000000000000001]", &scan));
  CHECK(Scan("[1234567890123456789]", &scan));
}

}  // namespace
}  // namespace qairt::encodings

namespace qairt::encodings {
namespace {

TEST_CASE("source text: large buffers are reused with their padding zeroed", "[encodings][source]") {
  const size_t big = (size_t{3} << 20) + 17, smaller = (size_t{3} << 19) + 5;
  const char* first_data = nullptr;
  {
    SourceText a(big);
    first_data = a.data();
    for (size_t i = 0; i < SourceText::kPadding; ++i) CHECK(a.data()[big + i] == 0);
    std::memset(a.mutable_data(), 'x', big);
  }
  SourceText b(smaller);  // takes the released buffer: its bytes past `smaller` were 'x'
  CHECK(b.data() == first_data);
  for (size_t i = 0; i < SourceText::kPadding; ++i) CHECK(b.data()[smaller + i] == 0);
  SourceText c(smaller);  // the spare is taken: a new buffer
  CHECK(c.data() != b.data());
  for (size_t i = 0; i < SourceText::kPadding; ++i) CHECK(c.data()[smaller + i] == 0);
  SourceText tiny(10);  // small texts live on the heap
  for (size_t i = 0; i < SourceText::kPadding; ++i) CHECK(tiny.data()[10 + i] == 0);
}

TEST_CASE("reading a large file twice gives the same entries", "[encodings][source]") {
  std::string json = "{\"version\": \"2.0.0\", \"encodings\": [";
  for (int i = 0; json.size() < (size_t{2} << 20); ++i)
    json += (i ? ",\n" : "") + std::string("{\"name\": \"t") + std::to_string(i) +
            "\", \"output_dtype\": \"int8\", \"y_scale\": [0.5, 0.25, " + std::to_string(i + 1) + "], \"axis\": 0}";
  json += "]}";
  for (int round = 0; round < 2; ++round) {
    Diags diags;
    auto file = ReadEncodingsBytes(json.data(), json.size(), "big.json", {}, &diags);
    REQUIRE(file.ok());
    const auto& entries = file.value().entries;
    REQUIRE(entries.size() > 1000);
    CHECK(entries[7].encoding.scales == std::vector<float>{0.5f, 0.25f, 8.0f});
    CHECK(entries.back().encoding.scales.back() == static_cast<float>(entries.size()));
  }
}

}  // namespace
}  // namespace qairt::encodings
