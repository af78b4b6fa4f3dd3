// tests/unit/compiler/TcIsaTest.cpp — the tensor core's instructions, executed one by one:
// the cube's data orders (group M of docs/layouts.md's known answers) as the instructions produce
// them, int8 transposes and accumulation, the faults the emulator reports, and the text
// form (round trips, and malformed programs rejected with positions, never a crash).
#include "compiler/tc/Emulator.h"
#include "compiler/tc/Numerics.h"
#include "runtime/Layout.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

using namespace tsl;
using namespace tsl::compiler::tc;

namespace {

/// A GM tensor's bytes.
struct Gm {
  std::vector<uint8_t> bytes;
  int64_t elements;
  template <typename T>
  static Gm of(const std::vector<T>& v) {
    Gm g{std::vector<uint8_t>(v.size() * sizeof(T)), static_cast<int64_t>(v.size())};
    std::memcpy(g.bytes.data(), v.data(), g.bytes.size());
    return g;
  }
  static Gm zeros(int64_t n, int64_t size) { return Gm{std::vector<uint8_t>(static_cast<size_t>(n * size)), n}; }
  template <typename T>
  T at(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return v;
  }
};

TcStats runProgram(const std::string& text, std::vector<Gm>& gm, std::array<std::vector<uint8_t>, 5>* buffers = nullptr,
                   const Device& d = preset("a2")) {
  const Program p = parseProgram(text, "test.tc");
  std::vector<GmView> views;
  for (Gm& g : gm) views.push_back({g.bytes.data(), g.elements});
  Emulator::Options o;
  o.buffers = buffers;
  return Emulator(d).run(p, views, o);
}

std::string errorOf(const std::string& text, std::vector<Gm> gm, const Device& d = preset("a2")) {
  try {
    runProgram(text, gm, nullptr, d);
  } catch (const Error& e) {
    return std::string(e.what()) + " @line " + std::to_string(e.span().line);
  }
  return "";
}

/// A 32×32 f32 matrix whose elements are their row-major numbers.
std::vector<float> numbered(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

} // namespace

TEST_CASE("M: load2d puts a matrix in L0A in small-z big-Z order, transposed loads give L0B's small-n big-Z") {
  std::vector<Gm> gm{Gm::of(numbered(32 * 32))};
  std::array<std::vector<uint8_t>, 5> buf;
  // ND → NZ into L1, then L0A row by row of fractals and L0B fractal by fractal transposed.
  runProgram(R"(.gm %0 m f32 1024 in
copy_gm_to_l1 dst=0 src=%0 rows=32 cols=32 nz=1
set_flag src=mte2 dst=mte1 event=0
wait_flag src=mte2 dst=mte1 event=0
load2d into=l0a dst=0 src=0 count=2 src_stride=2
load2d into=l0a dst=1024 src=512 count=2 src_stride=2
load2d into=l0b dst=0 src=0 count=2 src_stride=2 transpose=1
load2d into=l0b dst=1024 src=512 count=2 src_stride=2 transpose=1
)",
             gm, &buf);
  for (const auto& [which, order] : {std::pair{Buf::L0A, kOrderL0A}, std::pair{Buf::L0B, kOrderL0B}}) {
    const auto& mem = buf[static_cast<size_t>(which)];
    for (int64_t r = 0; r < 32; ++r)
      for (int64_t c = 0; c < 32; ++c) {
        uint16_t bits;
        std::memcpy(&bits, mem.data() + 2 * fractalOffset(r, c, 32, 32, 16, 16, order), 2);
        REQUIRE(fromF16(bits) == static_cast<double>(r * 32 + c));
      }
  }
}

TEST_CASE("M: mmad leaves its result in L0C's small-z big-N order, and fixpipe writes it back row-major") {
  // A = the numbered matrix (exact in f16 up to 2048), B = identity: C = A.
  std::vector<float> identity(32 * 32, 0.0f);
  for (int i = 0; i < 32; ++i) identity[static_cast<size_t>(i * 33)] = 1.0f;
  std::vector<Gm> gm{Gm::of(numbered(32 * 32)), Gm::of(identity), Gm::zeros(32 * 32, 4)};
  std::array<std::vector<uint8_t>, 5> buf;
  const TcStats s = runProgram(R"(.gm %0 a f32 1024 in
.gm %1 b f32 1024 in
.gm %2 c f32 1024 out
copy_gm_to_l1 dst=0 src=%0 rows=32 cols=32 nz=1
copy_gm_to_l1 dst=2048 src=%1 rows=32 cols=32 nz=1
set_flag src=mte2 dst=mte1 event=0
wait_flag src=mte2 dst=mte1 event=0
load2d into=l0a dst=0 src=0 count=2 src_stride=2
load2d into=l0a dst=1024 src=512 count=2 src_stride=2
load2d into=l0b dst=0 src=2048 count=2 src_stride=2 transpose=1
load2d into=l0b dst=1024 src=2560 count=2 src_stride=2 transpose=1
set_flag src=mte1 dst=cube event=0
wait_flag src=mte1 dst=cube event=0
mmad c=0 a=0 b=0 m=32 k=32 n=32
set_flag src=cube dst=fixpipe event=0
wait_flag src=cube dst=fixpipe event=0
fixpipe dst=%2 src=0 m=32 n=32
)",
                               gm, &buf);
  const auto& l0c = buf[static_cast<size_t>(Buf::L0C)];
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 32; ++c) {
      float v;
      std::memcpy(&v, l0c.data() + 4 * fractalOffset(r, c, 32, 32, 16, 16, kOrderL0C), 4);
      REQUIRE(v == static_cast<float>(r * 32 + c));
      REQUIRE(gm[2].at<float>(r * 32 + c) == static_cast<float>(r * 32 + c));
    }
  CHECK(s.cubeCycles == 8);
  CHECK(s.macs == 32 * 32 * 32);
  CHECK(s.bytes[0] == 2 * 2048); // GM → L1 at the L1 dtype (f16)
  CHECK(s.bytes[4] == 32 * 32 * 4);
}

