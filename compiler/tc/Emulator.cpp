// compiler/tc/Emulator.cpp — functional execution, fault checks and timing of a program.
#include "compiler/tc/Emulator.h"

#include "compiler/tc/Cube.h"
#include "runtime/Interrupt.h"
#include "tsl/Error.h"
#include "tsl/FormatFloat.h"

#include <algorithm>
#include <bit>
#if defined(__F16C__)
#include <immintrin.h>
#endif
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

namespace tsl::compiler::tc {

namespace {

constexpr int64_t kFractalRows = 16;

using Clock = std::array<int64_t, kPipes>;

/// Who last wrote a byte of a buffer and when each pipe last read it (sequence numbers
/// count each pipe's instructions from 1; 0: never).
struct Access {
  int8_t writer = -1;
  int32_t writerInstr = -1;
  int64_t writerSeq = 0;
  Clock reads{};
  bool operator==(const Access&) const = default;
};

/// The Access of every byte of a buffer, as runs of bytes that share one: an instruction
/// touches a few runs however many bytes it moves (a copy of 32 KiB is one run).
class Shadow {
public:
  explicit Shadow(int64_t bytes) {
    runs_.emplace(0, Access{});
    runs_.emplace(bytes, Access{}); // the end
  }
  /// Calls f(Access&, start) on each run of [lo, hi), splitting runs at lo and hi, then
  /// joins neighbouring runs left equal.
  template <typename F>
  void visit(int64_t lo, int64_t hi, F f) {
    if (lo >= hi) return;
    split(lo);
    split(hi);
    auto first = runs_.find(lo);
    for (auto it = first; it->first < hi; ++it) f(it->second, it->first);
    // Join equal neighbours from lo's predecessor to hi.
    auto it = first == runs_.begin() ? first : std::prev(first);
    while (it->first < hi) {
      auto next = std::next(it);
      if (next->first <= hi && next != std::prev(runs_.end()) && next->second == it->second) runs_.erase(next);
      else it = next;
    }
  }

private:
  void split(int64_t at) {
    auto it = runs_.upper_bound(at);
    --it;
    if (it->first != at) runs_.emplace_hint(std::next(it), at, it->second);
  }
  std::map<int64_t, Access> runs_;
};

void join(Clock& into, const Clock& from) {
  for (size_t p = 0; p < kPipes; ++p) into[p] = std::max(into[p], from[p]);
}

/// Reads one element of type `t` as a double (exact for every type).
double readValue(Ty t, const uint8_t* p) {
  switch (t) {
  case Ty::F16: { uint16_t b; std::memcpy(&b, p, 2); return f16ToFloat(b); }
  case Ty::BF16: { uint16_t b; std::memcpy(&b, p, 2); return fromBf16(b); }
  case Ty::F32: { float f; std::memcpy(&f, p, 4); return f; }
  case Ty::F64: { double f; std::memcpy(&f, p, 8); return f; }
  case Ty::I8: return static_cast<int8_t>(*p);
  case Ty::I32: { int32_t i; std::memcpy(&i, p, 4); return i; }
  }
  return 0;
}

/// Writes `v` (read from an element of type `from`) as type `to`, with the device's
/// rounding, overflow and NaN rules and their counters.
void writeValue(Ty to, uint8_t* p, double v, Ty from, const Device& d, NumericsCounters& c) {
  switch (to) {
  case Ty::F16: { const uint16_t b = toF16(v, d, c); std::memcpy(p, &b, 2); return; }
  case Ty::BF16: {
    // Exact from f32, f16, bf16 and integers; an f64 goes through f32 first (documented).
    const uint16_t b = toBf16(std::bit_cast<uint32_t>(static_cast<float>(v)), d, c);
    std::memcpy(p, &b, 2);
    return;
  }
  case Ty::F32:
  case Ty::F64: {
    if (std::isnan(v) && d.nan == NanMode::Zero) { ++c.nan; v = 0; }
    if (to == Ty::F32) {
      float f = static_cast<float>(v);
      if (std::isinf(f) && !std::isinf(v)) {
        ++c.overflow;
        if (d.overflow == Overflow::Saturate) f = std::copysign(std::numeric_limits<float>::max(), f);
      }
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v, 8);
    }
    return;
  }
  case Ty::I8:
  case Ty::I32: {
    const double lo = to == Ty::I8 ? -128.0 : -2147483648.0, hi = to == Ty::I8 ? 127.0 : 2147483647.0;
    if (std::isnan(v)) v = 0;
    const double t = std::trunc(v);
    if (t < lo || t > hi) ++c.overflow;
    const auto i = static_cast<int64_t>(std::clamp(t, lo, hi));
    if (to == Ty::I8) *p = static_cast<uint8_t>(static_cast<int8_t>(i));
    else { const auto w = static_cast<int32_t>(i); std::memcpy(p, &w, 4); }
    return;
  }
  }
  (void)from;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A product of sizes, or — when a factor is negative or the product overflows — a size
/// no buffer holds, so the bounds check that follows fails instead of the arithmetic.
constexpr int64_t kTooBig = int64_t{1} << 62;
int64_t mul(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors)
    if (f < 0 || __builtin_mul_overflow(out, f, &out) || out > kTooBig) return kTooBig;
  return out;
}

/// Converts `n` contiguous elements: writeValue on each, with fast paths for what the
/// lowerings copy most (f32 → f16 / bf16, and no conversion at all).
void convertRun(Ty from, const uint8_t* src, Ty to, uint8_t* dst, int64_t n, const Device& d, NumericsCounters& c) {
  if (from == to && !(to == Ty::F32 && d.nan == NanMode::Zero)) {
    std::memcpy(dst, src, static_cast<size_t>(n * tySize(to)));
    return;
  }
  if (from == Ty::F32 && (to == Ty::F16 || to == Ty::BF16)) {
    int64_t i = 0;
#if defined(__F16C__)
    // Eight at a time in hardware (round to nearest even from f32: the same single
    // rounding) when none of the eight overflows, underflows to zero or is NaN — the
    // cases that count, saturate or change NaN — else one by one.
    if (to == Ty::F16) {
      const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
      const __m256 tiny = _mm256_set1_ps(0x1p-25f), huge = _mm256_set1_ps(65520.0f), zero = _mm256_setzero_ps();
      for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i));
        const __m256 a = _mm256_and_ps(x, absMask);
        const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(a, huge, _CMP_LT_OQ),
                                        _mm256_or_ps(_mm256_cmp_ps(a, tiny, _CMP_GT_OQ), _mm256_cmp_ps(a, zero, _CMP_EQ_OQ)));
        if (_mm256_movemask_ps(ok) != 0xFF) break;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
      }
    }
