// compiler/tc/Isa.cpp — the instruction table, and the text form that follows from it.
#include "compiler/tc/Isa.h"

#include "tsl/Error.h"

#include <charconv>
#include <sstream>

namespace tsl::compiler::tc {

namespace {

/// How a field's value is written.
enum class Kind : uint8_t { Int, Ty, Gm, Pipe, Buf, Layout };

struct FieldInfo {
  const char* name;
  Kind kind;
};

constexpr FieldInfo kFieldInfo[kFields] = {
    {"dst", Kind::Int},      {"src", Kind::Int},       {"src1", Kind::Int},     {"offset", Kind::Int},
    {"rows", Kind::Int},     {"cols", Kind::Int},      {"stride", Kind::Int},   {"src_stride", Kind::Int},
    {"nz", Kind::Int},       {"dtype", Kind::Ty},      {"to", Kind::Ty},        {"dst_rows", Kind::Int},
    {"count", Kind::Int},    {"transpose", Kind::Int}, {"into", Kind::Buf},     {"c1", Kind::Int},
    {"ih", Kind::Int},       {"iw", Kind::Int},        {"row0", Kind::Int},     {"kh", Kind::Int},
    {"kw", Kind::Int},       {"stride_h", Kind::Int},  {"stride_w", Kind::Int}, {"pad_h", Kind::Int},
    {"pad_w", Kind::Int},    {"dil_h", Kind::Int},     {"dil_w", Kind::Int},    {"oh", Kind::Int},
    {"ow", Kind::Int},       {"m0", Kind::Int},        {"k0", Kind::Int},       {"c", Kind::Int},
    {"a", Kind::Int},        {"b", Kind::Int},         {"m", Kind::Int},        {"k", Kind::Int},
    {"n", Kind::Int},        {"init", Kind::Int},      {"macs", Kind::Int},     {"src_rows", Kind::Int},
    {"layout", Kind::Layout},{"plane", Kind::Int},     {"relu", Kind::Int},     {"bias", Kind::Gm},
    {"bias_offset", Kind::Int},{"bcast", Kind::Int},   {"src", Kind::Pipe},     {"dst", Kind::Pipe},
    {"event", Kind::Int},    {"pipe", Kind::Pipe},     {"src", Kind::Gm},       {"dst", Kind::Gm},
};

/// One field of one instruction: its default (-1 for "required" where noted).
struct Slot {
  F field;
  int64_t init;
  bool required;
};

struct OpInfo {
  const char* name;
  std::vector<Slot> slots;
};

constexpr int64_t kF16 = static_cast<int64_t>(Ty::F16);
constexpr int64_t kF32 = static_cast<int64_t>(Ty::F32);
constexpr int64_t kNone = -1; ///< an optional GM tensor (bias) not given

Slot req(F f) { return {f, 0, true}; }
Slot opt(F f, int64_t init) { return {f, init, false}; }

const std::array<OpInfo, kOps>& table() {
  static const std::array<OpInfo, kOps> t = {{
      {"copy_gm_to_l1", {req(F::Dst), req(F::GmSrc), opt(F::Offset, 0), req(F::Rows), req(F::Cols), opt(F::Stride, 0),
                         opt(F::Nz, 0), opt(F::DstRows, 0), opt(F::Dtype, kF16)}},
      {"copy_gm_to_ub", {req(F::Dst), req(F::GmSrc), opt(F::Offset, 0), req(F::Count), opt(F::Dtype, kF32)}},
      {"load2d", {req(F::Into), req(F::Dst), req(F::Src), req(F::Count), opt(F::SrcStride, 1), opt(F::Transpose, 0),
                  opt(F::Dtype, kF16)}},
      {"load3d", {req(F::Dst), req(F::Src), req(F::C1), req(F::Ih), req(F::Iw), opt(F::Row0, 0), opt(F::Rows, 0),
                  req(F::Kh), req(F::Kw), opt(F::StrideH, 1), opt(F::StrideW, 1), opt(F::PadH, 0), opt(F::PadW, 0),
                  opt(F::DilH, 1), opt(F::DilW, 1), req(F::Oh), req(F::Ow), opt(F::M0, 0), req(F::M), opt(F::K0, 0),
                  req(F::K), opt(F::Dtype, kF16)}},
      {"mmad", {req(F::C), req(F::A), req(F::B), req(F::M), req(F::K), req(F::N), opt(F::Init, 1), opt(F::Macs, 0),
                opt(F::Dtype, kF16)}},
      {"fixpipe", {req(F::GmDst), opt(F::Offset, 0), req(F::Src), req(F::M), req(F::N), opt(F::SrcRows, 0),
                   opt(F::Stride, 0), opt(F::Layout, 0), opt(F::Plane, 0), opt(F::Dtype, kF32), opt(F::Relu, 0),
                   opt(F::Bias, kNone), opt(F::BiasOffset, 0)}},
      {"copy_l0c_to_ub", {req(F::Dst), req(F::Src), req(F::M), req(F::N), opt(F::SrcRows, 0), opt(F::Dtype, kF32)}},
      {"copy_ub_to_gm", {req(F::GmDst), opt(F::Offset, 0), req(F::Src), req(F::Rows), req(F::Cols), opt(F::SrcStride, 0),
                         opt(F::Stride, 0),
                         opt(F::Layout, 0), opt(F::Plane, 0), opt(F::Dtype, kF32)}},
      {"vadd", {req(F::Dst), req(F::Src), req(F::Src1), req(F::Count), opt(F::Rows, 1), opt(F::Bcast, 0),
                opt(F::Dtype, kF32)}},
      {"vmul", {req(F::Dst), req(F::Src), req(F::Src1), req(F::Count), opt(F::Rows, 1), opt(F::Bcast, 0),
                opt(F::Dtype, kF32)}},
      {"vmax", {req(F::Dst), req(F::Src), req(F::Src1), req(F::Count), opt(F::Rows, 1), opt(F::Bcast, 0),
                opt(F::Dtype, kF32)}},
      {"vrelu", {req(F::Dst), req(F::Src), req(F::Count), opt(F::Dtype, kF32)}},
      {"vcast", {req(F::Dst), req(F::Src), req(F::Count), opt(F::Dtype, kF32), opt(F::To, kF16)}},
      {"set_flag", {req(F::SrcPipe), req(F::DstPipe), req(F::Event)}},
      {"wait_flag", {req(F::SrcPipe), req(F::DstPipe), req(F::Event)}},
      {"barrier", {req(F::PipeF)}},
  }};
  return t;
}

const OpInfo& info(Op op) { return table()[static_cast<size_t>(op)]; }

/// Pipe names in the text form; "all" (a barrier over every pipe) is kPipes.
const char* pipeWord(int64_t p) {
  static const char* const names[] = {"mte2", "mte1", "cube", "fixpipe", "mte3", "vector", "all"};
  return p >= 0 && p <= static_cast<int64_t>(kPipes) ? names[p] : "?";
}

const char* layoutWord(int64_t l) {
  static const char* const names[] = {"nd", "nz", "nc1hwc0"};
  return l >= 0 && l < 3 ? names[l] : "?";
}

std::string valueText(Kind kind, int64_t v) {
  switch (kind) {
  case Kind::Int: return std::to_string(v);
  case Kind::Ty: return tyName(static_cast<Ty>(v));
  case Kind::Gm: return v < 0 ? "none" : "%" + std::to_string(v);
  case Kind::Pipe: return pipeWord(v);
  case Kind::Buf: return bufName(static_cast<Buf>(v));
  case Kind::Layout: return layoutWord(v);
  }
  return "?";
}

bool parseInt(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

/// Integers in a program are sizes, strides, addresses and offsets: within ±2^40, so
/// that any two multiply without overflow.
constexpr int64_t kLargest = int64_t{1} << 40;

bool parseValue(Kind kind, std::string_view s, int64_t& out) {
  switch (kind) {
  case Kind::Int: return parseInt(s, out) && out >= -kLargest && out <= kLargest;
  case Kind::Ty: {
    auto t = tyNamed(s);
    if (t) out = static_cast<int64_t>(*t);
    return t.has_value();
  }
  case Kind::Gm:
    if (s == "none") { out = kNone; return true; }
    return s.size() > 1 && s[0] == '%' && parseInt(s.substr(1), out) && out >= 0;
  case Kind::Pipe:
    for (int64_t p = 0; p <= static_cast<int64_t>(kPipes); ++p)
      if (s == pipeWord(p)) { out = p; return true; }
    return false;
  case Kind::Buf:
    for (Buf b : {Buf::L0A, Buf::L0B})
      if (s == bufName(b)) { out = static_cast<int64_t>(b); return true; }
    return false;
  case Kind::Layout:
    for (int64_t l = 0; l < 3; ++l)
      if (s == layoutWord(l)) { out = l; return true; }
    return false;
  }
  return false;
}

const char* expects(Kind kind) {
  switch (kind) {
  case Kind::Int: return "an integer within ±2^40";
  case Kind::Ty: return "a dtype (f16, bf16, f32, f64, i8, i32)";
  case Kind::Gm: return "a GM tensor (%N) or none";
  case Kind::Pipe: return "a pipe (mte2, mte1, cube, fixpipe, mte3, vector, all)";
  case Kind::Buf: return "l0a or l0b";
  case Kind::Layout: return "nd, nz or nc1hwc0";
  }
  return "?";
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

} // namespace

int64_t tySize(Ty t) {
  switch (t) {
  case Ty::F16:
  case Ty::BF16: return 2;
  case Ty::F32:
  case Ty::I32: return 4;
  case Ty::F64: return 8;
  case Ty::I8: return 1;
  }
  return 1;
}

const char* tyName(Ty t) {
  static const char* const names[] = {"f16", "bf16", "f32", "f64", "i8", "i32"};
  const auto i = static_cast<size_t>(t);
  return i < 6 ? names[i] : "?";
}

std::optional<Ty> tyNamed(std::string_view name) {
  for (int i = 0; i < 6; ++i)
    if (name == tyName(static_cast<Ty>(i))) return static_cast<Ty>(i);
  return std::nullopt;
}

const char* bufName(Buf b) {
  static const char* const names[] = {"l1", "l0a", "l0b", "l0c", "ub"};
  const auto i = static_cast<size_t>(b);
  return i < 5 ? names[i] : "?";
}

const char* opName(Op op) { return info(op).name; }

Instr makeInstr(Op op) {
  Instr in{op, {}};
  for (const Slot& s : info(op).slots) in[s.field] = s.init;
  if (op == Op::Load2d) in[F::Into] = static_cast<int64_t>(Buf::L0A);
  return in;
}

bool hasField(Op op, F k) {
  for (const Slot& s : info(op).slots)
    if (s.field == k) return true;
  return false;
}

Pipe pipeOf(const Instr& in) {
  switch (in.op) {
  case Op::CopyGmToL1:
  case Op::CopyGmToUb: return Pipe::Mte2;
  case Op::Load2d:
  case Op::Load3d: return Pipe::Mte1;
  case Op::Mmad: return Pipe::Cube;
  case Op::Fixpipe: return Pipe::Fixpipe;
  case Op::CopyUbToGm: return Pipe::Mte3;
  case Op::CopyL0cToUb:
  case Op::VAdd:
  case Op::VMul:
  case Op::VMax:
  case Op::VRelu:
  case Op::VCast: return Pipe::Vector;
  case Op::SetFlag: return static_cast<Pipe>(in[F::SrcPipe]);
  case Op::WaitFlag: return static_cast<Pipe>(in[F::DstPipe]);
  case Op::Barrier: return in[F::PipeF] >= static_cast<int64_t>(kPipes) ? Pipe::Cube : static_cast<Pipe>(in[F::PipeF]);
  }
  return Pipe::Cube;
}

std::string printInstr(const Instr& in) {
  std::string out = opName(in.op);
  for (const Slot& s : info(in.op).slots) {
    const int64_t v = in[s.field];
    if (!s.required && v == s.init) continue; // defaults are left out
    const FieldInfo& fi = kFieldInfo[static_cast<size_t>(s.field)];
    out += cat(" ", fi.name, "=", valueText(fi.kind, v));
  }
  return out;
}

std::string printProgram(const Program& p) {
  std::ostringstream out;
  for (const std::string& note : p.notes) out << "; " << note << "\n";
  out << ".device " << p.device << "\n";
  static const char* const roles[] = {"in", "out", "temp"};
  for (size_t i = 0; i < p.gm.size(); ++i) {
    const GmTensor& g = p.gm[i];
    out << ".gm %" << i << " " << (g.name.empty() ? "_" : g.name) << " " << tyName(g.ty) << " " << g.elements << " "
        << roles[static_cast<size_t>(g.role)] << "\n";
  }
  for (const Instr& in : p.code) out << printInstr(in) << "\n";
  return out.str();
}

Program parseProgram(std::string_view text, std::string_view file) {
  Program p;
  p.file = std::string(file);
  uint32_t line = 0;
  size_t pos = 0;
  auto error = [&](size_t column, const auto&... parts) -> void {
    const auto col = static_cast<uint32_t>(column + 1);
    throw Error(ErrorKind::Syntax, cat(parts...), Span{internFileName(file), line, col, line, col});
  };
  while (pos <= text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view full = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    const std::string_view content = full.substr(0, full.find(';'));
    const std::vector<std::string_view> w = words(content);
    auto column = [&](std::string_view word) { return static_cast<size_t>(word.data() - full.data()); };
    if (w.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (w[0] == ".device") {
      if (w.size() != 2) error(column(w[0]), "tc: .device takes one name");
      p.device = std::string(w[1]);
    } else if (w[0] == ".gm") {
      if (w.size() != 6) error(column(w[0]), "tc: .gm takes %N NAME DTYPE ELEMENTS ROLE");
      int64_t id = 0, elements = 0;
      if (w[1].size() < 2 || w[1][0] != '%' || !parseInt(w[1].substr(1), id) || id != static_cast<int64_t>(p.gm.size()))
        error(column(w[1]), "tc: GM tensors are numbered in order: expected %", p.gm.size(), ", got ", w[1]);
      GmTensor g;
      g.name = w[2] == "_" ? "" : std::string(w[2]);
      auto ty = tyNamed(w[3]);
      if (!ty) error(column(w[3]), "tc: unknown dtype '", w[3], "'");
      g.ty = *ty;
      if (!parseInt(w[4], elements) || elements < 0 || elements > (int64_t{1} << 40))
        error(column(w[4]), "tc: bad element count '", w[4], "'");
      g.elements = elements;
      const auto col = static_cast<uint32_t>(column(w[4]) + 1);
      p.gmSpans.push_back(Span{internFileName(file), line, col, line, col + static_cast<uint32_t>(w[4].size()) - 1});
      if (w[5] == "in") g.role = GmTensor::Role::In;
      else if (w[5] == "out") g.role = GmTensor::Role::Out;
      else if (w[5] == "temp") g.role = GmTensor::Role::Temp;
      else error(column(w[5]), "tc: a GM tensor's role is in, out or temp, not '", w[5], "'");
      p.gm.push_back(std::move(g));
    } else {
      std::optional<Op> op;
      for (size_t i = 0; i < kOps; ++i)
        if (w[0] == table()[i].name) op = static_cast<Op>(i);
      if (!op) error(column(w[0]), "tc: unknown instruction '", w[0], "'");
      Instr in = makeInstr(*op);
      std::array<bool, kFields> seen{};
      for (size_t i = 1; i < w.size(); ++i) {
        const size_t eq = w[i].find('=');
        if (eq == std::string_view::npos) error(column(w[i]), "tc: expected key=value, got '", w[i], "'");
        const std::string_view key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
        const Slot* slot = nullptr;
        for (const Slot& s : info(*op).slots)
          if (key == kFieldInfo[static_cast<size_t>(s.field)].name) slot = &s;
        if (!slot) error(column(w[i]), "tc: ", w[0], " has no field '", key, "'");
        const auto k = static_cast<size_t>(slot->field);
        if (seen[k]) error(column(w[i]), "tc: ", w[0], " gives '", key, "' twice");
        seen[k] = true;
        const FieldInfo& fi = kFieldInfo[k];
        if (!parseValue(fi.kind, value, in.f[k]))
          error(column(w[i]) + eq + 1, "tc: ", w[0], " ", key, " takes ", expects(fi.kind), ", got '", value, "'");
      }
      for (const Slot& s : info(*op).slots)
        if (s.required && !seen[static_cast<size_t>(s.field)])
          error(column(w[0]), "tc: ", w[0], " needs ", kFieldInfo[static_cast<size_t>(s.field)].name, "=");
      p.code.push_back(in);
      p.lines.push_back(line);
    }
    if (end == text.size()) break;
  }
  return p;
}

} // namespace tsl::compiler::tc
