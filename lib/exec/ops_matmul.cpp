// Matrix-product kernels: fully connected and matmul (batch dims broadcast
// as numpy does).
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <vector>

#include "exec/kernel.h"

namespace qairt::exec {
namespace {

using Ints = std::vector<int64_t>;

Status FullyConnected(Ctx& c) {
  const Buf& w = c.in(1);
  Buf& y = c.out(0);
  if (w.rank() != 2) return c.Fail("weight must be 2-D, got rank {}", w.rank());
  const int64_t n = w.dims[0], k = w.dims[1];
  if (k == 0 || c.in(0).count % k != 0) return c.Fail("input of {} elements is not a multiple of K={}", c.in(0).count, k);
  const int64_t m = c.in(0).count / k;
  if (m * n != y.count) return c.Fail("output has {} elements, expected {}", y.count, m * n);
  // Summed as ONNX Runtime sums the exported op (gemm.cpp): Gemm(transB=1)
  // starts from the bias; MatMul with the weight transposed, then Add.
  const float* b = c.has_in(2) ? c.F32(2) : nullptr;
  // The weight may be held as its [K, N] source (Buf::transposed): the same
  // product with B read untransposed.
  const bool tb = !w.transposed;
  const int64_t ldb = w.transposed ? n : k;
  if (FullyConnectedExportsAsGemm(c.op(), c.in(0).rank())) {
    if (b)
      for (int64_t i = 0; i < m; ++i) std::copy(b, b + n, y.f() + i * n);
    Gemm(false, tb, m, n, k, 1.0f, c.F32(0), k, c.F32(1), ldb, b ? 1.0f : 0.0f, y.f(), n, GemmView{false, true});
    return Status::Ok();
  }
  Gemm(false, tb, m, n, k, 1.0f, c.F32(0), k, c.F32(1), ldb, 0.0f, y.f(), n, GemmView{false, false});
  if (b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) y.f()[i * n + j] += b[j];
  return Status::Ok();
}

Status MatMul(Ctx& c) {
  const Buf& a = c.in(0);
  const Buf& b = c.in(1);
  Buf& y = c.out(0);
  const bool ta = c.Int("transpose_in0", 0) != 0, tb = c.Int("transpose_in1", 0) != 0;
  Ints ad = a.dims, bd = b.dims;
  if (ad.empty() || bd.empty()) return c.Fail("scalar operands are not supported");
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ta ? ad[ad.size() - 1] : ad[ad.size() - 2];
  const int64_t k = ta ? ad[ad.size() - 2] : ad[ad.size() - 1];
  const int64_t kb = tb ? bd[bd.size() - 1] : bd[bd.size() - 2];
  const int64_t n = tb ? bd[bd.size() - 2] : bd[bd.size() - 1];
  if (k != kb) return c.Fail("inner dimensions differ: {} vs {}", k, kb);
  const float* pa = c.F32(0);
  const float* pb = c.F32(1);
  const Ints abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  const size_t r = std::max(abatch.size(), bbatch.size());
  Ints obatch(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t av = i + abatch.size() >= r ? abatch[i + abatch.size() - r] : 1;
    const int64_t bv = i + bbatch.size() >= r ? bbatch[i + bbatch.size() - r] : 1;
    if (av != bv && av != 1 && bv != 1) return c.Fail("batch dims do not broadcast");
    obatch[i] = std::max(av, bv);
  }
  const int64_t nb = Count(obatch);
  if (nb * m * n != y.count) return c.Fail("output has {} elements, expected {}", y.count, nb * m * n);
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  // The export writes transposes as Transpose nodes: ONNX Runtime sees an
  // untransposed MatMul, and with a 2-D B one GEMM over all rows of A. The
  // summation order follows that (gemm.cpp), so a transposed A with a 2-D B
  // is transposed here first.
  const GemmView plain{false, false};
  if (Count(bbatch) == 1) {
    const float* rows = pa;
    if (ta) {
      float* t = c.Scratch(static_cast<size_t>(nb * m * k));
      for (int64_t bi = 0; bi < nb; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) t[(bi * m + i) * k + p] = pa[bi * k * m + p * m + i];
      rows = t;
    }
    Gemm(false, tb, nb * m, n, k, 1.0f, rows, k, pb, ldb, 0.0f, y.f(), n, plain);
    return Status::Ok();
  }
  const Ints sa = BroadcastStrides(abatch, obatch), sb = BroadcastStrides(bbatch, obatch);
  Ints idx(r, 0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < r; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    Gemm(ta, tb, m, n, k, 1.0f, pa + oa * m * k, lda, pb + ob * k * n, ldb, 0.0f, y.f() + bi * m * n, n, plain);
    NextIndex(&idx, obatch);
  }
  return Status::Ok();
}

}  // namespace

void RegisterMatMul(KernelTable* t) {
  auto& m = *t;
  m["FullyConnected"] = FullyConnected;
  m["MatMul"] = MatMul;
}

}  // namespace qairt::exec