#endif
    for (; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, src + 4 * i, 4);
      const uint16_t h = to == Ty::F16 ? f32ToF16(bits, d, c) : toBf16(bits, d, c);
      std::memcpy(dst + 2 * i, &h, 2);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    writeValue(to, dst + i * tySize(to), readValue(from, src + i * tySize(from)), from, d, c);
}

class Run {
public:
  Run(const Device& d, const Program& p, std::span<const GmView> gm, const Emulator::Options& o)
      : d_(d), p_(p), gm_(gm), o_(o) {
    const Buffer* sizes[] = {&d.l1, &d.l0a, &d.l0b, &d.l0c, &d.ub};
    for (size_t b = 0; b < 5; ++b) {
      // The buffers of this thread's last run, zeroed as far as it wrote them.
      auto& buffer = pool()[b];
      if (o.functional) {
        if (buffer.size() != static_cast<size_t>(sizes[b]->bytes)) buffer.assign(static_cast<size_t>(sizes[b]->bytes), 0);
        else std::memset(buffer.data(), 0, static_cast<size_t>(std::min<int64_t>(dirty()[b], sizes[b]->bytes)));
        dirty()[b] = 0;
      }
      if (o.functional) shadows_[b] = std::make_unique<Shadow>(sizes[b]->bytes);
    }
    stats_.macsPerCycle = 4096 / std::max<int64_t>(d.mmadCyclesPerFractal, 1);
  }

  ~Run() {
    if (overlapping_) mmadJoin(); // an error unwinding: the cube's last mmad still ran
  }

  void joinCube() {
    overlapping_ = false;
    mmadJoin();
  }

  TcStats go() {
    if (o_.functional && gm_.size() != p_.gm.size())
      fail(ErrorKind::Value, "tc: the program declares ", p_.gm.size(), " GM tensors, ", gm_.size(), " given");
    for (size_t i = 0; o_.functional && i < gm_.size(); ++i)
      if (gm_[i].elements < p_.gm[i].elements)
        fail(ErrorKind::Value, "tc: GM tensor %", i, " has ", gm_[i].elements, " elements, the program declares ",
             p_.gm[i].elements);
    steps_.clear(); // this thread's, kept from run to run with its capacity
    steps_.reserve(p_.code.size());
    for (at_ = 0; at_ < p_.code.size(); ++at_) {
      if ((at_ & 255) == 0) checkInterrupt();
      execute(p_.code[at_]);
    }
    if (overlapping_) joinCube();
    for (size_t s = 0; s < kPipes; ++s)
      for (size_t t = 0; t < kPipes; ++t)
        for (size_t e = 0; e < flags_[s][t].size(); ++e)
          if (flags_[s][t][e].set)
            throw Error(ErrorKind::Runtime,
                        cat("tc: the program ends with flag ", pipeName(static_cast<Pipe>(s)), " -> ",
                            pipeName(static_cast<Pipe>(t)), " event ", e, " still set (set at instruction ",
                            flags_[s][t][e].step + 1, ")"),
                        spanOf(flags_[s][t][e].step));
    const Schedule sched = schedule(steps_, d_.queueDepth);
    stats_.programs = 1;
    stats_.instructions = static_cast<int64_t>(p_.code.size());
    stats_.cycles = sched.total;
    stats_.serialCycles = sched.serial;
    stats_.busy = sched.busy;
    stats_.stall = sched.stall;
    stats_.cubeCycles = sched.busy[static_cast<size_t>(Pipe::Cube)];
    if (o_.trace)
      for (size_t i = 0; i < steps_.size(); ++i)
        o_.trace->push_back({steps_[i].pipe, sched.start[i] + o_.traceOffset, sched.end[i] + o_.traceOffset,
                             p_.code[i]});
    if (o_.buffers) *o_.buffers = pool();
    return stats_;
  }

private:
  Span spanOf(size_t instr) const {
    if (instr >= p_.lines.size()) return Span{};
    const auto line = p_.lines[instr];
    return Span{internFileName(p_.file), line, 1, line, 1};
  }

