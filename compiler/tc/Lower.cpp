// compiler/tc/Lower.cpp — matmul and conv2d as double-buffered tensor-core programs.
#include "compiler/tc/Lower.h"

#include "compiler/tc/Emulator.h"
#include "tsl/Error.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>

namespace tsl::compiler::tc {

namespace {

constexpr int64_t kRows = 16;          ///< a fractal's rows
constexpr int64_t kAccFractal = 1024;  ///< bytes of a 16×16 f32 / int32 fractal in L0C
constexpr int64_t kBandEvent = 2;      ///< events 2, 3: the convolution's feature-map slots

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

int64_t pipeNo(Pipe p) { return static_cast<int64_t>(p); }

/// Writes a program: instructions by field, flags between pipes, the step structure that
/// both lowerings share.
class Writer {
public:
  Writer(const Device& d, Program& p, const Tiling& t, int64_t l1Reserved, Ty cube)
      : d_(d), p_(p), t_(t), cube_(cube), drainPipe_(d.fixpipe ? Pipe::Fixpipe : Pipe::Vector) {
    aSlot_ = t.tm * t.tk * kFractalBytes;
    bSlot_ = t.tk * t.tn * kFractalBytes;
    cSlot_ = t.tm * t.tn * kAccFractal;
    l1B_ = l1Reserved;
    const int64_t l1Need = l1B_ + t.buffers * bSlot_;
    if (t.buffers * aSlot_ > d.l0a.bytes || t.buffers * bSlot_ > d.l0b.bytes || t.buffers * cSlot_ > d.l0c.bytes ||
        l1Need > d.l1.bytes)
      fail(ErrorKind::Shape, "tc: tiling ", t.str(), " does not fit device ", d.name, "'s buffers");
  }

  Instr& emit(Op op) { return p_.code.emplace_back(makeInstr(op)); }
  void set(Pipe from, Pipe to, int64_t event) { flag(Op::SetFlag, from, to, event); }
  void wait(Pipe from, Pipe to, int64_t event) { flag(Op::WaitFlag, from, to, event); }

  /// Flags every slot starts with: free.
  void prologue() {
    for (int s = 0; s < t_.buffers; ++s) {
      set(Pipe::Mte1, Pipe::Mte2, s);
      set(Pipe::Cube, Pipe::Mte1, s);
      set(drainPipe_, Pipe::Cube, s);
      if (!d_.fixpipe) set(Pipe::Mte3, Pipe::Vector, s);
    }
  }
  /// Waits until every slot is free again, so no flag is left set.
  void epilogue() {
    for (int s = 0; s < t_.buffers; ++s) {
      wait(Pipe::Mte1, Pipe::Mte2, s);
      wait(Pipe::Cube, Pipe::Mte1, s);
      wait(drainPipe_, Pipe::Cube, s);
      if (!d_.fixpipe) wait(Pipe::Mte3, Pipe::Vector, s);
    }
  }

  int64_t l1B(int s) const { return l1B_ + s * bSlot_; }
  int64_t l0a(int s) const { return s * aSlot_; }
  int64_t l0b(int s) const { return s * bSlot_; }
  int64_t l0c(int s) const { return s * cSlot_; }
  int64_t ub(int s) const { return s * cSlot_; }
  int64_t ubBias() const { return t_.buffers * cSlot_; }

