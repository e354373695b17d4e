// qairt calibrate: calibration statistics for sharded calibration
// (qairt_calib.h, "Calibration statistics").
//   qairt calibrate -i MODEL --target T --input_list LIST [convert's shape,
//       rewrite and calibration options] [--shard K/N] [--ranges R.stats] -o OUT.stats
//   qairt calibrate --merge A.stats B.stats ... -o MERGED.stats
// The first runs convert's pipeline up to calibration (so the graph is the
// one convert calibrates) and writes the statistics of shard K of N (round
// 1 without --ranges, round 2 on the merged round 1 with it); the second
// merges shards of one round. qairt convert --calibration_stats MERGED.stats
// then calibrates from them.
#include <qairt/qairt_calib.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int RunCalibrateShard(int argc, char** argv);  // cmd_import.cpp

namespace {

int Merge(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--merge") continue;
    if (a == "-o" || a == "--output_path") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "qairt calibrate: %s needs a file name\n", a.c_str());
        return 2;
      }
      out = argv[++i];
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "qairt calibrate --merge: unknown option %s (usage: qairt calibrate --merge A.stats "
                           "B.stats ... -o MERGED.stats)\n", a.c_str());
      return 2;
    }
    inputs.push_back(a);
  }
  if (inputs.empty() || out.empty()) {
    std::fprintf(stderr, "qairt calibrate --merge: give the statistics files and -o MERGED.stats\n");
    return 2;
  }
  std::vector<qairt_calibration_stats_t*> parts;
  int rc = 0;
  for (const std::string& in : inputs) {
    qairt_calibration_stats_t* s = nullptr;
    if (qairt_status_t* st = qairt_calibration_stats_load_file(in.c_str(), &s)) {
      std::fprintf(stderr, "qairt calibrate: %s\n", qairt_status_message(st));
      qairt_status_free(st);
      rc = 1;
      break;
    }
    parts.push_back(s);
  }
  qairt_calibration_stats_t* merged = nullptr;
  if (rc == 0) {
    qairt_status_t* st = qairt_calibration_stats_merge(parts.data(), parts.size(), &merged);
    if (!st) st = qairt_calibration_stats_write_file(merged, out.c_str());
    if (st) {
      // Parts are numbered in the message: name the files.
      std::fprintf(stderr, "qairt calibrate: cannot merge: %s\n", qairt_status_message(st));
      for (size_t i = 0; i < inputs.size(); ++i) std::fprintf(stderr, "  part %zu: %s\n", i + 1, inputs[i].c_str());
      qairt_status_free(st);
      rc = 1;
    } else {
      std::printf("merged %zu files: round %u, %llu samples, %s -> %s\n", inputs.size(),
                  qairt_calibration_stats_round(merged),
                  static_cast<unsigned long long>(qairt_calibration_stats_samples(merged)),
                  qairt_calibration_stats_complete(merged) ? "every shard" : "some shards (merge the rest too)",
                  out.c_str());
    }
  }
  qairt_calibration_stats_destroy(merged);
  for (auto* p : parts) qairt_calibration_stats_destroy(p);
  return rc;
}

}  // namespace

int RunCalibrate(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--merge") == 0) return Merge(argc, argv);
  return RunCalibrateShard(argc, argv);
}