  template <typename... Parts>
  [[noreturn]] void fault(const Parts&... parts) const {
    throw Error(ErrorKind::Runtime, cat("tc: instruction ", at_ + 1, " (", printInstr(p_.code[at_]), "): ", parts...),
                spanOf(at_));
  }

  /// On-chip memory, kept per thread from run to run (a run starts by zeroing what the
  /// last one wrote, not the whole of it).
  static std::array<std::vector<uint8_t>, 5>& pool() {
    thread_local std::array<std::vector<uint8_t>, 5> memory;
    return memory;
  }
  static std::vector<Step>& stepsOfThisThread() {
    thread_local std::vector<Step> steps;
    return steps;
  }
  static std::array<int64_t, 5>& dirty() {
    thread_local std::array<int64_t, 5> extent{};
    return extent;
  }

  const Buffer& buffer(Buf b) const {
    const Buffer* sizes[] = {&d_.l1, &d_.l0a, &d_.l0b, &d_.l0c, &d_.ub};
    return *sizes[static_cast<size_t>(b)];
  }

  /// Checks an access of `bytes` at `addr` of on-chip buffer `b`, tracks it for races,
  /// and returns its memory (null when not functional).
  uint8_t* onChip(Buf b, int64_t addr, int64_t bytes, bool write) {
    const Buffer& buf = buffer(b);
    const char* name = bufName(b);
    if (addr < 0 || bytes < 0) fault("a negative ", name, " address or size");
    if (addr % buf.align != 0) fault(name, " address ", addr, " is not aligned to ", buf.align, " B");
    if (addr > buf.bytes || bytes > buf.bytes - addr)
      fault(write ? "writes " : "reads ", name, " bytes [", addr, ", ", addr + bytes, "), past its ", buf.bytes, " B");
    auto& peak = stats_.peak[static_cast<size_t>(b)];
    if (write) peak = std::max(peak, addr + bytes);
    if (write && o_.functional) dirty()[static_cast<size_t>(b)] = std::max(dirty()[static_cast<size_t>(b)], addr + bytes);
    if (!o_.functional) return nullptr;
    if (overlapping_ && (b == Buf::L0A || b == Buf::L0B || b == Buf::L0C)) joinCube();
    track(b, addr, bytes, write);
    return pool()[static_cast<size_t>(b)].data() + addr;
  }

  void track(Buf b, int64_t addr, int64_t bytes, bool write) {
    const auto q = static_cast<size_t>(pipe_);
    const Clock& known = clock_[q];
    shadows_[static_cast<size_t>(b)]->visit(addr, addr + bytes, [&](Access& a, int64_t at) {
      if (a.writer >= 0 && static_cast<size_t>(a.writer) != q && a.writerSeq > known[static_cast<size_t>(a.writer)])
        race(b, at, cat(write ? "overwrites" : "reads", " data ", pipeName(static_cast<Pipe>(a.writer)),
                        " wrote at instruction ", a.writerInstr + 1));
      if (write) {
        for (size_t p = 0; p < kPipes; ++p)
          if (p != q && a.reads[p] > known[p])
            race(b, at, cat("overwrites data ", pipeName(static_cast<Pipe>(p)), " may still be reading"));
        a = Access{static_cast<int8_t>(q), static_cast<int32_t>(at_), seq_[q], {}};
      } else {
        a.reads[q] = seq_[q];
      }
    });
  }

  void race(Buf b, int64_t byte, const std::string& what) {
    if (o_.countRaces) {
      if (lastRace_ != at_ + 1) ++stats_.races;
      lastRace_ = at_ + 1;
      return;
    }
    fault("race: ", what, " (", bufName(b), " byte ", byte,
          ") with no set_flag/wait_flag or barrier ordering them");
  }

  const GmTensor& gmTensor(int64_t id) const {
    if (id < 0 || id >= static_cast<int64_t>(p_.gm.size())) fault("no GM tensor %", id);
    return p_.gm[static_cast<size_t>(id)];
  }

  /// GM tensor `id`'s element `offset` for an access spanning `extent` elements from it.
  uint8_t* gm(int64_t id, int64_t offset, int64_t extent, bool write) {
    const GmTensor& g = gmTensor(id);
    if (write && g.role == GmTensor::Role::In) fault("writes GM tensor %", id, ", an input");
    if (offset < 0 || extent < 0 || offset > g.elements || extent > g.elements - offset)
      fault("accesses elements [", offset, ", ", offset + extent, ") of GM tensor %", id, ", which has ", g.elements);
    if (!o_.functional) return nullptr;
    return gm_[static_cast<size_t>(id)].data + offset * tySize(g.ty);
  }

  void count(Path path, int64_t bytes) {
    stats_.bytes[static_cast<size_t>(path)] += bytes;
    cycles_ = moveCycles(d_, path, bytes);
  }

  /// The extent, in elements, of a rows × cols block with row stride `stride`.
  static int64_t extent(int64_t rows, int64_t cols, int64_t stride) {
    return rows <= 0 ? 0 : std::min(kTooBig, mul({rows - 1, stride}) + std::min(cols, kTooBig));
  }