  /// One K step: `copies` (MTE2, into L1 slot s), `loads` (MTE1, into L0 slot s), then the
  /// mmad accumulating into L0C slot `c` (waiting for the slot's drain on the first step).
  void step(const std::function<void(int)>& copies, const std::function<void(int)>& loads, int c, bool first,
            int64_t m, int64_t k, int64_t n, int64_t macs) {
    const int s = static_cast<int>(steps_++ % static_cast<size_t>(t_.buffers));
    wait(Pipe::Mte1, Pipe::Mte2, s);
    copies(s);
    set(Pipe::Mte2, Pipe::Mte1, s);
    wait(Pipe::Mte2, Pipe::Mte1, s);
    wait(Pipe::Cube, Pipe::Mte1, s);
    loads(s);
    set(Pipe::Mte1, Pipe::Mte2, s);
    set(Pipe::Mte1, Pipe::Cube, s);
    wait(Pipe::Mte1, Pipe::Cube, s);
    if (first) wait(drainPipe_, Pipe::Cube, c);
    Instr& mm = emit(Op::Mmad);
    mm[F::C] = l0c(c), mm[F::A] = l0a(s), mm[F::B] = l0b(s);
    mm[F::M] = m, mm[F::K] = k, mm[F::N] = n, mm[F::Init] = first ? 1 : 0;
    if (macs != m * k * n) mm[F::Macs] = macs;
    mm[F::Dtype] = static_cast<int64_t>(cube_);
    set(Pipe::Cube, Pipe::Mte1, s);
  }

  /// Where the drain writes element (r, c) of an m × n tile in GM tensor 2.
  struct Out {
    int64_t offset;
    OutLayout layout;
    int64_t strideOrPlane;
    Ty ty;
  };

  /// Drains L0C slot `c` (m × n valid) to GM with the epilogue; `n0` is the tile's first
  /// column (for the bias).
  void drain(int c, int64_t m, int64_t n, int64_t n0, const Out& out, const Epilogue& e) {
    const int64_t srcRows = roundUp(m, kRows);
    set(Pipe::Cube, drainPipe_, c);
    wait(Pipe::Cube, drainPipe_, c);
    auto place = [&](Instr& in) {
      in[F::GmDst] = 2, in[F::Offset] = out.offset, in[F::Layout] = static_cast<int64_t>(out.layout);
      if (out.layout == OutLayout::Nd) in[F::Stride] = out.strideOrPlane;
      else in[F::Plane] = out.strideOrPlane;
    };
    if (d_.fixpipe) {
      Instr& fx = emit(Op::Fixpipe);
      place(fx);
      fx[F::Src] = l0c(c), fx[F::M] = m, fx[F::N] = n, fx[F::Dtype] = static_cast<int64_t>(out.ty);
      if (srcRows != roundUp(m, kRows)) fx[F::SrcRows] = srcRows;
      if (e.relu) fx[F::Relu] = 1;
      if (e.bias) fx[F::Bias] = 3, fx[F::BiasOffset] = n0;
      set(Pipe::Fixpipe, Pipe::Cube, c);
      return;
    }
    // No FIXPIPE: L0C → UB (row-major f32), the epilogue on the vector unit, UB → GM.
    wait(Pipe::Mte3, Pipe::Vector, c);
    Instr& mv = emit(Op::CopyL0cToUb);
    mv[F::Dst] = ub(c), mv[F::Src] = l0c(c), mv[F::M] = m, mv[F::N] = n;
    set(Pipe::Vector, Pipe::Cube, c);
    if (e.bias) {
      Instr& add = emit(Op::VAdd);
      add[F::Dst] = ub(c), add[F::Src] = ub(c), add[F::Src1] = ubBias() + n0 * 4, add[F::Count] = n, add[F::Rows] = m;
      add[F::Bcast] = 1;
    }
    if (e.relu) {
      Instr& relu = emit(Op::VRelu);
      relu[F::Dst] = ub(c), relu[F::Src] = ub(c), relu[F::Count] = m * n;
    }
    set(Pipe::Vector, Pipe::Mte3, c);
    wait(Pipe::Vector, Pipe::Mte3, c);
    Instr& st = emit(Op::CopyUbToGm);
    place(st);
    st[F::Src] = ub(c), st[F::Rows] = m, st[F::Cols] = n;
    set(Pipe::Mte3, Pipe::Vector, c);
  }

