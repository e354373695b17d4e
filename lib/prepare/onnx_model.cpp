#include "prepare/onnx_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qairt::prepare {

namespace {

Status ReadWhole(const std::string& path, uint64_t offset, int64_t length, std::string* out, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(StatusCode::kIoError, "{} '{}': {}", what, path, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(StatusCode::kIoError, "{} '{}': not a regular file", what, path);
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset > size || (length >= 0 && static_cast<uint64_t>(length) > size - offset)) {
    ::close(fd);
    return Error(StatusCode::kParseError, "{} '{}': offset {} + length {} is beyond the file's {} bytes", what, path,
                 offset, length, size);
  }
  const uint64_t n = length >= 0 ? static_cast<uint64_t>(length) : size - offset;
  out->resize(n);
  uint64_t done = 0;
  while (done < n) {
    ssize_t k = ::pread(fd, out->data() + done, n - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      ::close(fd);
      return Error(StatusCode::kIoError, "{} '{}': read failed after {} of {} bytes", what, path, done, n);
    }
    done += static_cast<uint64_t>(k);
  }
  ::close(fd);
  return Status::Ok();
}

void VisitGraph(onnx::GraphProto* g, bool sub, const std::function<void(const TensorSite&)>& fn) {
  for (auto& init : *g->mutable_initializer()) fn(TensorSite{&init, init.name(), nullptr, sub});
  for (auto& node : *g->mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      if (node.op_type() == "Constant" && a.name() == "value" && a.has_t())
        fn(TensorSite{a.mutable_t(), node.output_size() ? node.output(0) : node.name(), &node, sub});
      if (a.has_g()) VisitGraph(a.mutable_g(), true, fn);
      for (auto& sg : *a.mutable_graphs()) VisitGraph(&sg, true, fn);
    }
  }
}

}  // namespace

void ForEachTensor(onnx::GraphProto* graph, const std::function<void(const TensorSite&)>& fn) {
  VisitGraph(graph, false, fn);
}

Status LoadModel(const std::string& path, LoadedModel* out) {
  std::string bytes;
  Status s = ReadWhole(path, 0, -1, &bytes, "model");
  if (!s.ok()) return s;
  if (bytes.size() > (uint64_t{2} << 30) - 1)
    return Error(StatusCode::kParseError, "model '{}': {} bytes is beyond protobuf's 2 GiB limit", path, bytes.size());
  if (!out->proto.ParseFromString(bytes))
    return Error(StatusCode::kParseError, "model '{}': not a valid ONNX ModelProto", path);
  out->path = path;
  const auto slash = path.find_last_of('/');
  out->dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  out->file_bytes = bytes.size();
  bytes.clear();
  bytes.shrink_to_fit();
  if (!out->proto.has_graph()) return Error(StatusCode::kParseError, "model '{}': no graph", path);

  Status first;
  ForEachTensor(out->proto.mutable_graph(), [&](const TensorSite& site) {
    onnx::TensorProto* t = site.tensor;
    if (!first.ok() || t->data_location() != onnx::TensorProto::EXTERNAL) return;
    std::string location;
    uint64_t offset = 0;
    int64_t length = -1;
    for (const auto& e : t->external_data()) {
      try {
        if (e.key() == "location") location = e.value();
        else if (e.key() == "offset") offset = std::stoull(e.value());
        else if (e.key() == "length") length = static_cast<int64_t>(std::stoull(e.value()));
      } catch (const std::exception&) {
        first = Error(StatusCode::kParseError, "model '{}': tensor '{}': external_data {} '{}' is not a number", path,
                      site.name, e.key(), e.value());
        return;
      }
    }
    // Confined to the model's folder: a model file must not make us read
    // arbitrary files.
    if (location.empty() || location[0] == '/' || location == ".." || location.rfind("../", 0) == 0 ||
        location.find("/../") != std::string::npos) {
      first = Error(StatusCode::kParseError,
                    "model '{}': tensor '{}': external data location '{}' must be a relative path inside the model's "
                    "folder",
                    path, site.name, location);
      return;
    }
    std::string data;
    Status r = ReadWhole(out->dir + "/" + location, offset, length, &data,
                         fmt::format("external data of tensor '{}'", site.name));
    if (!r.ok()) {
      first = r;
      return;
    }
    out->file_bytes += data.size();
    t->set_raw_data(std::move(data));
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    out->had_external = true;
  });
  return first;
}

bool ReadFloats(const onnx::TensorProto& t, std::vector<float>* out) {
  if (t.data_type() != onnx::TensorProto::FLOAT) return false;
  out->clear();
  if (!t.raw_data().empty()) {
    const std::string& r = t.raw_data();
    out->resize(r.size() / 4);
    if (!out->empty()) std::memcpy(out->data(), r.data(), out->size() * 4);
  } else {
    out->assign(t.float_data().begin(), t.float_data().end());
  }
  return true;
}

void WriteFloats(onnx::TensorProto* t, const std::vector<float>& v) {
  if (!t->raw_data().empty()) {
    std::string r(v.size() * 4, '\0');
    if (!v.empty()) std::memcpy(r.data(), v.data(), r.size());
    t->set_raw_data(std::move(r));
  } else {
    t->clear_float_data();
    for (float x : v) t->add_float_data(x);
  }
}

GraphIndex IndexGraph(const onnx::GraphProto& g) {
  GraphIndex ix;
  std::map<std::string, int> name_count;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& o : n.output())
      if (!o.empty()) ix.producer.emplace(o, i);
    for (int k = 0; k < n.input_size(); ++k)
      if (!n.input(k).empty()) ix.consumers[n.input(k)].push_back({i, k});
    if (!n.name().empty()) ++name_count[n.name()];
  }
  for (int i = 0; i < g.node_size(); ++i)
    if (!g.node(i).name().empty() && name_count[g.node(i).name()] == 1) ix.by_name[g.node(i).name()] = i;
  return ix;
}

Status SerializeModel(onnx::ModelProto model, bool external, const std::string& data_name, std::string* model_bytes,
                      std::string* data_bytes) {
  data_bytes->clear();
  if (external) {
    ForEachTensor(model.mutable_graph(), [&](const TensorSite& site) {
      onnx::TensorProto* t = site.tensor;
      if (t->raw_data().size() < 1024) return;
      while (data_bytes->size() % 64) data_bytes->push_back('\0');
      const size_t offset = data_bytes->size();
      data_bytes->append(t->raw_data());
      t->clear_raw_data();
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value(data_name);
      e = t->add_external_data();
      e->set_key("offset");
      e->set_value(std::to_string(offset));
      e = t->add_external_data();
      e->set_key("length");
      e->set_value(std::to_string(data_bytes->size() - offset));
    });
  }
  if (model.ByteSizeLong() > (uint64_t{2} << 30) - 1)
    return Error(StatusCode::kUnsupported, "the prepared model's graph is {} bytes even with external data (protobuf "
                 "limit 2 GiB)", model.ByteSizeLong());
  if (!model.SerializeToString(model_bytes)) return Error(StatusCode::kInternal, "failed to serialize the model");
  return Status::Ok();
}

}  // namespace qairt::prepare