  void execute(const Instr& in) {
    pipe_ = pipeOf(in);
    const auto q = static_cast<size_t>(pipe_);
    ++seq_[q];
    cycles_ = 0;
    Deps after;
    if (barrier_ >= 0) after.push_back(static_cast<size_t>(barrier_));
    switch (in.op) {
    case Op::CopyGmToL1: copyGmToL1(in); break;
    case Op::CopyGmToUb: copyGmToUb(in); break;
    case Op::Load2d: load2d(in); break;
    case Op::Load3d: load3d(in); break;
    case Op::Mmad: mmadOp(in); break;
    case Op::Fixpipe:
      if (!d_.fixpipe)
        fault("device ", d_.name, " has no FIXPIPE: drain L0C with copy_l0c_to_ub, then copy_ub_to_gm");
      drain(in, true);
      break;
    case Op::CopyL0cToUb: drain(in, false); break;
    case Op::CopyUbToGm: copyUbToGm(in); break;
    case Op::VAdd:
    case Op::VMul:
    case Op::VMax: binary(in); break;
    case Op::VRelu:
    case Op::VCast: unary(in); break;
    case Op::SetFlag:
    case Op::WaitFlag: flag(in, after); break;
    case Op::Barrier: barrier(in, after); break;
    }
    lastOnPipe_[q] = static_cast<int64_t>(steps_.size());
    steps_.push_back(Step{pipe_, cycles_, after});
  }

  void copyGmToL1(const Instr& in) {
    const int64_t rows = in[F::Rows], cols = in[F::Cols], stride = in[F::Stride] ? in[F::Stride] : cols;
    if (rows <= 0 || cols <= 0 || stride < cols) fault("needs rows, cols > 0 and stride >= cols");
    const Ty to = static_cast<Ty>(in[F::Dtype]);
    if (to != Ty::F16 && to != Ty::BF16 && to != Ty::I8) fault("L1 holds cube inputs: f16, bf16 or i8");
    const int64_t size = tySize(to), c0 = fractalCols(to);
    const GmTensor& g = gmTensor(in[F::GmSrc]);
    const uint8_t* src = gm(in[F::GmSrc], in[F::Offset], extent(rows, cols, stride), false);
    int64_t dstRows = rows, bytes = mul({rows, cols, size});
    if (in[F::Nz]) {
      dstRows = in[F::DstRows] ? in[F::DstRows] : ceilDiv(rows, kFractalRows) * kFractalRows;
      if (dstRows < rows || dstRows % kFractalRows) fault("dst_rows must be a multiple of 16 holding rows");
      bytes = mul({ceilDiv(cols, c0), dstRows, c0, size});
    }
    uint8_t* dst = onChip(Buf::L1, in[F::Dst], bytes, true);
    count(Path::GmToL1, bytes);
    if (!dst) return;
    if (in[F::Nz] && (dstRows != rows || cols % c0 != 0)) std::memset(dst, 0, static_cast<size_t>(bytes)); // the padding
    const int64_t from = tySize(g.ty);
    if (stride == cols && (!in[F::Nz] || (cols == c0 && dstRows == rows))) { // one run: no reordering
      convertRun(g.ty, src, to, dst, rows * cols, d_, stats_.numerics);
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (!in[F::Nz]) {
        convertRun(g.ty, src + r * stride * from, to, dst + r * cols * size, cols, d_, stats_.numerics);
        continue;
      }
      for (int64_t c = 0; c < cols; c += c0) // one C0 run of the row per column block
        convertRun(g.ty, src + (r * stride + c) * from, to, dst + ((c / c0) * dstRows + r) * c0 * size,
                   std::min(c0, cols - c), d_, stats_.numerics);
    }
  }

  void copyGmToUb(const Instr& in) {
    const int64_t n = in[F::Count];
    if (n <= 0) fault("count must be positive");
    const Ty to = static_cast<Ty>(in[F::Dtype]);
    const GmTensor& g = gmTensor(in[F::GmSrc]);
    const uint8_t* src = gm(in[F::GmSrc], in[F::Offset], n, false);
    uint8_t* dst = onChip(Buf::UB, in[F::Dst], mul({n, tySize(to)}), true);
    count(Path::GmToUb, n * tySize(to));
    if (dst) convertRun(g.ty, src, to, dst, n, d_, stats_.numerics);
  }

