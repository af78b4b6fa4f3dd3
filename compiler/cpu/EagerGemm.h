// compiler/cpu/EagerGemm.h — eager matmul on the :cpu backend's GEMM.
#pragma once

namespace tsl::compiler::cpu {

/// Makes the runtime's f32 and f64 matmul run the packed GEMM with the micro-kernel
/// generated for this CPU (runtime/LinearAlgebra.h's GemmProvider), so eager matmul is as
/// fast as compiled matmul and computes the same bits; likewise conv2d
/// (runtime/NeuralNet.h's ConvProvider) runs the packed convolution. The micro-kernels are compiled on
/// the first eager matmul, once per process. Idempotent.
void installEagerGemm();

} // namespace tsl::compiler::cpu
