// compiler/cpu/EagerGemm.cpp — eager matmul and conv2d on the :cpu backend's GEMM.
#include "compiler/cpu/EagerGemm.h"

#include "compiler/cpu/Gemm.h"
#include "compiler/cpu/HostAbi.h"
#include "compiler/cpu/Jit.h"
#include "runtime/Interrupt.h"
#include "runtime/LinearAlgebra.h"
#include "runtime/NeuralNet.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <mutex>
#include <string>

// The packed GEMM and convolution of kernels/PackedGemm.h, compiled into the compiler
// (NativeKernels.cpp).
extern "C" {
#define TSL_DECLARE_PACKED(tag, T)                                                                 \
  void tsl_k_packedgemm_##tag(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs, T* c,     \
                              int64_t m, int64_t k, int64_t ldc, int64_t colBegin, int64_t colEnd,                  \
                              void (*kernel)(int64_t, const T*, const T*, T*, int64_t, int32_t),                  \
                              void (*rowsKernel)(int64_t, const T*, const T*, T*, int64_t, int32_t), int64_t mr,  \
                              int64_t nr, int64_t kc, int64_t mc, int64_t nc, const T* bias, int32_t biasAxis,   \
                              int32_t activation, T alpha, int32_t accumulate) noexcept;                 \
  void tsl_k_conv2d_##tag(const T* x, const T* w, T* out, const int64_t* sizes, int64_t chunk, int64_t begin,       \
                          int64_t end, void (*kernel)(int64_t, const T*, const T*, T*, int64_t, int32_t), int64_t mr, \
                          int64_t nr, int64_t kc, int32_t flipped) noexcept;                       \
  void tsl_k_conv2dgradweight_##tag(const T* x, const T* dy, T* dw, const int64_t* sizes, int64_t begin, int64_t end, \
                                    void (*kernel)(int64_t, const T*, const T*, T*, int64_t, int32_t),            \
                                    void (*rowsKernel)(int64_t, const T*, const T*, T*, int64_t, int32_t),        \
                                    int64_t mr, int64_t nr, int64_t kc, int64_t mc, int64_t nc) noexcept;
TSL_DECLARE_PACKED(f32, float)
TSL_DECLARE_PACKED(f64, double)
#undef TSL_DECLARE_PACKED
}

namespace tsl::compiler::cpu {

namespace {

/// The process's micro-kernels, compiled once into a JIT of their own.
struct MicroKernels {
  std::shared_ptr<Jit> jit;
  std::string features;
  std::unique_ptr<Jit::Code> code[2][2]; ///< [f32, f64][k-major, row-major A panels]
  GemmPlan plan[2];
  /// The other tile gemmPlanFor may choose (none without AVX-512), its code likewise.
  std::unique_ptr<Jit::Code> wideCode[2][2];
  GemmPlan widePlan[2];
  bool ready = false;
};

std::unique_ptr<Jit::Code> compileMicroKernel(const std::shared_ptr<Jit>& jit, DType dtype, const GemmPlan& plan,
                                              bool rowPanels) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(cat("tsl.eager.gemm.", dtypeName(dtype)), *context);
  llvm::Function* f = gemmMicroKernel(*module, dtype, plan, rowPanels);
  f->setLinkage(llvm::GlobalValue::ExternalLinkage);
  const std::string name = f->getName().str();
  prepareModule(*module, jit->machine());
  optimizeModule(*module, jit->machine(), 2); // as compiled code is, by default
  return Jit::add(jit, std::move(module), std::move(context), name, false, nullptr);
}

/// The micro-kernels, or nullptr if they cannot be made (then Eigen's GEMM runs).
MicroKernels* microKernels() {
  // Never destroyed: the JIT must outlive every engine's last eager matmul, and LLVM's
  // own statics go at exit in an order of their own.
  static MicroKernels* kernels = new MicroKernels;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      kernels->jit = std::make_shared<Jit>();
      const std::string features = kernels->jit->machine().getTargetFeatureString().str();
      kernels->features = features;
      for (DType dtype : {DType::F32, DType::F64}) {
        const size_t i = dtype == DType::F32 ? 0 : 1;
        kernels->plan[i] = gemmPlan(dtype, features);
        kernels->widePlan[i] = gemmPlanFor(dtype, features, 6, 256); // the wide tile, where there is one
        for (bool rows : {false, true}) {
          kernels->code[i][rows] = compileMicroKernel(kernels->jit, dtype, kernels->plan[i], rows);
          if (kernels->widePlan[i].nr != kernels->plan[i].nr)
            kernels->wideCode[i][rows] = compileMicroKernel(kernels->jit, dtype, kernels->widePlan[i], rows);
        }
      }
      kernels->ready = true;
    } catch (...) {
      kernels->ready = false; // Eigen's GEMM stays in use
      // Ctrl-C during the compile stops this product; the next one compiles them again
      // (call_once leaves the flag unset when its function throws).
      if (interruptRequested()) throw;
    }
  });
  return kernels->ready ? kernels : nullptr;
}