  void load2d(const Instr& in) {
    const auto into = static_cast<Buf>(in[F::Into]);
    const int64_t n = in[F::Count], stride = in[F::SrcStride];
    const Ty ty = static_cast<Ty>(in[F::Dtype]);
    if (n <= 0 || stride < 0) fault("needs count > 0 and src_stride >= 0");
    const bool int8T = in[F::Transpose] && ty == Ty::I8;
    if (int8T && n % 2) fault("an int8 transpose moves 32×32 blocks: count must be even");
    // Each unit is a fractal (or, transposing int8, two adjacent ones).
    const int64_t unit = int8T ? 2 * kFractalBytes : kFractalBytes, units = int8T ? n / 2 : n;
    uint8_t* dst = onChip(into, in[F::Dst], mul({n, kFractalBytes}), true); // bounds n first
    std::vector<uint8_t*> from(static_cast<size_t>(units));
    for (int64_t u = 0; u < units; ++u)
      from[static_cast<size_t>(u)] = onChip(Buf::L1, in[F::Src] + mul({u, stride, kFractalBytes}), unit, false);
    count(into == Buf::L0A ? Path::L1ToL0a : Path::L1ToL0b, n * kFractalBytes);
    if (!dst) return;
    for (int64_t u = 0; u < units; ++u) {
      const uint8_t* s = from[static_cast<size_t>(u)];
      uint8_t* t = dst + u * unit;
      if (!in[F::Transpose]) {
        std::memmove(t, s, static_cast<size_t>(unit));
      } else if (!int8T) { // 16×16 two-byte elements
        uint16_t from16[256], to16[256];
        std::memcpy(from16, s, sizeof from16);
        for (int r = 0; r < 16; ++r)
          for (int c = 0; c < 16; ++c) to16[c * 16 + r] = from16[r * 16 + c];
        std::memcpy(t, to16, sizeof to16);
      } else { // a 32×32 int8 block: two 16×32 fractals in, their transposes out
        uint8_t block[2 * kFractalBytes];
        std::memcpy(block, s, sizeof block);
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t r = 0; r < 16; ++r)
            for (int64_t c = 0; c < 32; ++c) t[h * 512 + r * 32 + c] = block[(c / 16) * 512 + (c % 16) * 32 + h * 16 + r];
      }
    }
  }

  void load3d(const Instr& in) {
    const Ty ty = static_cast<Ty>(in[F::Dtype]);
    const int64_t size = tySize(ty), c0 = fractalCols(ty);
    const int64_t c1 = in[F::C1], ih = in[F::Ih], iw = in[F::Iw], row0 = in[F::Row0];
    const int64_t rows = in[F::Rows] ? in[F::Rows] : ih;
    const int64_t kh = in[F::Kh], kw = in[F::Kw], oh = in[F::Oh], ow = in[F::Ow];
    const int64_t m = in[F::M], k = in[F::K], m0 = in[F::M0], k0 = in[F::K0];
    if (c1 <= 0 || ih <= 0 || iw <= 0 || rows <= 0 || kh <= 0 || kw <= 0 || oh <= 0 || ow <= 0 || m <= 0 || k <= 0 ||
        in[F::StrideH] <= 0 || in[F::StrideW] <= 0 || in[F::DilH] <= 0 || in[F::DilW] <= 0 || m0 < 0 || k0 < 0 ||
        in[F::PadH] < 0 || in[F::PadW] < 0)
      fault("sizes, strides and dilations must be positive, offsets and padding not negative");
    const int64_t mt = ceilDiv(m, kFractalRows), kt = ceilDiv(k, c0);
    if ((k0 + kt) > c1 * kh * kw) fault("k fractals [", k0, ", ", k0 + kt, ") pass the ", c1 * kh * kw, " of the kernel");
    uint8_t* dst = onChip(Buf::L0A, in[F::Dst], mul({mt, kt, kFractalBytes}), true);
    const uint8_t* src = onChip(Buf::L1, in[F::Src], mul({c1, rows, iw, c0, size}), false);
    count(Path::L1ToL0a, mt * kt * kFractalBytes);
    for (int64_t mi = 0; mi < mt * kFractalRows; ++mi) {
      const int64_t pos = m0 + mi;
      const bool real = mi < m && pos < oh * ow;
      const int64_t oy = pos / ow, ox = pos % ow;
      for (int64_t ki = 0; ki < kt; ++ki) {
        const int64_t kf = k0 + ki, cb = kf / (kh * kw), ky = (kf / kw) % kh, kx = kf % kw;
        const int64_t iy = oy * in[F::StrideH] - in[F::PadH] + ky * in[F::DilH];
        const int64_t ix = ox * in[F::StrideW] - in[F::PadW] + kx * in[F::DilW];
        const bool inside = real && iy >= 0 && iy < ih && ix >= 0 && ix < iw;
        if (inside && (iy < row0 || iy >= row0 + rows))
          fault("needs input row ", iy, ", but L1 holds rows [", row0, ", ", row0 + rows, ")");
        if (!dst) continue;
        uint8_t* t = dst + ((mi / kFractalRows) * kt + ki) * kFractalBytes + (mi % kFractalRows) * c0 * size;
        if (inside) std::memcpy(t, src + ((cb * rows + iy - row0) * iw + ix) * c0 * size, static_cast<size_t>(c0 * size));
        else std::memset(t, 0, static_cast<size_t>(c0 * size));
      }
    }
  }

  void mmadOp(const Instr& in) {
    const Ty ty = static_cast<Ty>(in[F::Dtype]);
    if (ty != Ty::F16 && ty != Ty::BF16 && ty != Ty::I8) fault("the cube multiplies f16, bf16 or i8");
    const int64_t m = in[F::M], k = in[F::K], n = in[F::N];
    if (m <= 0 || k <= 0 || n <= 0) fault("m, k and n must be positive");
    const int64_t mt = ceilDiv(m, kFractalRows), kt = ceilDiv(k, fractalCols(ty)), nt = ceilDiv(n, kFractalRows);
    const uint8_t* a = onChip(Buf::L0A, in[F::A], mul({mt, kt, kFractalBytes}), false);
    const uint8_t* b = onChip(Buf::L0B, in[F::B], mul({kt, nt, kFractalBytes}), false);
    uint8_t* c = onChip(Buf::L0C, in[F::C], mul({nt, mt, kFractalRows * kFractalRows * 4}), true);
    stats_.macs += in[F::Macs] > 0 ? in[F::Macs] : m * k * n; // each at most a buffer's fractals
    stats_.paddedMacs += mt * kt * nt * kFractalRows * kFractalRows * fractalCols(ty);
    cycles_ = mmadCycles(d_, mt * kt * nt);
    const MmadShape shape{mt, kt, nt, ty, in[F::Init] != 0};
    if (!c) return;
    if (mmadCanOverlap(shape, d_)) {
      mmadAsync(a, b, c, shape, d_);
      overlapping_ = true;
    } else {
      mmad(a, b, c, shape, d_, stats_.numerics);
    }
  }

  /// fixpipe (to GM) or copy_l0c_to_ub (to UB, row-major): element (r, c) of L0C's NZ
  /// tile is at ((c/16)·src_rows + r)·16 + c%16.
  void drain(const Instr& in, bool toGm) {
    const int64_t m = in[F::M], n = in[F::N];
    if (m <= 0 || n <= 0) fault("m and n must be positive");
    const int64_t srcRows = in[F::SrcRows] ? in[F::SrcRows] : ceilDiv(m, kFractalRows) * kFractalRows;
    if (srcRows < m || srcRows % kFractalRows) fault("src_rows must be a multiple of 16 holding m");
    const Ty to = toGm ? gmTensor(in[F::GmDst]).ty : static_cast<Ty>(in[F::Dtype]);
    if (toGm && to != static_cast<Ty>(in[F::Dtype]))
      fault("writes ", tyName(static_cast<Ty>(in[F::Dtype])), " into GM tensor %", in[F::GmDst], " of ", tyName(to));
    const Ty acc = to == Ty::I32 ? Ty::I32 : Ty::F32;
    const uint8_t* src = onChip(Buf::L0C, in[F::Src], mul({ceilDiv(n, kFractalRows), srcRows, kFractalRows * 4}), false);
    const int64_t bytes = m * n * tySize(to); // m, n bounded by L0C now
    // Where element (r, c) goes, in elements from the destination's start.
    const auto layout = static_cast<OutLayout>(toGm ? in[F::Layout] : 0);
    const int64_t stride = toGm && in[F::Stride] ? in[F::Stride] : n, plane = in[F::Plane];
    if (layout != OutLayout::Nd && plane < m) fault("a blocked output needs plane >= m");
    auto place = [&](int64_t r, int64_t c) {
      return layout == OutLayout::Nd ? r * stride + c : ((c / 16) * plane + r) * 16 + c % 16;
    };
    if (layout == OutLayout::Nd && stride < n) fault("stride must be at least n");
    uint8_t* dst = nullptr;
    const double* bias = nullptr;
    std::vector<double> biasValues;
    if (toGm) {
      dst = gm(in[F::GmDst], in[F::Offset], place(m - 1, n - 1) + 1, true);
      count(Path::L0cToGm, bytes);
      if (in[F::Bias] >= 0) {
        const GmTensor& bg = gmTensor(in[F::Bias]);
        const uint8_t* bp = gm(in[F::Bias], in[F::BiasOffset], n, false);
        if (bp) {
          for (int64_t c = 0; c < n; ++c) biasValues.push_back(readValue(bg.ty, bp + c * tySize(bg.ty)));
          bias = biasValues.data();
        }
      }
    } else {
      dst = onChip(Buf::UB, in[F::Dst], bytes, true);
      count(Path::L0cToUb, bytes);
    }
    if (!dst || !src) return;
    if (acc == Ty::F32) { // a fractal row's 16 columns are contiguous at both ends
      float row[kFractalRows];
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; c += kFractalRows) {
          const int64_t len = std::min(kFractalRows, n - c);
          std::memcpy(row, src + (((c / kFractalRows) * srcRows + r) * kFractalRows) * 4, static_cast<size_t>(len) * 4);
          for (int64_t j = 0; j < len; ++j) {
            if (bias) row[j] = roundSum(row[j], bias[c + j]); // the bias add rounds once, in f32
            if (in[F::Relu] && row[j] < 0) row[j] = 0;
          }
          convertRun(Ty::F32, reinterpret_cast<const uint8_t*>(row), to, dst + place(r, c) * tySize(to), len, d_,
                     stats_.numerics);
        }
      return;
    }
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double v = readValue(acc, src + (((c / kFractalRows) * srcRows + r) * kFractalRows + c % kFractalRows) * 4);
        if (bias) v = roundSum(v, bias[c]); // the bias add rounds once, in f32
        if (in[F::Relu] && v < 0) v = 0;
        writeValue(to, dst + place(r, c) * tySize(to), v, acc, d_, stats_.numerics);
      }
  }

  void copyUbToGm(const Instr& in) {
    const int64_t rows = in[F::Rows], cols = in[F::Cols];
    const int64_t srcStride = in[F::SrcStride] ? in[F::SrcStride] : cols;
    const int64_t stride = in[F::Stride] ? in[F::Stride] : cols;
    if (rows <= 0 || cols <= 0 || srcStride < cols || stride < cols)
      fault("rows and cols must be positive, strides at least cols");
    const Ty from = static_cast<Ty>(in[F::Dtype]);
    const Ty to = gmTensor(in[F::GmDst]).ty;
    const auto layout = static_cast<OutLayout>(in[F::Layout]);
    const int64_t plane = in[F::Plane];
    if (layout != OutLayout::Nd && plane < rows) fault("a blocked output needs plane >= rows");
    auto place = [&](int64_t r, int64_t c) {
      return layout == OutLayout::Nd ? r * stride + c : ((c / 16) * plane + r) * 16 + c % 16;
    };
    const uint8_t* src = onChip(Buf::UB, in[F::Src], mul({extent(rows, cols, srcStride), tySize(from)}), false);
    uint8_t* dst = gm(in[F::GmDst], in[F::Offset], place(rows - 1, cols - 1) + 1, true);
    count(Path::UbToGm, rows * cols * tySize(to));
    if (!dst || !src) return;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        writeValue(to, dst + place(r, c) * tySize(to), readValue(from, src + (r * srcStride + c) * tySize(from)), from,
                   d_, stats_.numerics);
  }

  void vectorCycles(int64_t bytes) { cycles_ = d_.latency + ceilDiv(bytes, d_.vectorBytes); }

  void binary(const Instr& in) {
    const Ty ty = static_cast<Ty>(in[F::Dtype]);
    const int64_t n = in[F::Count], rows = in[F::Rows], size = tySize(ty);
    if (n <= 0 || rows <= 0) fault("count and rows must be positive");
    if (ty != Ty::F32 && ty != Ty::F16) fault("the vector unit computes in f32 or f16");
    const uint8_t* x = onChip(Buf::UB, in[F::Src], mul({rows, n, size}), false);
    const uint8_t* y = onChip(Buf::UB, in[F::Src1], mul({in[F::Bcast] ? 1 : rows, n, size}), false);
    uint8_t* out = onChip(Buf::UB, in[F::Dst], mul({rows, n, size}), true);
    vectorCycles(3 * rows * n * size);
    if (!out) return;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i) {
        const double a = readValue(ty, x + (r * n + i) * size);
        const double b = readValue(ty, y + ((in[F::Bcast] ? 0 : r * n) + i) * size);
        // Products of f16 or f32 operands are exact in f64, sums of f16 ones too: the store
        // rounds once. An f32 sum is rounded once by roundSum.
        const double v = in.op == Op::VAdd ? (ty == Ty::F32 ? static_cast<double>(roundSum(a, b)) : a + b)
                         : in.op == Op::VMul ? a * b
                         : (std::isnan(a) || std::isnan(b)) ? a + b
                                                            : std::max(a, b);
        writeValue(ty, out + (r * n + i) * size, v, ty, d_,
                   stats_.numerics);
      }
  }

  void unary(const Instr& in) {
    const Ty from = static_cast<Ty>(in[F::Dtype]);
    const Ty to = in.op == Op::VCast ? static_cast<Ty>(in[F::To]) : from;
    const int64_t n = in[F::Count];
    if (n <= 0) fault("count must be positive");
    const uint8_t* x = onChip(Buf::UB, in[F::Src], mul({n, tySize(from)}), false);
    uint8_t* out = onChip(Buf::UB, in[F::Dst], mul({n, tySize(to)}), true);
    vectorCycles(n * (tySize(from) + tySize(to)));
    if (!out) return;
    for (int64_t i = 0; i < n; ++i) {
      double v = readValue(from, x + i * tySize(from));
      if (in.op == Op::VRelu && v < 0) v = 0;
      writeValue(to, out + i * tySize(to), v, from, d_, stats_.numerics);
    }
  }

  void flag(const Instr& in, Deps& after) {
    const int64_t src = in[F::SrcPipe], dst = in[F::DstPipe], e = in[F::Event];
    if (src >= static_cast<int64_t>(kPipes) || dst >= static_cast<int64_t>(kPipes) || src == dst)
      fault("a flag goes from one pipe to another");
    if (e < 0 || e >= d_.events) fault("event ids on ", d_.name, " are 0 to ", d_.events - 1);
    auto& slot = flags_[static_cast<size_t>(src)][static_cast<size_t>(dst)];
    if (slot.size() < static_cast<size_t>(d_.events)) slot.resize(static_cast<size_t>(d_.events));
    Flag& f = slot[static_cast<size_t>(e)];
    if (in.op == Op::SetFlag) {
      if (f.set) fault("the flag is already set (at instruction ", f.step + 1, "): a flag is one bit, not a counter");
      f.set = true;
      f.step = at_;
      f.clock = clock_[static_cast<size_t>(src)];
      f.clock[static_cast<size_t>(src)] = seq_[static_cast<size_t>(src)];
    } else {
      if (!f.set) fault("waits for a flag no earlier set_flag set: the pipes would deadlock");
      f.set = false;
      join(clock_[static_cast<size_t>(dst)], f.clock);
      after.push_back(f.step);
    }
  }

  void barrier(const Instr& in, Deps& after) {
    const int64_t p = in[F::PipeF];
    for (size_t q = 0; q < kPipes; ++q) {
      if (p != static_cast<int64_t>(kPipes) && static_cast<int64_t>(q) != p) continue;
      if (lastOnPipe_[q] >= 0) after.push_back(static_cast<size_t>(lastOnPipe_[q]));
      for (size_t r = 0; r < kPipes; ++r) clock_[r][q] = seq_[q];
    }
    barrier_ = static_cast<int64_t>(at_);
  }

  struct Flag {
    bool set = false;
    size_t step = 0;
    Clock clock{};
  };

  const Device& d_;
  const Program& p_;
  std::span<const GmView> gm_;
  const Emulator::Options& o_;
  std::array<std::unique_ptr<Shadow>, 5> shadows_;
  Clock seq_{};                            ///< instructions issued per pipe
  std::array<Clock, kPipes> clock_{};      ///< clock_[q][p]: p's instructions q knows done
  std::array<std::array<std::vector<Flag>, kPipes>, kPipes> flags_;
  std::array<int64_t, kPipes> lastOnPipe_{-1, -1, -1, -1, -1, -1};
  int64_t barrier_ = -1;
  std::vector<Step>& steps_ = stepsOfThisThread();
  size_t at_ = 0;
  size_t lastRace_ = 0;
  Pipe pipe_ = Pipe::Cube;
  int64_t cycles_ = 0;
  bool overlapping_ = false; ///< an mmad runs on the helper thread
  TcStats stats_;
};

} // namespace

