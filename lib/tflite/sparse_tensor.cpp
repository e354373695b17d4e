#include "tflite/sparse_tensor.h"

#include <cstring>
#include <functional>

namespace qairt::tflite_import {
namespace {

namespace fb = ::qairt::tflite::fb;

// One SparseIndexVector (int32, uint16 or uint8 values) as int64s.
bool IndexVector(fb::SparseIndexVector type, const void* table, std::vector<int64_t>* out) {
  out->clear();
  auto take = [&](const auto* values) {
    if (!values) return false;
    for (auto v : *values) out->push_back(static_cast<int64_t>(v));
    return true;
  };
  switch (type) {
    case fb::SparseIndexVector::Int32Vector:
      return table && take(static_cast<const fb::Int32Vector*>(table)->values());
    case fb::SparseIndexVector::Uint16Vector:
      return table && take(static_cast<const fb::Uint16Vector*>(table)->values());
    case fb::SparseIndexVector::Uint8Vector:
      return table && take(static_cast<const fb::Uint8Vector*>(table)->values());
    default:
      return false;
  }
}

// The checked layout: per traversal level, its format, dense size and (CSR)
// segments and indices; per dense dim, its block size.
struct Layout {
  size_t rank = 0;                  // dense rank
  std::vector<int64_t> order;       // traversal_order
  std::vector<int64_t> block_dim;   // block_map
  std::vector<int64_t> block_size;  // per block dim
  std::vector<bool> csr;            // per level
  std::vector<int64_t> size;        // per level: dense_size (DENSE) or the dim's extent (CSR)
  std::vector<std::vector<int64_t>> segments, indices;
};

// The dense size is not bounded by the file (a few stored values can claim a
// huge tensor): densified tensors are capped at 2^27 elements (at most 1 GiB
// at 8 bytes an element), far above any sparse model's weights.
constexpr uint64_t kMaxDenseElements = uint64_t{1} << 27;

Result<Layout> Check(const fb::SparsityParameters& sp, const std::vector<int64_t>& shape) {
  Layout l;
  l.rank = shape.size();
  uint64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d && total > kMaxDenseElements / static_cast<uint64_t>(d)))
      return InvalidArgument("a dense shape of more than 2^27 elements is not densified");
    total *= static_cast<uint64_t>(d);
  }
  if (sp.traversal_order())
    for (int32_t v : *sp.traversal_order()) l.order.push_back(v);
  if (sp.block_map())
    for (int32_t v : *sp.block_map()) l.block_dim.push_back(v);
  const size_t levels = l.rank + l.block_dim.size();
  if (l.order.size() != levels)
    return InvalidArgument("traversal_order has {} entries; a rank-{} tensor with {} block dims needs {}",
                           l.order.size(), l.rank, l.block_dim.size(), levels);
  std::vector<bool> seen(levels, false);
  for (size_t i = 0; i < levels; ++i) {
    const int64_t d = l.order[i];
    if (d < 0 || static_cast<size_t>(d) >= levels || seen[static_cast<size_t>(d)])
      return InvalidArgument("traversal_order {} is not a permutation of 0..{}", d, levels - 1);
    if (i < l.rank && static_cast<size_t>(d) >= l.rank)
      return InvalidArgument("traversal_order[{}] = {}: the tensor's {} dims come before its block dims", i, d,
                             l.rank);
    seen[static_cast<size_t>(d)] = true;
  }
  const auto* meta = sp.dim_metadata();
  if (!meta || meta->size() != levels)
    return InvalidArgument("dim_metadata has {} entries, traversal_order {}", meta ? meta->size() : 0, levels);
  // Block sizes: the dense size of the level that traverses each block dim.
  l.block_size.assign(l.block_dim.size(), 0);
  std::vector<int64_t> blocked(shape);
  std::vector<bool> blocked_dim(l.rank, false);
  for (size_t b = 0; b < l.block_dim.size(); ++b) {
    const int64_t d = l.block_dim[b];
    if (d < 0 || static_cast<size_t>(d) >= l.rank || blocked_dim[static_cast<size_t>(d)])
      return InvalidArgument("block_map[{}] = {} is not a distinct dim of the rank-{} tensor", b, d, l.rank);
    blocked_dim[static_cast<size_t>(d)] = true;
    for (size_t i = 0; i < levels; ++i)
      if (static_cast<size_t>(l.order[i]) == l.rank + b) l.block_size[b] = meta->Get(static_cast<uint32_t>(i))->dense_size();
    const int64_t bs = l.block_size[b];
    if (bs < 1 || shape[static_cast<size_t>(d)] % bs != 0)
      return InvalidArgument("block dim {} has size {}, which does not divide dim {} ({})", b, bs, d,
                             shape[static_cast<size_t>(d)]);
    blocked[static_cast<size_t>(d)] = shape[static_cast<size_t>(d)] / bs;
  }
  for (size_t i = 0; i < levels; ++i) {
    const fb::DimensionMetadata* m = meta->Get(static_cast<uint32_t>(i));
    const auto d = static_cast<size_t>(l.order[i]);
    const int64_t extent = d < l.rank ? blocked[d] : l.block_size[d - l.rank];
    l.csr.push_back(m->format() == fb::DimensionType::SPARSE_CSR);
    l.size.push_back(extent);
    l.segments.emplace_back();
    l.indices.emplace_back();
    if (!l.csr.back()) {
      if (m->format() != fb::DimensionType::DENSE)
        return InvalidArgument("dim_metadata[{}].format {} is neither DENSE nor SPARSE_CSR", i,
                               static_cast<int>(m->format()));
      if (m->dense_size() != extent)
        return InvalidArgument("dim_metadata[{}].dense_size = {}, but the dim it traverses has {}", i,
                               m->dense_size(), extent);
      continue;
    }
    if (!IndexVector(m->array_segments_type(), m->array_segments(), &l.segments.back()) ||
        !IndexVector(m->array_indices_type(), m->array_indices(), &l.indices.back()))
      return InvalidArgument("dim_metadata[{}]: a SPARSE_CSR level needs array_segments and array_indices", i);
    const auto& seg = l.segments.back();
    for (size_t k = 0; k < seg.size(); ++k)
      if (seg[k] < 0 || (k && seg[k] < seg[k - 1]) || static_cast<size_t>(seg[k]) > l.indices.back().size())
        return InvalidArgument("dim_metadata[{}].array_segments[{}] = {} is out of order or past the {} indices", i,
                               k, seg[k], l.indices.back().size());
    for (size_t k = 0; k < l.indices.back().size(); ++k)
      if (l.indices.back()[k] < 0 || l.indices.back()[k] >= extent)
        return InvalidArgument("dim_metadata[{}].array_indices[{}] = {} is outside the dim's {}", i, k,
                               l.indices.back()[k], extent);
  }
  return l;
}

