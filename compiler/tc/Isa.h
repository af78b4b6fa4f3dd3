// compiler/tc/Isa.h — the tensor core's instructions and its programs, with their text form.
//
// A tensor-core program is a list of instructions over the device's buffers (GM tensors
// by number, on-chip buffers by byte address), each run on one pipe
// (docs/tensor-core.md, "Instructions and programs"). One table (Isa.cpp) gives every
// instruction its mnemonic, pipe and fields; the printer, the parser and the emulator's
// decoding follow from it. The text form, one instruction per line:
//
//   .device a2
//   .gm %0 a f32 16384 in
//   copy_gm_to_l1 dst=0 src=%0 rows=128 cols=128 stride=128 nz=1 dtype=f16
//   mmad c=0 a=0 b=0 m=128 k=128 n=128 init=1
//   set_flag src=mte2 dst=mte1 event=0
//
// parses back to the same program (round-trip tested and fuzzed); `tsl tc-run FILE`
// runs a hand-edited one.
#pragma once

#include "compiler/tc/Timeline.h"
#include "tsl/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tsl::compiler::tc {

/// Element types of the device's buffers. GM tensors hold the host's types (f64, f32,
/// f16, bf16, i32) or int8; the cube reads f16, bf16 or int8 and accumulates in f32 or
/// int32.
enum class Ty : uint8_t { F16, BF16, F32, F64, I8, I32 };
int64_t tySize(Ty t);
const char* tyName(Ty t);
std::optional<Ty> tyNamed(std::string_view name);

/// A fractal's columns (C0): 16 for 2- and 4-byte types, 32 for 1-byte ones.
inline int64_t fractalCols(Ty t) { return t == Ty::I8 ? 32 : 16; }
constexpr int64_t kFractalBytes = 512;

/// The on-chip buffers (GM is addressed by tensor number).
enum class Buf : uint8_t { L1, L0A, L0B, L0C, UB };
const char* bufName(Buf b);

enum class Op : uint8_t {
  CopyGmToL1, ///< MTE2: strided 2-D copy GM → L1, converting, optionally ND → NZ
  CopyGmToUb, ///< MTE2: 1-D copy GM → UB, converting
  Load2d,     ///< MTE1: whole fractals L1 → L0A/L0B, optionally transposed
  Load3d,     ///< MTE1: img2col fractals of an NC1HWC0 feature map L1 → L0A
  Mmad,       ///< CUBE: c = a·b (+ c) on fractals
  Fixpipe,    ///< FIXPIPE: L0C → GM, converting, bias, ReLU, NZ → ND / NZ / NC1HWC0
  CopyL0cToUb,///< VECTOR (devices without FIXPIPE): L0C → UB as row-major f32 / i32
  CopyUbToGm, ///< MTE3: UB → GM, converting, ND / NZ / NC1HWC0
  VAdd, VMul, VMax, VRelu, VCast, ///< VECTOR: elementwise on UB
  SetFlag, WaitFlag, Barrier,     ///< ordering between pipes
};
constexpr size_t kOps = static_cast<size_t>(Op::Barrier) + 1;

/// Every field any instruction has; each instruction uses a few (Isa.cpp's table).
enum class F : uint8_t {
  Dst, Src, Src1, Offset, Rows, Cols, Stride, SrcStride, Nz, Dtype, To, DstRows, Count, Transpose, Into,
  C1, Ih, Iw, Row0, Kh, Kw, StrideH, StrideW, PadH, PadW, DilH, DilW, Oh, Ow, M0, K0,
  C, A, B, M, K, N, Init, Macs, SrcRows, Layout, Plane, Relu, Bias, BiasOffset, Bcast,
  SrcPipe, DstPipe, Event, PipeF, GmSrc, GmDst,
};
constexpr size_t kFields = static_cast<size_t>(F::GmDst) + 1;

/// Where fixpipe and copy_ub_to_gm write: row-major, or 16-column blocks of `plane` rows
/// each (FRACTAL_NZ of a matrix whose padded height is `plane`; NC1HWC0 of an image of
/// H·W = `plane`: the same offsets).
enum class OutLayout : uint8_t { Nd, Nz, Nc1hwc0 };

struct Instr {
  Op op;
  std::array<int64_t, kFields> f{};
  int64_t& operator[](F k) { return f[static_cast<size_t>(k)]; }
  int64_t operator[](F k) const { return f[static_cast<size_t>(k)]; }
  bool operator==(const Instr&) const = default;
};

/// A GM tensor a program reads or writes.
struct GmTensor {
  enum class Role : uint8_t { In, Out, Temp };
  std::string name;
  Ty ty = Ty::F32;
  int64_t elements = 0;
  Role role = Role::In;
  bool operator==(const GmTensor&) const = default;
};

struct Program {
  std::string device = "a2";       ///< the preset it was written for (informative)
  std::vector<std::string> notes;  ///< comment lines printed at the top (the tiling chosen)
  std::vector<GmTensor> gm;
  std::vector<Instr> code;
  std::string file;             ///< where a parsed program came from
  std::vector<uint32_t> lines;  ///< per instruction, its line there (errors point at it)
  std::vector<Span> gmSpans;    ///< per GM tensor, its element count on its .gm line
  bool operator==(const Program& o) const { return device == o.device && gm == o.gm && code == o.code; }
};

/// The instruction's mnemonic ("copy_gm_to_l1").
const char* opName(Op op);
/// An instruction with `op`'s defaults in every field it has.
Instr makeInstr(Op op);
/// The pipe an instruction runs on (set_flag: its source pipe; wait_flag: its
/// destination; barrier: the pipe it names, CUBE standing for "all").
Pipe pipeOf(const Instr& in);
/// Whether `op` has field `k`.
bool hasField(Op op, F k);

/// One instruction as text ("mmad c=0 a=0 b=0 m=16 k=16 n=16 init=1").
std::string printInstr(const Instr& in);
/// The whole program, parseable by parseProgram.
std::string printProgram(const Program& p);
/// Parses a program; syntax errors name `file`, the line and the column.
Program parseProgram(std::string_view text, std::string_view file = "<tc>");

} // namespace tsl::compiler::tc