const char* pathKey(size_t path) {
  static const char* const keys[kPaths] = {"gm-l1", "gm-ub", "l1-l0a", "l1-l0b", "l0c-gm", "l0c-ub", "ub-gm"};
  return path < kPaths ? keys[path] : "?";
}

double TcStats::utilization() const {
  return cycles > 0 ? static_cast<double>(macs) / (static_cast<double>(cycles) * static_cast<double>(macsPerCycle)) : 0.0;
}

void TcStats::add(const TcStats& o) {
  programs += o.programs;
  instructions += o.instructions;
  cycles += o.cycles;
  serialCycles += o.serialCycles;
  cubeCycles += o.cubeCycles;
  macs += o.macs;
  paddedMacs += o.paddedMacs;
  macsPerCycle = o.macsPerCycle;
  for (size_t i = 0; i < kPaths; ++i) bytes[i] += o.bytes[i];
  for (size_t i = 0; i < kPipes; ++i) busy[i] += o.busy[i], stall[i] += o.stall[i];
  for (size_t i = 0; i < peak.size(); ++i) peak[i] = std::max(peak[i], o.peak[i]);
  transdata += o.transdata;
  transdataBytes += o.transdataBytes;
  numerics.overflow += o.numerics.overflow;
  numerics.underflow += o.numerics.underflow;
  numerics.nan += o.numerics.nan;
  numerics.wraps += o.numerics.wraps;
  races += o.races;
  tilings.insert(tilings.end(), o.tilings.begin(), o.tilings.end());
}

