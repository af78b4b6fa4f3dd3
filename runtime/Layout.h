// runtime/Layout.h — physical layouts: how a tensor's logical elements sit in memory.
//
// A layout never changes what a tensor is (docs/language.md §7): only where each logical
// element is stored. Row-major is every fresh tensor's (reported :nchw at rank 4). NHWC
// is a permutation of a rank-4 NCHW tensor's axes, so an NHWC tensor is an ordinary
// strided tensor whose memory runs over N, H, W, C. The blocked layouts of the tensor core
// (docs/layouts.md) split an axis into blocks of C0 and pad it:
//
//   NC1HWC0      rank-4 data [N,C,H,W]       physical [N, C1, H, W, C0]
//   FRACTAL_Z    rank-4 weights [O,I,Kh,Kw]  physical [C1·Kh·Kw, N1, 16, C0]  (N1 = ⌈O/16⌉)
//   FRACTAL_NZ   [..., M, K]                 physical [..., K1, M1, 16, C0]  (K1 = ⌈K/C0⌉,
//                                                                             M1 = ⌈M/16⌉)
//
// with C0 = 32 for 1-byte dtypes and 16 for every other (so a cast that changes the
// element size changes C0), C1 = ⌈C/C0⌉, and padding that a conversion writes as zero.
// A blocked tensor keeps its logical shape and its physical buffer; code that reads
// elements as row-major converts it first (`plain`); reading one without converting is an
// internal error (Tensor::data asserts), never a wrong answer.
#pragma once

#include "runtime/Tensor.h"

#include <optional>
#include <string_view>

namespace tsl {

/// Whether the layout splits an axis into padded blocks (its memory is not a strided view
/// of the logical tensor).
inline bool isBlocked(Layout layout) {
  return layout == Layout::NC1HWC0 || layout == Layout::FractalZ || layout == Layout::FractalNZ;
}

/// The keyword naming a layout for a tensor of `rank` (row-major is :nchw at rank 4).
const char* layoutKeyword(Layout layout, int rank);
/// The layout a keyword names (:row-major, :nchw, :nhwc, :nc1hwc0, :fractal-z,
/// :fractal-nz), or nullopt.
std::optional<Layout> layoutFromKeyword(std::string_view name);
/// The IR's name of a layout ("nhwc", "fractal-z"; "row-major").
const char* layoutName(Layout layout);

/// The block size of the blocked layouts for elements of `dtype`.
inline int64_t blockC0(DType dtype) { return dtypeSize(dtype) == 1 ? 32 : 16; }

/// The largest rank FRACTAL_NZ applies to: its physical shape has two more axes, and no
/// shape has more than Shape::kMaxRank.
inline constexpr int kMaxFractalNzRank = Shape::kMaxRank - 2;

/// Whether `layout` applies to tensors of `rank`: NHWC, NC1HWC0 and FRACTAL_Z need rank
/// 4, FRACTAL_NZ rank 2 to kMaxFractalNzRank, row-major any.
inline bool layoutFitsRank(Layout layout, int rank) {
  switch (layout) {
  case Layout::RowMajor: return true;
  case Layout::FractalNZ: return rank >= 2 && rank <= kMaxFractalNzRank;
  default: return rank == 4;
  }
}

/// Checks that `layout` applies to a tensor of `shape` (a shape error naming `who`
/// otherwise).
void checkLayout(Layout layout, const Shape& shape, const char* who);

/// The physical shape of a logical shape in `layout` (the logical shape itself for
/// row-major; [N,H,W,C] for NHWC).
Shape physicalShape(Layout layout, const Shape& logical, DType dtype);
/// Bytes of the physical buffer (padding included).
int64_t physicalBytes(Layout layout, const Shape& logical, DType dtype);

/// Where logical element `index` (one coordinate per axis) sits in the physical buffer,
/// in elements from its start.
int64_t physicalOffset(Layout layout, const Shape& logical, DType dtype, const int64_t* index);

/// The cube's data orders (docs/layouts.md, "Known answers", group M): a matrix cut
/// into fractals of fractalRows × fractalCols, padded to whole fractals. The fractals are
/// stored row by row ("big Z") or column by column ("big N"); the elements inside one row
/// by row ("small z") or column by column ("small n").
struct FractalOrder {
  bool fractalsByColumn; ///< big N (else big Z)
  bool columnsInside;    ///< small n (else small z)
};
inline constexpr FractalOrder kOrderL0A{false, false}; ///< small-z big-Z: the cube's left operand
inline constexpr FractalOrder kOrderL0B{false, true};  ///< small-n big-Z: the right operand, FRACTAL_Z
inline constexpr FractalOrder kOrderL0C{true, false};  ///< small-z big-N: the result, FRACTAL_NZ

/// Where element (row, col) of a rows × cols matrix sits in `order`, in elements.
int64_t fractalOffset(int64_t row, int64_t col, int64_t rows, int64_t cols, int64_t fractalRows,
                      int64_t fractalCols, FractalOrder order);

/// The same logical tensor stored in `layout` (a shape error if the layout does not apply
/// to its rank). Returns `x` itself if it is stored so already.
Tensor toLayout(const Tensor& x, Layout layout);

/// `x` as a tensor whose elements can be read through strides: `x` itself unless its
/// layout is blocked, else its row-major copy.
Tensor plain(const Tensor& x);
/// `x` as a tensor tagged row-major: its row-major copy if blocked, a view of the same
/// memory with the same strides if NHWC, else `x`. What kernels are given.
Tensor untagged(const Tensor& x);

/// A fresh tensor of `shape` stored in `layout`, its memory dense (and zeroed where
/// blocked, so its padding is zero): what compiled code writes a result into.
Tensor emptyInLayout(DType dtype, const Shape& shape, Layout layout);
/// `x` stored in `layout` with dense physical memory (physicalData() is the whole
/// buffer): what compiled code reads an argument from.
Tensor denseInLayout(const Tensor& x, Layout layout);

/// A tensor of `shape` stored in `layout` over the memory of `storage` (dense, at least
/// physicalBytes long): a result written over a donated argument's memory.
Tensor overStorage(Ref<Storage> storage, DType dtype, const Shape& shape, Layout layout);

/// A blocked tensor over a physical buffer of the caller's (not copied; `release` runs
/// when the last tensor using it is gone).
Tensor wrapPhysical(void* data, DType dtype, const Shape& logical, Layout layout,
                    std::function<void(void*)> release = {});

} // namespace tsl