template <typename T, typename Fn>
TSL_CALLS_GENERATED_CODE void run(const MicroKernels& k, size_t which, Fn packed, const void* a, int64_t lda,
                                  const void* b, int64_t ldb, void* c, int64_t ldc, int64_t m, int64_t kk, int64_t n) {
  // The plan compiled code would choose for this shape (gemmPlanFor), so both agree.
  const GemmPlan chosen = gemmPlanFor(which == 0 ? DType::F32 : DType::F64, k.features, m, n);
  const bool wide = chosen.nr != k.plan[which].nr && k.wideCode[which][0];
  const GemmPlan& plan = wide ? k.widePlan[which] : k.plan[which];
  const auto& code = wide ? k.wideCode[which] : k.code[which];
  using Micro = void (*)(int64_t, const T*, const T*, T*, int64_t, int32_t);
  auto micro = reinterpret_cast<Micro>(reinterpret_cast<void*>(code[0]->entry()));
  auto microRows = reinterpret_cast<Micro>(reinterpret_cast<void*>(code[1]->entry()));
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* pc = static_cast<T*>(c);
  const GemmTiling tiling = gemmTiling(m, kk, n, plan, threadCount());
  parallelFor(tiling.chunks(), tiling.grain, [&](int64_t begin, int64_t end) TSL_CALLS_GENERATED_CODE {
    for (int64_t t = begin; t < end; ++t) {
      if (t > begin) checkInterrupt(); // a long product's tiles (the pool checks before each chunk)
      const GemmTiling::Chunk at = tiling.chunk(t);
      packed(pa + at.row * lda, lda, 1, pb, ldb, 1, pc + at.row * ldc, at.rows, kk, ldc, at.colBegin, at.colEnd,
             micro, microRows, plan.mr, plan.nr, plan.kc, plan.mc, plan.nc, nullptr, 1, 0, T(1), 0);
    }
  });
}

bool eagerGemm(DType dtype, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc, int64_t m,
               int64_t k, int64_t n) {
  if (dtype != DType::F32 && dtype != DType::F64) return false;
  const MicroKernels* kernels = microKernels();
  if (!kernels) return false;
  if (dtype == DType::F32) run<float>(*kernels, 0, tsl_k_packedgemm_f32, a, lda, b, ldb, c, ldc, m, k, n);
  else run<double>(*kernels, 1, tsl_k_packedgemm_f64, a, lda, b, ldb, c, ldc, m, k, n);
  return true;
}

template <typename T>
struct ConvKernels;
template <>
struct ConvKernels<float> {
  static constexpr auto conv = tsl_k_conv2d_f32;
  static constexpr auto gradWeight = tsl_k_conv2dgradweight_f32;
};
template <>
struct ConvKernels<double> {
  static constexpr auto conv = tsl_k_conv2d_f64;
  static constexpr auto gradWeight = tsl_k_conv2dgradweight_f64;
};

