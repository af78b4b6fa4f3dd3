// compiler/tc/Device.cpp — presets, description files and validation of the device.
#include "compiler/tc/Device.h"

#include "runtime/Io.h"
#include "tsl/Error.h"

#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

namespace tsl::compiler::tc {

namespace {

constexpr int64_t kKiB = 1024;
/// One fractal: 16×16 two-byte elements (or 16×32 one-byte ones).
constexpr int64_t kFractalBytes = 512;

Device a2() {
  Device d;
  d.name = "a2";
  d.l1 = {512 * kKiB, 32};
  d.l0a = {64 * kKiB, 512};
  d.l0b = {64 * kKiB, 512};
  d.l0c = {128 * kKiB, 64};
  d.ub = {192 * kKiB, 32};
  return d;
}

Device ascend910a() {
  Device d = a2();
  d.name = "910a";
  d.l1.bytes = 1024 * kKiB;
  d.l0c.bytes = 256 * kKiB;
  d.ub.bytes = 256 * kKiB;
  d.fixpipe = false;
  d.overflow = Overflow::Saturate;
  d.nan = NanMode::Zero;
  d.events = 4;
  return d;
}

/// One key of the description format: how to read it into a device and print it back.
struct Key {
  const char* name;
  std::function<bool(Device&, std::string_view)> read; ///< false: a malformed value
  std::function<std::string(const Device&)> write;
  const char* expects;                                 ///< for messages
};

bool readInt(std::string_view text, int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Key integer(const char* name, int64_t Device::*field) {
  return {name, [field](Device& d, std::string_view v) { return readInt(v, d.*field); },
          [field](const Device& d) { return std::to_string(d.*field); }, "an integer"};
}

/// An int field, reached through `field` (an int64 outside int's range is malformed).
Key int32(const char* name, int& (*field)(Device&)) {
  return {name,
          [field](Device& d, std::string_view v) {
            int64_t n = 0;
            if (!readInt(v, n) || n < INT32_MIN || n > INT32_MAX) return false;
            field(d) = static_cast<int>(n);
            return true;
          },
          [field](const Device& d) {
            Device copy = d; // the accessor reaches into a mutable device
            return std::to_string(field(copy));
          },
          "an integer"};
}

Key buffer(const char* name, Buffer Device::*buf, int64_t Buffer::*field) {
  return {name, [buf, field](Device& d, std::string_view v) { return readInt(v, (d.*buf).*field); },
          [buf, field](const Device& d) { return std::to_string((d.*buf).*field); }, "an integer"};
}

template <typename E>
Key choice(const char* name, E Device::*field, std::vector<std::pair<const char*, E>> options, const char* expects) {
  return {name,
          [field, options](Device& d, std::string_view v) {
            for (const auto& [text, value] : options)
              if (v == text) {
                d.*field = value;
                return true;
              }
            return false;
          },
          [field, options](const Device& d) {
            for (const auto& [text, value] : options)
              if (d.*field == value) return std::string(text);
            return std::string("?");
          },
          expects};
}

const std::vector<Key>& keys() {
  static const std::vector<Key> all = [] {
    std::vector<Key> k;
    for (auto [bytes, align, buf] : {std::tuple{"l1.bytes", "l1.align", &Device::l1},
                                     std::tuple{"l0a.bytes", "l0a.align", &Device::l0a},
                                     std::tuple{"l0b.bytes", "l0b.align", &Device::l0b},
                                     std::tuple{"l0c.bytes", "l0c.align", &Device::l0c},
                                     std::tuple{"ub.bytes", "ub.align", &Device::ub}}) {
      k.push_back(buffer(bytes, buf, &Buffer::bytes));
      k.push_back(buffer(align, buf, &Buffer::align));
    }
    k.push_back(integer("bandwidth.gm_l1", &Device::gmToL1));
    k.push_back(integer("bandwidth.gm_ub", &Device::gmToUb));
    k.push_back(integer("bandwidth.l1_l0a", &Device::l1ToL0a));
    k.push_back(integer("bandwidth.l1_l0b", &Device::l1ToL0b));
    k.push_back(integer("bandwidth.l0c_gm", &Device::l0cToGm));
    k.push_back(integer("bandwidth.l0c_ub", &Device::l0cToUb));
    k.push_back(integer("bandwidth.ub_gm", &Device::ubToGm));
    k.push_back(integer("vector.bytes_per_cycle", &Device::vectorBytes));
    k.push_back(integer("mmad.cycles_per_fractal", &Device::mmadCyclesPerFractal));
    k.push_back(integer("latency", &Device::latency));
    k.push_back(integer("queue_depth", &Device::queueDepth));
    k.push_back(int32("events", [](Device& d) -> int& { return d.events; }));
    k.push_back(choice("fixpipe", &Device::fixpipe, {{"true", true}, {"false", false}}, "true or false"));
    k.push_back(choice("float_overflow", &Device::overflow, {{"inf", Overflow::Infinity}, {"saturate", Overflow::Saturate}},
                       "inf or saturate"));
    k.push_back(choice("nan", &Device::nan, {{"keep", NanMode::Keep}, {"zero", NanMode::Zero}}, "keep or zero"));
    k.push_back(choice("accumulation", &Device::accumulation,
                       {{"ieee_seq", Accumulation::IeeeSeq}, {"block_fma", Accumulation::BlockFma}},
                       "ieee_seq or block_fma"));
    k.push_back(int32("block_fma.nb", [](Device& d) -> int& { return d.blockFma.nb; }));
    k.push_back(int32("block_fma.extra_bits", [](Device& d) -> int& { return d.blockFma.extraBits; }));
    k.push_back({"block_fma.round_toward_zero",
                 [](Device& d, std::string_view v) {
                   if (v != "true" && v != "false") return false;
                   d.blockFma.towardZero = v == "true";
                   return true;
                 },
                 [](const Device& d) { return std::string(d.blockFma.towardZero ? "true" : "false"); }, "true or false"});
    return k;
  }();
  return all;
}

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

} // namespace

const std::vector<std::string>& presetNames() {
  static const std::vector<std::string> names = {"a2", "910a"};
  return names;
}

Device preset(std::string_view name) {
  if (name == "a2") return a2();
  if (name == "910a") return ascend910a();
  std::string known;
  for (const std::string& n : presetNames()) known += (known.empty() ? "" : ", ") + n;
  fail(ErrorKind::Value, "unknown tensor-core device preset '", name, "' (presets: ", known, ")");
}

namespace {

/// What is wrong with a device: the message, and the keys whose values it concerns (the
/// last one a description set is where its error points).
struct Problem {
  std::string message;
  std::vector<std::string> keys;
};

/// The first value of `d` outside its range (Device.h's limits), or nothing.
std::optional<Problem> firstProblem(const Device& d) {
  auto problem = [](std::vector<std::string> keys, auto&&... parts) {
    return Problem{cat(parts...), std::move(keys)};
  };
  const std::pair<const char*, const Buffer*> buffers[] = {{"l1", &d.l1}, {"l0a", &d.l0a}, {"l0b", &d.l0b},
                                                           {"l0c", &d.l0c}, {"ub", &d.ub}};
  for (const auto& [name, b] : buffers) {
    const std::string bytes = cat(name, ".bytes"), align = cat(name, ".align");
    if (b->align <= 0 || (b->align & (b->align - 1)) != 0)
      return problem({align}, align, " must be a power of two, got ", b->align);
    // L0C holds fp32 fractals (1 KiB); the others at least one 512-byte fractal.
    const int64_t least = std::string_view(name) == "l0c" ? 2 * kFractalBytes : kFractalBytes;
    if (b->bytes < least) return problem({bytes}, bytes, " must hold a fractal (", least, " bytes), got ", b->bytes);
    if (b->bytes > kMaxBufferBytes)
      return problem({bytes}, bytes, " must be at most ", kMaxBufferBytes, " (16 MiB), got ", b->bytes);
    if (b->bytes % b->align != 0)
      return problem({bytes, align}, bytes, " (", b->bytes, ") must be a multiple of ", align, " (", b->align, ")");
  }
  struct Range {
    const char* key;
    int64_t value, least, most;
  };
  const Range ranges[] = {
      {"bandwidth.gm_l1", d.gmToL1, 1, kMaxBandwidth},
      {"bandwidth.gm_ub", d.gmToUb, 1, kMaxBandwidth},
      {"bandwidth.l1_l0a", d.l1ToL0a, 1, kMaxBandwidth},
      {"bandwidth.l1_l0b", d.l1ToL0b, 1, kMaxBandwidth},
      {"bandwidth.l0c_gm", d.l0cToGm, 1, kMaxBandwidth},
      {"bandwidth.l0c_ub", d.l0cToUb, 1, kMaxBandwidth},
      {"bandwidth.ub_gm", d.ubToGm, 1, kMaxBandwidth},
      {"vector.bytes_per_cycle", d.vectorBytes, 1, kMaxBandwidth},
      {"mmad.cycles_per_fractal", d.mmadCyclesPerFractal, 1, kMaxCyclesPerFractal},
      {"latency", d.latency, 0, kMaxLatency},
      {"queue_depth", d.queueDepth, 1, kMaxQueueDepth},
      {"events", d.events, 1, 64},
      {"block_fma.nb", d.blockFma.nb, 1, 64},
      {"block_fma.extra_bits", d.blockFma.extraBits, 0, 29},
  };
  for (const Range& r : ranges)
    if (r.value < r.least || r.value > r.most)
      return problem({r.key}, r.key, " must be ", r.least, " to ", r.most, ", got ", r.value);
  return std::nullopt;
}

/// Where a description sets each key: the span of its value (a `preset` line sets all).
using Places = std::map<std::string, Span, std::less<>>;

Span placeOf(const Places& places, const std::vector<std::string>& keys, const Span& fallback) {
  Span at = fallback;
  bool found = false;
  for (const std::string& key : keys)
    if (auto it = places.find(key); it != places.end() && (!found || it->second.line > at.line)) {
      at = it->second;
      found = true;
    }
  return at;
}

} // namespace

void validate(const Device& d, std::string_view where) {
  if (const auto p = firstProblem(d)) fail(ErrorKind::Value, where, ": ", p->message);
}

Device parseDevice(std::string_view text, std::string_view file) {
  Device d = a2();
  d.name = std::string(file);
  const std::string* fileName = internFileName(file);
  Places places;
  uint32_t line = 0;
  bool sawSetting = false;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string_view raw = text.substr(at, end - at);
    const size_t lineStart = at;
    at = end + 1;
    ++line;
    // The span of `part` (a piece of this line): columns count code points from 1.
    auto spanOf = [&](std::string_view part) {
      auto column = [&](size_t offset) {
        uint32_t col = 1;
        for (size_t i = lineStart; i < offset; ++i)
          if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++col;
        return col;
      };
      const size_t from = static_cast<size_t>(part.data() - text.data());
      const uint32_t first = column(from);
      return Span{fileName, line, first, line, part.empty() ? first : column(from + part.size()) - 1};
    };
    if (const size_t hash = raw.find('#'); hash != std::string_view::npos) raw = raw.substr(0, hash);
    const std::string_view content = trim(raw);
    if (content.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const size_t eq = content.find('=');
    if (eq == std::string_view::npos) failAt(spanOf(content), ErrorKind::Io, "expected 'key = value', got '", content, "'");
    const std::string_view key = trim(content.substr(0, eq)), value = trim(content.substr(eq + 1));
    const Span valueSpan = spanOf(value.empty() ? content.substr(eq, 1) : value);
    if (key == "preset") {
      if (sawSetting) failAt(spanOf(key), ErrorKind::Io, "'preset' must come before the settings it is the base of");
      try {
        d = preset(value);
      } catch (const Error& e) {
        failAt(valueSpan, ErrorKind::Io, e.message());
      }
      d.name = std::string(file);
      for (const Key& k : keys()) places[k.name] = valueSpan;
      continue;
    }
    const Key* found = nullptr;
    for (const Key& k : keys())
      if (key == k.name) found = &k;
    if (!found) {
      std::string known = "preset";
      for (const Key& k : keys()) known += std::string(", ") + k.name;
      failAt(spanOf(key.empty() ? content : key), ErrorKind::Io, "unknown key '", key, "' (keys: ", known, ")");
    }
    if (!found->read(d, value))
      failAt(valueSpan, ErrorKind::Io, "'", key, "' expects ", found->expects, ", got '", value, "'");
    places[found->name] = valueSpan;
    sawSetting = true;
    if (end == text.size()) break;
  }
  if (const auto p = firstProblem(d)) failAt(placeOf(places, p->keys, Span{fileName, 1, 1, 1, 1}), ErrorKind::Io, p->message);
  return d;
}

Device loadDevice(const std::string& path) {
  // Opened the way source files are: a device, FIFO or socket is refused at once.
  return parseDevice(readTextFile(path, kMaxDeviceFileBytes), path);
}

std::string describe(const Device& d) {
  std::string out = "# tensor-core device '" + d.name + "' (docs/tensor-core.md, \"Device files\")\n";
  for (const Key& k : keys()) out += std::string(k.name) + " = " + k.write(d) + "\n";
  return out;
}

} // namespace tsl::compiler::tc
