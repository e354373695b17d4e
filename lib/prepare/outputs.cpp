// The outputs: the qaic-compile command line and the files written to the
// output folder (each replaced atomically; none left behind by a failure).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "prepare/prepare_internal.h"
#include "support/atomic_file.h"

namespace qairt::prepare::internal {

namespace {

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/=:+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void Preparer::CompileCommand() {
  std::string c = "/opt/qti-aic/exec/qaic-compile -m=" + ShellQuote(BaseName(o_.model_path)) +
                  " -aic-hw -aic-hw-version=ai100 -convert-to-fp16";
  if (specs_json_.empty())
    for (const auto& [k, v] : r_.symbols) c += " " + ShellQuote(fmt::format("-onnx-define-symbol={},{}", k, v));
  else
    c += " -network-specialization-config=specializations.json";
  if (!yaml_.empty()) c += " -node-precision-info=fp32_nodes.yaml";
  if (o_.batch_size > 0) c += fmt::format(" -batchsize={}", o_.batch_size);
  c += " -aic-binary-dir=qpc";
  r_.compile_command = c;
}

Status Preparer::Write() {
  if (o_.output_dir.empty()) return Status::Ok();
  const std::string& dir = o_.output_dir;
  const std::string model_name = BaseName(o_.model_path);
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes
  std::string model_bytes, data_bytes;
  Status s = SerializeModel(model_.proto, r_.external_data, model_name + ".data", &model_bytes, &data_bytes);
  if (!s.ok()) return s;
  files.push_back({model_name, std::move(model_bytes)});
  if (r_.external_data) files.push_back({model_name + ".data", std::move(data_bytes)});
  if (!specs_json_.empty()) files.push_back({"specializations.json", specs_json_});
  if (!yaml_.empty()) files.push_back({"fp32_nodes.yaml", yaml_});
  files.push_back({"compile_command.txt", "# run in this folder\n" + r_.compile_command + "\n"});
  for (const auto& f : files) r_.files.push_back(f.first);
  r_.files.push_back("report.txt");
  r_.files.push_back("report.json");
  files.push_back({"report.txt", r_.Text()});
  files.push_back({"report.json", r_.Json() + "\n"});

  bool created = false;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      r_.files.clear();
      return Error(StatusCode::kIoError, "output '{}' exists and is not a folder", dir);
    }
  } else {
    if (::mkdir(dir.c_str(), 0777) != 0) {
      r_.files.clear();
      return Error(StatusCode::kIoError, "cannot create output folder '{}': {}", dir, std::strerror(errno));
    }
    created = true;
  }
  std::vector<std::string> written;
  for (const auto& [name, bytes] : files) {
    const std::string path = dir + "/" + name;
    Status w = WriteFileAtomically(path, bytes, name);
    if (!w.ok()) {
      // No partial output: what this run wrote goes, and so does the folder
      // if this run made it.
      for (const auto& p : written) ::unlink(p.c_str());
      if (created) ::rmdir(dir.c_str());
      r_.files.clear();
      return w;
    }
    written.push_back(path);
  }
  return Status::Ok();
}

}  // namespace qairt::prepare::internal