/// The packed convolution over a and b (b flipped: the input cotangent's convolution).
template <typename T>
TSL_CALLS_GENERATED_CODE void runConv(const MicroKernels& k, size_t which, const T* a, const T* b, T* out,
                                      const ConvSizes& s, bool flipped) {
  const GemmPlan& plan = k.plan[which];
  using Micro = void (*)(int64_t, const T*, const T*, T*, int64_t, int32_t);
  auto micro = reinterpret_cast<Micro>(reinterpret_cast<void*>(k.code[which][1]->entry())); // weights in row panels
  const int64_t sizes[] = {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ho, s.wo};
  const ConvTiling tiling = convTiling(s, plan, threadCount());
  parallelFor(tiling.tasks, tiling.grain, [&](int64_t begin, int64_t end) TSL_CALLS_GENERATED_CODE {
    ConvKernels<T>::conv(a, b, out, sizes, tiling.chunk, begin, end, micro, plan.mr, plan.nr, plan.kc, flipped ? 1 : 0);
  });
}

/// The weight cotangent: tiles of nr of its columns in parallel, each over every image.
template <typename T>
TSL_CALLS_GENERATED_CODE void runGradWeight(const MicroKernels& k, size_t which, const T* x, const T* dy, T* dw,
                                            const ConvSizes& s) {
  const GemmPlan& plan = k.plan[which];
  using Micro = void (*)(int64_t, const T*, const T*, T*, int64_t, int32_t);
  auto micro = reinterpret_cast<Micro>(reinterpret_cast<void*>(k.code[which][0]->entry()));
  auto microRows = reinterpret_cast<Micro>(reinterpret_cast<void*>(k.code[which][1]->entry()));
  const int64_t sizes[] = {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ho, s.wo};
  const int64_t tiles = (s.depth() + plan.nr - 1) / plan.nr;
  const int64_t perThread = (tiles + threadCount() - 1) / threadCount();
  parallelFor(tiles, std::max<int64_t>(1, perThread), [&](int64_t begin, int64_t end) TSL_CALLS_GENERATED_CODE {
    ConvKernels<T>::gradWeight(x, dy, dw, sizes, begin, end, micro, microRows, plan.mr, plan.nr, plan.kc, plan.mc,
                               plan.nc);
  });
}

template <typename T>
bool conv(const MicroKernels& kernels, size_t which, ConvPass pass, const void* a, const void* b, void* out,
          const ConvSizes& s) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  switch (pass) {
  case ConvPass::Forward:
    if (s.n * s.ho * s.wo * s.o == 0) return true;
    runConv<T>(kernels, which, pa, pb, po, s, false);
    return true;
  case ConvPass::GradInput: {
    ConvSizes t;
    if (!gradInputAsConv(s, t)) return false; // strided: im2col and Eigen
    if (s.n * s.c * s.h * s.w == 0) return true;
    runConv<T>(kernels, which, pa, pb, po, t, true);
    return true;
  }
  case ConvPass::GradWeight:
    if (s.o * s.depth() == 0) return true;
    runGradWeight<T>(kernels, which, pa, pb, po, s);
    return true;
  }
  return false;
}

bool eagerConv(ConvPass pass, DType dtype, const void* a, const void* b, void* out, const ConvGeometry& g) {
  if (dtype != DType::F32 && dtype != DType::F64) return false;
  const MicroKernels* kernels = microKernels();
  if (!kernels) return false;
  const ConvSizes s{g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.ho, g.wo};
  if (dtype == DType::F32) return conv<float>(*kernels, 0, pass, a, b, out, s);
  return conv<double>(*kernels, 1, pass, a, b, out, s);
}

} // namespace

void installEagerGemm() {
  setGemmProvider(&eagerGemm);
  setConvProvider(&eagerConv);
}

} // namespace tsl::compiler::cpu