  /// Without FIXPIPE, the bias goes to UB once, before everything (MTE2, then VECTOR).
  void biasToUb(const Epilogue& e, int64_t n) {
    if (d_.fixpipe || !e.bias) return;
    if (ubBias() + roundUp(n * 4, 32) > d_.ub.bytes)
      fail(ErrorKind::Shape, "tc: a bias of ", n, " values does not fit UB beside the tiles on ", d_.name);
    Instr& cp = emit(Op::CopyGmToUb);
    cp[F::Dst] = ubBias(), cp[F::GmSrc] = 3, cp[F::Count] = n;
    set(Pipe::Mte2, Pipe::Vector, 0);
    wait(Pipe::Mte2, Pipe::Vector, 0);
  }

  int64_t ubNeed() const { return t_.buffers * cSlot_; }

private:
  void flag(Op op, Pipe from, Pipe to, int64_t event) {
    Instr& in = emit(op);
    in[F::SrcPipe] = pipeNo(from), in[F::DstPipe] = pipeNo(to), in[F::Event] = event;
  }

  const Device& d_;
  Program& p_;
  Tiling t_;
  Ty cube_;
  Pipe drainPipe_;
  int64_t aSlot_, bSlot_, cSlot_, l1B_;
  size_t steps_ = 0;
};

void declare(Program& p, const char* name, Ty ty, int64_t elements, GmTensor::Role role) {
  p.gm.push_back(GmTensor{name, ty, elements, role});
}

void checkCube(Ty cube) {
  if (cube != Ty::F16 && cube != Ty::BF16 && cube != Ty::I8)
    fail(ErrorKind::Value, "tc: the cube multiplies f16, bf16 or i8, not ", tyName(cube));
}

/// A program computes at least one element from at least one product, in steps of at
/// least one fractal: an empty axis has no tiling (the tiling search would divide by its
/// fractal count, 0) and needs no program — the cube lowering table makes such results
/// without one. `what` names the problem.
void checkExtents(std::initializer_list<int64_t> extents, const std::string& what) {
  for (const int64_t e : extents)
    if (e <= 0) fail(ErrorKind::Shape, "tc: ", what, " has an empty axis; no program computes it");
}

void checkTiling(const Tiling& t) {
  if (t.tm < 1 || t.tn < 1 || t.tk < 1 || t.buffers < 1 || t.buffers > 2)
    fail(ErrorKind::Shape, "tc: tiling ", t.tm, "x", t.tn, "x", t.tk, " with ", t.buffers,
         " buffers: each axis takes at least one fractal a step, and one or two buffers");
}

std::string matmulName(const MatmulSpec& s) { return cat("matmul ", s.m, "x", s.k, "x", s.n); }

std::string convName(const ConvSpec& s) {
  return cat("conv2d ", s.batch, "x", s.c, "x", s.h, "x", s.w, " * ", s.o, "x", s.c, "x", s.kh, "x", s.kw);
}

} // namespace

std::string Tiling::str() const {
  return cat(tm * kRows, "x", tn * kRows, "x", tk, "k-fractals", buffers == 2 ? " double-buffered" : " single-buffered");
}

Program lowerMatmul(const MatmulSpec& s, const Tiling& t, const Device& d) {
  checkCube(s.cube);
  checkExtents({s.m, s.k, s.n}, matmulName(s));
  checkTiling(t);
  if (s.cube == Ty::I8 && (s.aNz || s.bNz))
    fail(ErrorKind::Value, "tc: int8 operands come row-major (a blocked GM operand has C0 = 16)");
  const int64_t k0 = fractalCols(s.cube);
  // The NZ plane: the padded rows of the whole matrix (of which this may be a slab).
  const int64_t m1p = s.mPlane > 0 ? roundUp(s.mPlane, kRows) : roundUp(s.m, kRows);
  if (m1p < s.m) fail(ErrorKind::Internal, "tc: a slab of ", s.m, " rows in a plane of ", m1p);
  // Elements per batch of each GM operand (NZ pads to whole fractals; C0 = 16 there): for
  // a slab, what it reaches from its first row.
  const int64_t aPer = s.aNz ? ((roundUp(s.k, 16) / 16 - 1) * m1p + roundUp(s.m, kRows)) * 16 : s.m * s.k;
  const int64_t bPer = s.bNz ? roundUp(s.n, 16) * roundUp(s.k, 16) : s.k * s.n;
  const int64_t cPer = s.outNz ? ((roundUp(s.n, 16) / 16 - 1) * m1p + roundUp(s.m, kRows)) * 16 : s.m * s.n;
  const auto batches = static_cast<int64_t>(s.aBatch.size());
  Program p;
  p.device = d.name;
  declare(p, "a", s.aTy, aPer * s.aBatches, GmTensor::Role::In);
  declare(p, "b", s.bTy, bPer * s.bBatches, GmTensor::Role::In);
  declare(p, "c", s.outTy, cPer * batches, GmTensor::Role::Out);
  if (s.epilogue.bias) declare(p, "bias", s.epilogue.biasTy, s.n, GmTensor::Role::In);
  p.notes.push_back(cat("matmul ", batches > 1 ? cat(batches, " x ") : "", s.m, "x", s.k, " * ", s.k, "x", s.n, " on ",
                        d.name, ", ", tyName(s.cube), " inputs, tiles ", t.str()));
  const int64_t aSlot = t.tm * t.tk * kFractalBytes;
  Writer w(d, p, t, t.buffers * aSlot, s.cube);
  w.prologue();
  w.biasToUb(s.epilogue, s.n);
  int tile = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t aBase = s.aBatch[static_cast<size_t>(b)] * aPer, bBase = s.bBatch[static_cast<size_t>(b)] * bPer;
    for (int64_t m0 = 0; m0 < s.m; m0 += t.tm * kRows) {
      const int64_t mc = std::min(t.tm * kRows, s.m - m0), mt = ceilDiv(mc, kRows);
      for (int64_t n0 = 0; n0 < s.n; n0 += t.tn * kRows) {
        const int64_t nc = std::min(t.tn * kRows, s.n - n0), nt = ceilDiv(nc, kRows);
        const int c = tile++ % t.buffers;
        for (int64_t kk = 0; kk < s.k; kk += t.tk * k0) {
          const int64_t kc = std::min(t.tk * k0, s.k - kk), kt = ceilDiv(kc, k0);
          auto copies = [&](int slot) {
            // A's tile into L1 as NZ: [kt][mt·16][C0].
            const int64_t aAt = slot * aSlot;
            if (!s.aNz) {
              Instr& in = w.emit(Op::CopyGmToL1);
              in[F::Dst] = aAt, in[F::GmSrc] = 0, in[F::Offset] = aBase + m0 * s.k + kk, in[F::Rows] = mc;
              in[F::Cols] = kc, in[F::Stride] = s.k, in[F::Nz] = 1, in[F::Dtype] = static_cast<int64_t>(s.cube);
            } else {
              for (int64_t kb = 0; kb < ceilDiv(kc, 16); ++kb) { // one 16-column block of GM's NZ at a time
                Instr& in = w.emit(Op::CopyGmToL1);
                in[F::Dst] = aAt + kb * mt * kRows * 16 * tySize(s.cube), in[F::GmSrc] = 0;
                in[F::Offset] = aBase + ((kk / 16 + kb) * m1p + m0) * 16, in[F::Rows] = mc;
                in[F::Cols] = std::min<int64_t>(16, kc - kb * 16), in[F::Stride] = 16, in[F::Nz] = 1;
                in[F::DstRows] = mt * kRows, in[F::Dtype] = static_cast<int64_t>(s.cube);
              }
            }
            // B's tile into L1 as NZ of B: [nt][kt·K0... rows k][C0 columns n].
            const int64_t bAt = w.l1B(slot);
            if (!s.bNz) {
              Instr& in = w.emit(Op::CopyGmToL1);
              in[F::Dst] = bAt, in[F::GmSrc] = 1, in[F::Offset] = bBase + kk * s.n + n0, in[F::Rows] = kc;
              in[F::Cols] = nc, in[F::Stride] = s.n, in[F::Nz] = 1, in[F::DstRows] = kt * k0;
              in[F::Dtype] = static_cast<int64_t>(s.cube);
            } else {
              const int64_t k1g = roundUp(s.k, 16);
              for (int64_t nb = 0; nb < nt; ++nb) {
                Instr& in = w.emit(Op::CopyGmToL1);
                in[F::Dst] = bAt + nb * kt * k0 * 16 * tySize(s.cube), in[F::GmSrc] = 1;
                in[F::Offset] = bBase + ((n0 / 16 + nb) * k1g + kk) * 16, in[F::Rows] = kc;
                in[F::Cols] = std::min<int64_t>(16, nc - nb * 16), in[F::Stride] = 16, in[F::Nz] = 1;
                in[F::DstRows] = kt * k0, in[F::Dtype] = static_cast<int64_t>(s.cube);
              }
            }
          };
          auto loads = [&](int slot) {
            for (int64_t mb = 0; mb < mt; ++mb) { // L0A: row mb of fractals, from L1's columns
              Instr& in = w.emit(Op::Load2d);
              in[F::Into] = static_cast<int64_t>(Buf::L0A), in[F::Dst] = w.l0a(slot) + mb * kt * kFractalBytes;
              in[F::Src] = slot * aSlot + mb * kFractalBytes, in[F::Count] = kt, in[F::SrcStride] = mt;
              in[F::Dtype] = static_cast<int64_t>(s.cube);
            }
            // L0B: fractal (kb, nb) transposed. With int8 a transpose moves 32×32 blocks: the two
            // 16-row halves of one k fractal, adjacent in L1's NZ, become two n fractals.
            const bool int8 = s.cube == Ty::I8;
            for (int64_t kb = 0; kb < kt; ++kb) {
              if (int8 && nt % 2 == 0) {
                for (int64_t nb = 0; nb < nt; nb += 2) {
                  Instr& in = w.emit(Op::Load2d);
                  in[F::Into] = static_cast<int64_t>(Buf::L0B), in[F::Dst] = w.l0b(slot) + (kb * nt + nb) * kFractalBytes;
                  in[F::Src] = w.l1B(slot) + ((nb / 2) * kt * 2 + kb * 2) * kFractalBytes, in[F::Count] = 2;
                  in[F::Transpose] = 1, in[F::Dtype] = static_cast<int64_t>(s.cube);
                }
                continue;
              }
              if (int8) fail(ErrorKind::Shape, "tc: int8 tiles need an even number of 16-column blocks");
              Instr& in = w.emit(Op::Load2d);
              in[F::Into] = static_cast<int64_t>(Buf::L0B), in[F::Dst] = w.l0b(slot) + kb * nt * kFractalBytes;
              in[F::Src] = w.l1B(slot) + kb * kFractalBytes, in[F::Count] = nt, in[F::SrcStride] = kt;
              in[F::Transpose] = 1, in[F::Dtype] = static_cast<int64_t>(s.cube);
            }
          };
          w.step(copies, loads, c, kk == 0, mc, kc, nc, mc * kc * nc);
        }
        const Writer::Out out = s.outNz ? Writer::Out{b * cPer + ((n0 / 16) * m1p + m0) * 16, OutLayout::Nz, m1p, s.outTy}
                                        : Writer::Out{b * cPer + m0 * s.n + n0, OutLayout::Nd, s.n, s.outTy};
        w.drain(c, mc, nc, n0, out, s.epilogue);
      }
    }
  }
  w.epilogue();
  return p;
}