TEST_CASE("int8: a transposed load2d moves 32×32 blocks, mmad accumulates in int32 and counts wraps") {
  // A 16×32 of 127, B 32×16 of 127: every element is K = 32 products of 127·127 = 516,128.
  std::vector<int8_t> a(16 * 32, 127), b(32 * 32, 0);
  for (int k = 0; k < 32; ++k)
    for (int n = 0; n < 32; ++n) b[static_cast<size_t>(k * 32 + n)] = static_cast<int8_t>(n < 16 ? 127 : -128);
  std::vector<Gm> gm{Gm::of(a), Gm::of(b), Gm::zeros(16 * 32, 4)};
  runProgram(R"(.gm %0 a i8 512 in
.gm %1 b i8 1024 in
.gm %2 c i32 512 out
copy_gm_to_l1 dst=0 src=%0 rows=16 cols=32 nz=1 dtype=i8
copy_gm_to_l1 dst=512 src=%1 rows=32 cols=32 nz=1 dtype=i8
barrier pipe=mte2
load2d into=l0a dst=0 src=0 count=1 dtype=i8
load2d into=l0b dst=0 src=512 count=2 transpose=1 dtype=i8
barrier pipe=mte1
mmad c=0 a=0 b=0 m=16 k=32 n=32 dtype=i8
barrier pipe=cube
fixpipe dst=%2 src=0 m=16 n=32 dtype=i32
)",
             gm);
  for (int64_t r = 0; r < 16; ++r) {
    CHECK(gm[2].at<int32_t>(r * 32 + 3) == 516128);
    CHECK(gm[2].at<int32_t>(r * 32 + 20) == 32 * 127 * -128);
  }
}

TEST_CASE("int8: 4097 accumulating mmads of 32 products of (-128)·(-128) wrap int32 once, and say so") {
  std::string text = ".gm %0 a i8 512 in\n.gm %1 c i32 256 out\n"
                     "copy_gm_to_l1 dst=0 src=%0 rows=16 cols=32 nz=1 dtype=i8\n"
                     "barrier pipe=mte2\n"
                     "load2d into=l0a dst=0 src=0 count=1 dtype=i8\n"
                     "load2d into=l0b dst=0 src=0 count=1 dtype=i8\n" // A's fractal read as [n][k]: all -128 too
                     "barrier pipe=mte1\n";
  for (int i = 0; i < 4097; ++i) text += cat("mmad c=0 a=0 b=0 m=16 k=32 n=16 init=", i == 0 ? 1 : 0, " dtype=i8\n");
  text += "barrier pipe=cube\nfixpipe dst=%1 src=0 m=16 n=16 dtype=i32\n";
  std::vector<Gm> gm{Gm::of(std::vector<int8_t>(512, -128)), Gm::zeros(256, 4)};
  const TcStats s = runProgram(text, gm);
  // 4097 · 32 · 16384 = 2^31 + 2^19: one wrap per element, to -2^31 + 2^19.
  CHECK(gm[1].at<int32_t>(0) == -2147483648 + 524288);
  CHECK(s.numerics.wraps == 256);
}

