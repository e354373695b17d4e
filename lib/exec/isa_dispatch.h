// Per-ISA copies of the executor's hot loops, dispatched by the kernels' one
// decision: kernels::ActiveIsa() (the best level the host supports, lowered
// by QAIRT_FORCE_ISA or SetIsaOverride). A loop is written once as the body of
// QAIRT_EXEC_ISA_VARIANTS, which compiles it for AVX-512, AVX2 and the
// baseline; QAIRT_EXEC_ISA_CALL calls the copy for the active level. So one
// switch (QAIRT_FORCE_ISA=scalar) moves the kernels and the executor alike.
#pragma once

#include "kernels/hardware.h"

#if defined(__x86_64__) || defined(__i386__)
#define QAIRT_EXEC_ISA_VARIANTS(ret, name, params, ...)       \
  __attribute__((target("avx512f"))) ret name##_avx512 params __VA_ARGS__ \
  __attribute__((target("avx2"))) ret name##_avx2 params __VA_ARGS__      \
  ret name##_base params __VA_ARGS__
// The active level is read once per call (these run per row of an op).
#define QAIRT_EXEC_ISA_CALL(name, ...)                                                 \
  ([&](::qairt::kernels::Isa qairt_isa_) {                                             \
    return qairt_isa_ == ::qairt::kernels::Isa::kAvx512 ? name##_avx512(__VA_ARGS__)   \
           : qairt_isa_ == ::qairt::kernels::Isa::kAvx2 ? name##_avx2(__VA_ARGS__)     \
                                                        : name##_base(__VA_ARGS__);    \
  }(::qairt::kernels::ActiveIsa()))
#else
#define QAIRT_EXEC_ISA_VARIANTS(ret, name, params, ...) ret name##_base params __VA_ARGS__
#define QAIRT_EXEC_ISA_CALL(name, ...) name##_base(__VA_ARGS__)
#endif