Program lowerConv(const ConvSpec& s, const Tiling& t, const Device& d) {
  checkCube(s.cube);
  if (s.cube == Ty::I8) fail(ErrorKind::Value, "tc: conv2d runs on f16 or bf16 inputs");
  checkExtents({s.batch, s.c, s.h, s.w, s.o, s.kh, s.kw, s.strideH, s.strideW, s.dilH, s.dilW}, convName(s));
  if (s.padH < 0 || s.padW < 0) fail(ErrorKind::Shape, "tc: ", convName(s), " has negative padding");
  checkTiling(t);
  const int64_t c1 = ceilDiv(s.c, 16), o1 = ceilDiv(s.o, 16), oh = s.oh(), ow = s.ow(), ohw = oh * ow;
  const int64_t kf = c1 * s.kh * s.kw; // K in fractals
  if (oh <= 0 || ow <= 0) fail(ErrorKind::Shape, "tc: conv2d output would be empty");
  Program p;
  p.device = d.name;
  declare(p, "data", s.dataTy, s.batch * c1 * s.h * s.w * 16, GmTensor::Role::In);
  declare(p, "weights", s.weightTy, kf * o1 * 256, GmTensor::Role::In);
  declare(p, "out", s.outTy, s.batch * o1 * ohw * 16, GmTensor::Role::Out);
  if (s.epilogue.bias) declare(p, "bias", s.epilogue.biasTy, s.o, GmTensor::Role::In);
  p.notes.push_back(cat("conv2d ", s.batch, "x", s.c, "x", s.h, "x", s.w, " * ", s.o, "x", s.c, "x", s.kh, "x", s.kw,
                        " on ", d.name, ", ", tyName(s.cube), " inputs, tiles ", t.str()));
  // The input rows an m tile (output positions [m0, m0 + mc)) reads: [first, end) of the
  // image's rows. A tile whose rows see only padding (padding at least the kernel's
  // extent, above or below the image) reads none; it still gets one row of the image —
  // the nearest — so that the band copied into L1 lies inside the input (load3d reads
  // nothing of it and writes zeros).
  auto band = [&](int64_t m0, int64_t mc) {
    const int64_t oy0 = m0 / ow, oy1 = (m0 + mc - 1) / ow;
    const int64_t first = std::clamp<int64_t>(oy0 * s.strideH - s.padH, 0, s.h - 1);
    const int64_t end = std::min<int64_t>(s.h, oy1 * s.strideH - s.padH + (s.kh - 1) * s.dilH + 1);
    return std::pair{first, std::max<int64_t>(end - first, 1)};
  };
  int64_t bandBytes = 0;
  for (int64_t m0 = 0; m0 < ohw; m0 += t.tm * kRows)
    bandBytes = std::max(bandBytes, band(m0, std::min(t.tm * kRows, ohw - m0)).second * c1 * s.w * 16 * 2);
  bandBytes = roundUp(bandBytes, 32);
  Writer w(d, p, t, t.buffers * bandBytes, s.cube);
  w.prologue();
  for (int bs = 0; bs < t.buffers; ++bs) w.set(Pipe::Mte1, Pipe::Mte2, kBandEvent + bs);
  w.biasToUb(s.epilogue, s.o);
  int tile = 0, bands = 0;
  for (int64_t img = 0; img < s.batch; ++img) {
    for (int64_t m0 = 0; m0 < ohw; m0 += t.tm * kRows) {
      const int64_t mc = std::min(t.tm * kRows, ohw - m0);
      const auto [row0, rows] = band(m0, mc);
      const int bs = bands++ % t.buffers;
      const int64_t bandAt = bs * bandBytes;
      w.wait(Pipe::Mte1, Pipe::Mte2, kBandEvent + bs);
      for (int64_t cb = 0; cb < c1; ++cb) {
        Instr& in = w.emit(Op::CopyGmToL1);
        in[F::Dst] = bandAt + cb * rows * s.w * 16 * 2, in[F::GmSrc] = 0;
        in[F::Offset] = ((img * c1 + cb) * s.h + row0) * s.w * 16, in[F::Rows] = rows * s.w, in[F::Cols] = 16;
        in[F::Dtype] = static_cast<int64_t>(s.cube);
      }
      w.set(Pipe::Mte2, Pipe::Mte1, kBandEvent + bs);
      w.wait(Pipe::Mte2, Pipe::Mte1, kBandEvent + bs);
      for (int64_t n0 = 0; n0 < s.o; n0 += t.tn * kRows) {
        const int64_t nc = std::min(t.tn * kRows, s.o - n0), nt = ceilDiv(nc, kRows);
        const int c = tile++ % t.buffers;
        for (int64_t k0 = 0; k0 < kf; k0 += t.tk) {
          const int64_t kt = std::min(t.tk, kf - k0);
          int64_t usefulK = 0; // channels below C in the chunk's fractals
          for (int64_t f = k0; f < k0 + kt; ++f) usefulK += std::min<int64_t>(16, s.c - (f / (s.kh * s.kw)) * 16);
          auto copies = [&](int slot) { // weights [kt][nt] fractals: already L0B's order
            Instr& in = w.emit(Op::CopyGmToL1);
            in[F::Dst] = w.l1B(slot), in[F::GmSrc] = 1, in[F::Offset] = (k0 * o1 + n0 / 16) * 256, in[F::Rows] = kt;
            in[F::Cols] = nt * 256, in[F::Stride] = o1 * 256, in[F::Dtype] = static_cast<int64_t>(s.cube);
          };
          auto loads = [&](int slot) {
            Instr& a = w.emit(Op::Load3d);
            a[F::Dst] = w.l0a(slot), a[F::Src] = bandAt, a[F::C1] = c1, a[F::Ih] = s.h, a[F::Iw] = s.w;
            a[F::Row0] = row0, a[F::Rows] = rows, a[F::Kh] = s.kh, a[F::Kw] = s.kw, a[F::StrideH] = s.strideH;
            a[F::StrideW] = s.strideW, a[F::PadH] = s.padH, a[F::PadW] = s.padW, a[F::DilH] = s.dilH;
            a[F::DilW] = s.dilW, a[F::Oh] = oh, a[F::Ow] = ow, a[F::M0] = m0, a[F::M] = mc, a[F::K0] = k0;
            a[F::K] = kt * 16, a[F::Dtype] = static_cast<int64_t>(s.cube);
            Instr& b = w.emit(Op::Load2d);
            b[F::Into] = static_cast<int64_t>(Buf::L0B), b[F::Dst] = w.l0b(slot), b[F::Src] = w.l1B(slot);
            b[F::Count] = kt * nt, b[F::Dtype] = static_cast<int64_t>(s.cube);
          };
          w.step(copies, loads, c, k0 == 0, mc, kt * 16, nc, mc * nc * usefulK);
        }
        w.drain(c, mc, nc, n0,
                Writer::Out{img * o1 * ohw * 16 + ((n0 / 16) * ohw + m0) * 16, OutLayout::Nc1hwc0, ohw, s.outTy},
                s.epilogue);
      }
      w.set(Pipe::Mte1, Pipe::Mte2, kBandEvent + bs); // the feature map's slot is free again
    }
  }
  for (int bs = 0; bs < t.buffers; ++bs) w.wait(Pipe::Mte1, Pipe::Mte2, kBandEvent + bs);
  w.epilogue();
  return p;
}

