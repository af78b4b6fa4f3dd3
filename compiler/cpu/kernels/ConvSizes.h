// compiler/cpu/kernels/ConvSizes.h — the sizes of a convolution as the kernels take them,
// and the rule choosing how the packed convolution reads its input; shared by the kernels
// (PackedGemm.h) and the code that cuts a convolution into tasks (compiler/cpu/Gemm.h).
#pragma once

#include <cstdint>

namespace tsl::compiler::cpu {

/// The sizes of a convolution of NCHW images by OIHW weights, in this order (generated
/// code passes them as a constant array): images n, channels c, height h, width w, output
/// channels o, kernel kh × kw, strides sh, sw, padding ph, pw, output ho × wo.
struct ConvSizes {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, ho, wo;
  int64_t depth() const { return c * kh * kw; }
  int64_t positions() const { return ho * wo; }
};

/// Whether a convolution runs on padded rows (PackedGemm.h's paddedConv, in tasks of
/// whole output rows): stride 1, and rows long enough that the kw - 1 columns it computes
/// and drops per row cost little. Otherwise B's panels are gathered (in tasks of nr
/// positions).
inline bool convOnPaddedRows(const ConvSizes& s) { return s.sh == 1 && s.sw == 1 && s.wo >= 8 * (s.kw - 1); }

/// The convolution whose output is conv2d's input cotangent, when there is one: for
/// stride 1 and padding at most the kernel less one, dx = conv2d(dy, w flipped and
/// transposed, padding k - 1 - p). Fills `t` and returns true then.
inline bool gradInputAsConv(const ConvSizes& s, ConvSizes& t) {
  if (s.sh != 1 || s.sw != 1 || s.ph > s.kh - 1 || s.pw > s.kw - 1) return false;
  t = {s.n, s.o, s.ho, s.wo, s.c, s.kh, s.kw, 1, 1, s.kh - 1 - s.ph, s.kw - 1 - s.pw, s.h, s.w};
  return true;
}

} // namespace tsl::compiler::cpu
