// tools/fuzz/FuzzCsv.cpp — libFuzzer target on the CSV loader and its gzip path.
//
// The first byte picks the dtype and whether to skip a header line; the rest is the file.
// It must load as a rank-2 tensor or be refused with an io error naming the file. The
// same text gzip-compressed, in a file named .gz, must give the same tensor (bit for bit)
// or the same message. A crash, a sanitizer report, another error kind or a difference
// is a bug.
#include "ScratchFile.h"
#include "runtime/Io.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <zlib.h>

namespace {

struct Outcome {
  std::optional<tsl::Tensor> tensor;
  std::string message; ///< the error's message with the file's name taken out
};

Outcome load(const std::string& path, const tsl::CsvOptions& options) {
  try {
    tsl::Tensor x = tsl::loadCsv(path, options);
    if (x.rank() != 2) std::abort();
    return {x, {}};
  } catch (const tsl::Error& e) {
    if (e.kind() != tsl::ErrorKind::Io) std::abort();
    std::string message = e.message();
    const size_t at = message.find(path);
    if (at == std::string::npos) std::abort();
    message.erase(at, path.size());
    return {std::nullopt, message};
  }
}

std::string gzip(const uint8_t* data, size_t size) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, size) + 64, '\0');
  z.next_in = const_cast<uint8_t*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const tsl::DType dtypes[] = {tsl::DType::F32, tsl::DType::F64, tsl::DType::I64, tsl::DType::I32,
                                      tsl::DType::Bool, tsl::DType::F16, tsl::DType::BF16};
  tsl::CsvOptions options;
  options.dtype = dtypes[(data[0] & 0x7F) % std::size(dtypes)];
  options.skipHeader = data[0] & 0x80;
  ++data, --size;
  static const std::string plain = tsl::fuzz::scratchPath("input.csv"), packed = tsl::fuzz::scratchPath("input.csv.gz");
  tsl::fuzz::writeScratch(plain, data, size);
  const Outcome a = load(plain, options);
  const std::string compressed = gzip(data, size);
  tsl::fuzz::writeScratch(packed, compressed.data(), compressed.size());
  const Outcome b = load(packed, options);
  if (a.tensor.has_value() != b.tensor.has_value() || a.message != b.message) std::abort();
  if (a.tensor) {
    const tsl::Tensor& x = *a.tensor;
    const tsl::Tensor& y = *b.tensor;
    if (x.dtype() != y.dtype() || !(x.shape() == y.shape())) std::abort();
    const size_t bytes = static_cast<size_t>(x.numel()) * x.elementSize();
    if (bytes && std::memcmp(x.data(), y.data(), bytes) != 0) std::abort();
  }
  return 0;
}