namespace {

/// Candidate fractal counts along one axis of `extent` fractals: powers of two and the
/// whole extent.
std::vector<int64_t> sizes(int64_t extent, int64_t most) {
  std::set<int64_t> out;
  for (int64_t v = 1; v <= std::min(extent, most); v *= 2) out.insert(v);
  if (extent <= most) out.insert(extent);
  return {out.begin(), out.end()};
}

template <typename Lower>
Tiling search(const Device& d, int64_t m1, int64_t n1, int64_t k1, int buffers, const Lower& lower,
              std::string* report, const char* what) {
  struct Tried {
    Tiling t;
    int64_t cycles, steps;
  };
  std::vector<Tiling> candidates;
  for (int64_t tm : sizes(m1, 64))
    for (int64_t tn : sizes(n1, 64))
      for (int64_t tk : sizes(k1, 64)) {
        const Tiling t{tm, tn, tk, buffers};
        if (buffers * tm * tk * kFractalBytes > d.l0a.bytes || buffers * tk * tn * kFractalBytes > d.l0b.bytes ||
            buffers * tm * tn * kAccFractal > d.l0c.bytes)
          continue;
        if (!d.fixpipe && buffers * tm * tn * kAccFractal > d.ub.bytes / 2) continue;
        candidates.push_back(t);
      }
  // Time the candidates with the fewest steps first; tiny tiles on a large problem only
  // make long programs, so those with over 8× the fewest steps are not tried.
  auto steps = [&](const Tiling& t) { return ceilDiv(m1, t.tm) * ceilDiv(n1, t.tn) * ceilDiv(k1, t.tk); };
  int64_t fewest = std::numeric_limits<int64_t>::max();
  for (const Tiling& t : candidates) fewest = std::min(fewest, steps(t));
  Emulator emulator(d);
  std::vector<Tried> tried;
  for (const Tiling& t : candidates) {
    if (steps(t) > 8 * fewest && steps(t) > 64) continue;
    try {
      const TcStats st = emulator.time(lower(t));
      tried.push_back({t, st.cycles, steps(t)});
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Shape) throw; // a tiling that does not fit L1
    }
  }
  if (tried.empty()) fail(ErrorKind::Shape, "tc: no tiling of this ", what, " fits the buffers of device ", d.name);
  const Tried* best = &tried.front();
  for (const Tried& t : tried)
    if (t.cycles < best->cycles || (t.cycles == best->cycles && t.steps < best->steps)) best = &t;
  if (report)
    *report = cat(what, ": tiles ", best->t.str(), ", ", best->cycles, " cycles (best of ", tried.size(),
                  " tilings timed on ", d.name, ")");
  return best->t;
}

} // namespace