namespace {

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += cat("\\u00", "0123456789abcdef"[(c >> 4) & 15], "0123456789abcdef"[c & 15]);
    else out += c;
  }
  return out + "\"";
}

/// A TSL key as JSON spells it: "gm-l1" is "gm_l1".
std::string snakeCase(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string lower(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

std::string TcStats::json() const {
  std::ostringstream o;
  o << "{\"cycles\": " << cycles << ", \"serial_cycles\": " << serialCycles << ", \"cube_cycles\": " << cubeCycles
    << ", \"macs\": " << macs << ", \"padded_macs\": " << paddedMacs << ", \"utilization\": " << formatShortest(utilization(), false)
    << ", \"programs\": " << programs << ", \"instructions\": " << instructions << ", \"bytes\": {";
  for (size_t i = 0; i < kPaths; ++i) o << (i ? ", " : "") << jsonString(snakeCase(pathKey(i))) << ": " << bytes[i];
  o << "}, \"busy\": {";
  for (size_t i = 0; i < kPipes; ++i) o << (i ? ", " : "") << jsonString(lower(pipeName(static_cast<Pipe>(i)))) << ": " << busy[i];
  o << "}, \"stall\": {";
  for (size_t i = 0; i < kPipes; ++i) o << (i ? ", " : "") << jsonString(lower(pipeName(static_cast<Pipe>(i)))) << ": " << stall[i];
  o << "}, \"peak\": {";
  for (size_t i = 0; i < peak.size(); ++i) o << (i ? ", " : "") << jsonString(bufName(static_cast<Buf>(i))) << ": " << peak[i];
  o << "}, \"transdata\": " << transdata << ", \"transdata_bytes\": " << transdataBytes << ", \"numerics\": {\"overflow\": "
    << numerics.overflow << ", \"underflow\": " << numerics.underflow << ", \"nan\": " << numerics.nan
    << ", \"wraps\": " << numerics.wraps << "}, \"races\": " << races << ", \"tilings\": [";
  for (size_t i = 0; i < tilings.size(); ++i) o << (i ? ", " : "") << jsonString(tilings[i]);
  o << "]}";
  return o.str();
}

std::string traceJson(const std::vector<TraceEvent>& events) {
  std::ostringstream o;
  o << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"time_unit\": \"1 us = 1 device cycle\"}, \"traceEvents\": [\n";
  o << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"tensor core\"}}";
  for (size_t p = 0; p < kPipes; ++p)
    o << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << p + 1 << ", \"args\": {\"name\": "
      << jsonString(pipeName(static_cast<Pipe>(p))) << "}}";
  for (const TraceEvent& e : events) {
    const std::string name = opName(e.instr.op);
    o << ",\n{\"name\": " << jsonString(name) << ", \"cat\": " << jsonString(pipeName(e.pipe))
      << ", \"ph\": \"X\", \"pid\": 1, \"tid\": " << static_cast<int>(e.pipe) + 1 << ", \"ts\": " << e.start
      << ", \"dur\": " << e.end - e.start << ", \"args\": {\"instruction\": " << jsonString(printInstr(e.instr)) << "}}";
  }
  o << "\n]}\n";
  return o.str();
}

Emulator::Emulator(Device device) : device_(std::move(device)) { validate(device_); }

TcStats Emulator::run(const Program& p, std::span<const GmView> gm, const Options& options) {
  return Run(device_, p, gm, options).go();
}

TcStats Emulator::time(const Program& p) {
  Options o;
  o.functional = false;
  return Run(device_, p, {}, o).go();
}

} // namespace tsl::compiler::tc