TEST_CASE("faults name the instruction: overflow, misalignment, flags, races, inputs") {
  const std::string head = ".gm %0 a f32 1024 in\n.gm %1 c f32 1024 out\n";
  std::vector<Gm> gm{Gm::of(numbered(1024)), Gm::zeros(1024, 4)};
  CHECK(errorOf(head + "copy_gm_to_l1 dst=524288 src=%0 rows=16 cols=16\n", gm).find("past its 524288 B") !=
        std::string::npos);
  CHECK(errorOf(head + "copy_gm_to_l1 dst=16 src=%0 rows=16 cols=16\n", gm).find("not aligned to 32 B") !=
        std::string::npos);
  CHECK(errorOf(head + "set_flag src=mte2 dst=mte1 event=0\nset_flag src=mte2 dst=mte1 event=0\n", gm)
            .find("already set") != std::string::npos);
  CHECK(errorOf(head + "wait_flag src=mte2 dst=mte1 event=3\n", gm).find("deadlock") != std::string::npos);
  CHECK(errorOf(head + "set_flag src=cube dst=fixpipe event=1\n", gm).find("still set") != std::string::npos);
  CHECK(errorOf(head + "set_flag src=cube dst=fixpipe event=8\n", gm).find("event ids on a2 are 0 to 7") !=
        std::string::npos);
  // MTE1 reads what MTE2 wrote with nothing ordering them.
  const std::string race = errorOf(head + "copy_gm_to_l1 dst=0 src=%0 rows=16 cols=16 nz=1\n"
                                          "load2d into=l0a dst=0 src=0 count=1\n",
                                   gm);
  CHECK(race.find("instruction 2 (load2d") != std::string::npos);
  CHECK(race.find("race: reads data MTE2 wrote at instruction 1") != std::string::npos);
  CHECK(race.find("@line 4") != std::string::npos); // the program's line
  // MTE2 overwrites L1 MTE1 may still be reading.
  CHECK(errorOf(head + "copy_gm_to_l1 dst=0 src=%0 rows=16 cols=16 nz=1\nbarrier pipe=all\n"
                       "load2d into=l0a dst=0 src=0 count=1\ncopy_gm_to_l1 dst=0 src=%0 rows=16 cols=16 nz=1\n",
                gm)
            .find("may still be reading") != std::string::npos);
  CHECK(errorOf(head + "copy_ub_to_gm dst=%0 src=0 rows=1 cols=4\n", gm).find("an input") != std::string::npos);
  CHECK(errorOf(head + "copy_gm_to_l1 dst=0 src=%0 offset=1000 rows=2 cols=16\n", gm).find("which has 1024") !=
        std::string::npos);
  CHECK(errorOf(head + "fixpipe dst=%1 src=0 m=16 n=16\n", gm, preset("910a")).find("has no FIXPIPE") !=
        std::string::npos);
  CHECK(errorOf(head + "set_flag src=mte2 dst=mte1 event=5\n", gm, preset("910a")).find("0 to 3") != std::string::npos);
}

TEST_CASE("the text form round-trips, and malformed programs are syntax errors with positions") {
  const std::string text = R"(.device a2
.gm %0 a f16 256 in
.gm %1 c f32 256 out
copy_gm_to_l1 dst=0 src=%0 rows=16 cols=16 nz=1
load3d dst=0 src=0 c1=1 ih=4 iw=4 kh=1 kw=1 oh=4 ow=4 m=16 k=16
mmad c=0 a=0 b=0 m=16 k=16 n=16 init=0 dtype=bf16
fixpipe dst=%1 src=0 m=16 n=16 layout=nc1hwc0 plane=16 relu=1 bias=%0
vadd dst=0 src=32 src1=64 count=8 rows=2 bcast=1
set_flag src=mte2 dst=mte1 event=0
barrier pipe=all
)";
  const Program p = parseProgram(text);
  CHECK(p.code.size() == 7);
  CHECK(printProgram(p) == text);
  CHECK(parseProgram(printProgram(p)) == p);
  auto syntax = [](const std::string& bad) {
    try {
      parseProgram(bad, "bad.tc");
    } catch (const Error& e) {
      return std::string(e.what()) + " @" + std::to_string(e.span().line) + ":" + std::to_string(e.span().col);
    }
    return std::string("accepted");
  };
  CHECK(syntax("mmad c=0 a=0\n").find("needs b=") != std::string::npos);
  CHECK(syntax("\n  frobnicate x=1\n") == "syntax error: tc: unknown instruction 'frobnicate' @2:3");
  CHECK(syntax("mmad c=0 a=0 b=0 m=x k=1 n=1\n").find("@1:20") != std::string::npos);
  CHECK(syntax("set_flag src=mte9 dst=cube event=0").find("takes a pipe") != std::string::npos);
  CHECK(syntax(".gm %1 a f32 4 in").find("numbered in order") != std::string::npos);
  CHECK(syntax("mmad c=0 c=0 a=0 b=0 m=1 k=1 n=1").find("twice") != std::string::npos);
  // Random mutations of a valid program: each parses or is a syntax error, never a crash;
  // what parses prints back to a program that parses to the same thing.
  std::mt19937 rng(7);
  const std::string alphabet = "=% \n;.abcdlmnpsx0123456789-";
  for (int i = 0; i < 3000; ++i) {
    std::string m = text;
    for (int j = 0; j < 1 + static_cast<int>(rng() % 4); ++j) {
      const size_t at = rng() % m.size();
      switch (rng() % 3) {
      case 0: m.erase(at, 1 + rng() % 5); break;
      case 1: m.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      default: m[at] = alphabet[rng() % alphabet.size()];
      }
    }
    try {
      const Program q = parseProgram(m);
      REQUIRE(parseProgram(printProgram(q)) == q);
    } catch (const Error& e) {
      REQUIRE(e.kind() == ErrorKind::Syntax);
    }
  }
}