// Visits every stored value in file order: `visit(dense index)`. A CSR level
// under parent position p takes segments p..p+1, which must exist.
Status Walk(const Layout& l, const std::vector<int64_t>& shape, const std::function<void(uint64_t)>& visit) {
  const size_t levels = l.order.size();
  std::vector<int64_t> at(levels, 0), dense(l.rank, 0);
  std::function<Status(size_t, int64_t)> level = [&](size_t i, int64_t parent) -> Status {
    if (i == levels) {
      for (size_t k = 0; k < l.rank; ++k) dense[static_cast<size_t>(l.order[k])] = at[k];
      for (size_t k = l.rank; k < levels; ++k) {
        const auto b = static_cast<size_t>(l.order[k]) - l.rank;
        const auto d = static_cast<size_t>(l.block_dim[b]);
        dense[d] = dense[d] * l.block_size[b] + at[k];
      }
      uint64_t flat = 0;
      for (size_t k = 0; k < l.rank; ++k) flat = flat * static_cast<uint64_t>(shape[k]) + static_cast<uint64_t>(dense[k]);
      visit(flat);
      return Status::Ok();
    }
    if (!l.csr[i]) {
      for (int64_t k = 0; k < l.size[i]; ++k) {
        at[i] = k;
        Status s = level(i + 1, parent * l.size[i] + k);
        if (!s.ok()) return s;
      }
      return Status::Ok();
    }
    const auto& seg = l.segments[i];
    if (parent < 0 || static_cast<size_t>(parent) + 1 >= seg.size())
      return InvalidArgument("dim_metadata[{}].array_segments has {} entries; position {} needs {}", i, seg.size(),
                             parent, parent + 2);
    for (int64_t k = seg[static_cast<size_t>(parent)]; k < seg[static_cast<size_t>(parent) + 1]; ++k) {
      at[i] = l.indices[i][static_cast<size_t>(k)];
      Status s = level(i + 1, k);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  };
  return level(0, 0);
}

}  // namespace

Result<uint64_t> SparseValueCount(const fb::SparsityParameters& sp, const std::vector<int64_t>& dense_shape) {
  auto l = Check(sp, dense_shape);
  if (!l.ok()) return l.status();
  uint64_t n = 0;
  Status s = Walk(l.value(), dense_shape, [&](uint64_t) { ++n; });
  if (!s.ok()) return s;
  return n;
}

Result<std::vector<uint8_t>> Densify(const fb::SparsityParameters& sp, const std::vector<int64_t>& dense_shape,
                                     size_t elem_bytes, const uint8_t* values, uint64_t value_bytes) {
  auto l = Check(sp, dense_shape);
  if (!l.ok()) return l.status();
  uint64_t total = 1;
  for (int64_t d : dense_shape) total *= static_cast<uint64_t>(d);
  std::vector<uint8_t> out(total * elem_bytes, 0);
  uint64_t next = 0;
  bool overrun = false, repeated = false;
  std::vector<bool> written(total, false);
  Status s = Walk(l.value(), dense_shape, [&](uint64_t flat) {
    if ((next + 1) * elem_bytes > value_bytes) {
      overrun = true;
      return;
    }
    repeated = repeated || written[flat];
    written[flat] = true;
    std::memcpy(out.data() + flat * elem_bytes, values + next * elem_bytes, elem_bytes);
    ++next;
  });
  if (!s.ok()) return s;
  if (overrun || next * elem_bytes != value_bytes)
    return InvalidArgument("the sparsity parameters visit {}{} values, but the buffer holds {}", overrun ? "more than " : "",
                           next, value_bytes / elem_bytes);
  if (repeated) return InvalidArgument("the sparsity parameters visit one element twice (repeated indices)");
  return out;
}

}  // namespace qairt::tflite_import
