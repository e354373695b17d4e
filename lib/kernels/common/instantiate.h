// Definitions of the kernels of one ISA from the kernel lists: each family's
// <isa>.cc sets QAIRT_KERNEL to one of these and includes its kernels.inc;
// QAIRT_IF_<isa> (from isa/<isa>.h) keeps only this file's ISA.
#pragma once

#define QAIRT_IN_f32 float
#define QAIRT_IN_f16 ::qairt::kernels::Half
#define QAIRT_IN_bf16 ::qairt::kernels::BFloat16
#define QAIRT_OUT_q8 8
#define QAIRT_OUT_q16 16
#define QAIRT_OUT_q32 32
#define QAIRT_OUT_q4 4
#define QAIRT_OUT_q2 2
#define QAIRT_DQ_qu8 8, false
#define QAIRT_DQ_qs8 8, true
#define QAIRT_DQ_qu16 16, false
#define QAIRT_DQ_qs16 16, true
#define QAIRT_DQ_qs32 32, true
#define QAIRT_DQ_qu4 4, false
#define QAIRT_DQ_qs4 4, true
#define QAIRT_DQ_qu2 2, false
#define QAIRT_DQ_qs2 2, true

#define QAIRT_QUANT_KERNEL_DEF(isa, name, in, out)                                        \
  QAIRT_IF_##isa(void name(size_t n, const void* x, void* y, const QuantParams* p) {      \
    QAIRT_ISA_NS::Quant<QAIRT_IN_##in, QAIRT_OUT_##out>(n, x, y, p);                      \
  })

#define QAIRT_DEQUANT_KERNEL_DEF(isa, name, kind)                                         \
  QAIRT_IF_##isa(void name(size_t n, const void* q, float* y, const QuantParams* p) {     \
    QAIRT_ISA_NS::Dequant<QAIRT_DQ_##kind>(n, q, y, p);                                   \
  })

#define QAIRT_BIAS_KERNEL_DEF(isa, name)                                                  \
  QAIRT_IF_##isa(void name(size_t n, const float* b, int32_t* y, const BiasParams* p) {   \
    QAIRT_ISA_NS::BiasQuant(n, b, y, p);                                                  \
  })

#define QAIRT_STATS_KERNEL_DEF(isa, name, op) QAIRT_IF_##isa(QAIRT_STATS_DEF_##op(name))
#define QAIRT_STATS_DEF_minmax(name)                                                             \
  void name(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs) {    \
    QAIRT_ISA_NS::MinMax(n, x, first, block, mins, maxs);                                        \
  }
#define QAIRT_STATS_DEF_vminmax(name)                                                 \
  size_t name(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs) { \
    return QAIRT_ISA_NS::VMinMax(n, rows, ld, x, mins, maxs);                            \
  }
#define QAIRT_STATS_DEF_hist(name) \
  void name(size_t n, const float* x, const HistParams* p, uint64_t* counts) { QAIRT_ISA_NS::Hist(n, x, p, counts); }
#define QAIRT_STATS_DEF_qdqerr(name) \
  void name(size_t n, const float* x, const QdqErrParams* p, double* acc) { QAIRT_ISA_NS::QdqErr(n, x, p, acc); }
#define QAIRT_STATS_DEF_sqerr(name) \
  void name(size_t n, const float* x, const float* y, double* acc) { QAIRT_ISA_NS::SqErr(n, x, y, acc); }
#define QAIRT_STATS_DEF_nonfinite(name) \
  size_t name(size_t n, const float* x) { return QAIRT_ISA_NS::NonFinite(n, x); }

#define QAIRT_CVT_KERNEL_DEF(isa, name, dir) QAIRT_IF_##isa(QAIRT_CVT_DEF_##dir(name))
#define QAIRT_CVT_DEF_f32_f16(name) \
  void name(size_t n, const float* x, Half* y) { QAIRT_ISA_NS::F32ToF16(n, x, y); }
#define QAIRT_CVT_DEF_f16_f32(name) \
  void name(size_t n, const Half* x, float* y) { QAIRT_ISA_NS::F16ToF32(n, x, y); }

#define QAIRT_PACK_KERNEL_DEF(isa, name, op) QAIRT_IF_##isa(QAIRT_PACK_DEF_##op(name))
#define QAIRT_PACK_DEF_pack4(name) \
  void name(size_t n, const int8_t* q, uint8_t* y) { QAIRT_ISA_NS::Pack<4>(n, q, y); }
#define QAIRT_PACK_DEF_pack2(name) \
  void name(size_t n, const int8_t* q, uint8_t* y) { QAIRT_ISA_NS::Pack<2>(n, q, y); }
#define QAIRT_PACK_DEF_unpacks4(name) \
  void name(size_t n, const uint8_t* p, int8_t* q) { QAIRT_ISA_NS::Unpack<4, true>(n, p, q); }
#define QAIRT_PACK_DEF_unpacku4(name) \
  void name(size_t n, const uint8_t* p, int8_t* q) { QAIRT_ISA_NS::Unpack<4, false>(n, p, q); }
#define QAIRT_PACK_DEF_unpacks2(name) \
  void name(size_t n, const uint8_t* p, int8_t* q) { QAIRT_ISA_NS::Unpack<2, true>(n, p, q); }
#define QAIRT_PACK_DEF_unpacku2(name) \
  void name(size_t n, const uint8_t* p, int8_t* q) { QAIRT_ISA_NS::Unpack<2, false>(n, p, q); }