/// The search with double buffering, else (nothing fits twice) single.
template <typename Search>
Tiling withFallback(int buffers, const Search& run) {
  try {
    return run(buffers);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Shape || buffers == 1) throw;
    return run(1);
  }
}

Tiling chooseMatmulTiling(const MatmulSpec& spec, const Device& d, std::string* report, int buffers) {
  checkExtents({spec.m, spec.k, spec.n}, matmulName(spec));
  MatmulSpec one = spec; // one batch: every batch costs the same
  one.aBatch = {0}, one.bBatch = {0}, one.aBatches = one.bBatches = 1;
  const int64_t k0 = fractalCols(spec.cube);
  return withFallback(buffers, [&](int b) {
    return search(d, ceilDiv(spec.m, kRows), ceilDiv(spec.n, kRows), ceilDiv(spec.k, k0), b,
                  [&](const Tiling& t) { return lowerMatmul(one, t, d); }, report,
                  cat("matmul ", spec.m, "x", spec.k, "x", spec.n).c_str());
  });
}

Tiling chooseConvTiling(const ConvSpec& spec, const Device& d, std::string* report, int buffers) {
  checkExtents({spec.c, spec.h, spec.w, spec.o, spec.kh, spec.kw, spec.strideH, spec.strideW, spec.dilH, spec.dilW},
               convName(spec));
  if (spec.oh() <= 0 || spec.ow() <= 0) fail(ErrorKind::Shape, "tc: ", convName(spec), " has an empty output");
  ConvSpec one = spec;
  one.batch = 1;
  return withFallback(buffers, [&](int b) {
    return search(d, ceilDiv(spec.oh() * spec.ow(), kRows), ceilDiv(spec.o, kRows),
                  ceilDiv(spec.c, 16) * spec.kh * spec.kw, b, [&](const Tiling& t) { return lowerConv(one, t, d); }, report,
                  cat("conv2d ", spec.c, "->", spec.o, " ", spec.kh, "x", spec.kw, " on ", spec.h, "x", spec.w).c_str());
  });
}

} // namespace tsl::compiler::tc
