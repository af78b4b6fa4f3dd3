// compiler/tc/Lower.h — contractions as tensor-core programs.
//
// A matmul (batched, broadcasting, `dot` and einsum contractions reach it as one) and a
// conv2d become Programs: their operands copied GM → L1 (converted to the cube's dtype,
// ND → NZ on the way when they are not blocked already), moved L1 → L0A/L0B whole
// fractals at a time (load2d; the convolution's left operand built by load3d's img2col
// from the NC1HWC0 feature map), multiplied into L0C (mmad, k ascending), and drained by
// FIXPIPE (or, on a device without one, through UB by the vector unit and MTE3) with
// the epilogue — bias, ReLU, the output dtype and layout. L1 and L0 are double-buffered
// and every hand-over between pipes is a set_flag / wait_flag pair.
//
// Tile sizes (fractals of M, N and K per step) are chosen by timing every candidate that
// fits the device's buffers on the cost model (Emulator::time) — a small search; the
// choice is reported in the program's notes and `(tc-stats)`'s :tilings.
#pragma once

#include "compiler/tc/Device.h"
#include "compiler/tc/Isa.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tsl::compiler::tc {

/// What the drain applies to each output element: + bias[column], then ReLU.
struct Epilogue {
  bool bias = false; ///< a GM tensor of one value per output column (channel)
  Ty biasTy = Ty::F32;
  bool relu = false;
};

/// C[b] = A[aBatch[b]] · B[bBatch[b]] for each batch b; A is M×K, B is K×N.
struct MatmulSpec {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> aBatch{0}, bBatch{0}; ///< per result batch, the operands' batch
  int64_t aBatches = 1, bBatches = 1;        ///< batches each operand holds
  Ty aTy = Ty::F32, bTy = Ty::F32, outTy = Ty::F32;
  bool aNz = false, bNz = false, outNz = false; ///< FRACTAL_NZ in GM (else row-major)
  Ty cube = Ty::F16;                            ///< f16, bf16 or i8
  Epilogue epilogue;
  /// The rows of the whole matrix when this program computes a slab of it (m rows, A and
  /// C passed from the slab's first row): the NZ layouts' plane. 0: the m rows are all.
  int64_t mPlane = 0;
};

/// out = conv2d(data, weights): data NC1HWC0 [N, C1, H, W, 16], weights FRACTAL_Z
/// [C1·Kh·Kw, O1, 16, 16], out NC1HWC0 [N, O1, OH, OW, 16].
struct ConvSpec {
  int64_t batch = 1, c = 1, h = 1, w = 1, o = 1, kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1, padH = 0, padW = 0, dilH = 1, dilW = 1;
  Ty dataTy = Ty::F32, weightTy = Ty::F32, outTy = Ty::F32;
  Ty cube = Ty::F16;
  Epilogue epilogue;
  int64_t oh() const { return (h + 2 * padH - dilH * (kh - 1) - 1) / strideH + 1; }
  int64_t ow() const { return (w + 2 * padW - dilW * (kw - 1) - 1) / strideW + 1; }
};

/// Fractals per step along M (rows of the output), N (its columns) and K, and how many
/// buffers L1 and L0 hold of each operand (2: double buffering).
struct Tiling {
  int64_t tm = 1, tn = 1, tk = 1;
  int buffers = 2;
  std::string str() const;
};

/// The program for `spec` with `tiling` (a shape error if the tiling does not fit the
/// device's buffers).
Program lowerMatmul(const MatmulSpec& spec, const Tiling& tiling, const Device& d);
Program lowerConv(const ConvSpec& spec, const Tiling& tiling, const Device& d);

/// The fastest tiling on the cost model among those that fit (a shape error naming the
/// device when none does); `report` gets a line saying what was chosen and why.
Tiling chooseMatmulTiling(const MatmulSpec& spec, const Device& d, std::string* report = nullptr, int buffers = 2);
Tiling chooseConvTiling(const ConvSpec& spec, const Device& d, std::string* report = nullptr, int buffers = 2);

} // namespace tsl::compiler::tc
