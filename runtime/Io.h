// runtime/Io.h — tensors to and from files: NumPy's .npy, CSV (gzip by suffix), text.
//
// Every write goes to a temporary file in the target's folder and is renamed over the
// target only once complete, so a failed or interrupted write never leaves a broken file
// (nor a stray temporary). Every read checks what it reads: a missing, unreadable,
// truncated or corrupt file is an io error naming the file and what was wrong.
#pragma once

#include "runtime/Tensor.h"

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace tsl {

/// Reads a .npy file (format versions 1.0, 2.0 and 3.0; C or Fortran order; little- or
/// big-endian; 0-d arrays) of a dtype TSL has: bool, int32, int64, float16, float32,
/// float64. The result is a contiguous row-major tensor in this machine's byte order.
/// The header must be the dict NumPy writes (keys 'descr', 'fortran_order', 'shape', in
/// any order, each once); any other dtype (unsigned, int8/16, complex, structured,
/// object) is refused. The data must be exactly as long as the shape says: a shorter file
/// is "truncated", extra bytes after the array are "corrupt" (NumPy itself ignores them).
/// Both are found from the file size before anything is allocated, and a shape TSL cannot
/// hold (rank > 8, more than 2^40 elements) is an io error, not a value error. Bool bytes
/// other than 0 are read as true (1), as NumPy treats them.
Tensor loadNpy(const std::string& path);

/// Writes `x` as a C-order .npy (version 1.0, or 2.0 if the header needs it), with
/// NumPy's header layout (a dict padded so the data starts 64-byte aligned) and the
/// elements in this machine's byte order. A view is written as its logical elements.
/// bf16 has no NumPy dtype and is written widened to float32 (exactly: every bf16 value
/// is a float32), so it loads back as f32. A weak literal is written as its concrete
/// dtype (a weak float as float32, a weak integer as int64).
void saveNpy(const std::string& path, const Tensor& x);

/// .npy content of `size` bytes, read in order through `read(out, n)` (which returns the
/// bytes it got, fewer only where the content ends), checked as loadNpy checks a file;
/// `name` names it in messages. loadNpy and .npz members (runtime/Npz.h) share it.
Tensor decodeNpy(const std::string& name, size_t size, const std::function<size_t(char*, size_t)>& read);

/// What saveNpy writes, in two pieces: the preamble and header, then the elements of
/// `data` (contiguous, of the dtype stored).
struct NpyImage {
  std::string header;
  Tensor data;
  std::string_view bytes() const { return {data.data(), static_cast<size_t>(data.numel()) * data.elementSize()}; }
  size_t size() const { return header.size() + bytes().size(); }
};
NpyImage npyImage(const Tensor& x);

struct CsvOptions {
  DType dtype = DType::F32;
  bool skipHeader = false; ///< ignore the file's first line, whatever it holds
};

/// Reads a CSV file of numbers into a rank-2 tensor [rows, columns] (rank 2 even for one
/// column). A path ending in ".gz" is decompressed (zlib), and must then be gzip: a plain
/// file so named, a truncated or a corrupt stream are io errors. Fields are separated by
/// commas, optionally surrounded by spaces; empty lines are skipped; every row must have
/// the same number of fields and every field must be a number (an io error naming the
/// line and column otherwise).
///
/// Accepted syntax, exactly: lines end in "\n" or "\r\n"; a line of only spaces and tabs
/// is empty; a field is an optional '+' or '-', then a decimal number with optional
/// fraction and exponent ("1", "-2.5", "6e-3", ".5"), or inf, infinity or nan (any case),
/// with spaces or tabs around it. There is no quoting, no comment syntax and no empty
/// field (",," is an error). Numbers are read with std::from_chars, so the locale never
/// matters. Values become `options.dtype` by the runtime's conversion rules (astype):
/// for integer and bool dtypes an integer field is read exactly as an i64 and then
/// converted (i32 wraps), any other number is read as a double and converted (truncated
/// toward zero, saturated, NaN gives 0); f32 and f64 are rounded once from the decimal
/// text, f16 and bf16 from the nearest double; magnitudes beyond double's range give
/// ±inf or ±0. A file without rows gives [0, 0]. Errors read "path:line:column: what",
/// both counted from 1 in the file as it is (header and empty lines count as lines).
Tensor loadCsv(const std::string& path, const CsvOptions& options);

/// The whole contents of a regular file, byte for byte and never decompressed. An io
/// error if it cannot be read, is not a regular file (a device, FIFO or socket: reading
/// one may never end) or holds more than `maxBytes` bytes.
std::string readTextFile(const std::string& path, size_t maxBytes);

/// The whole of an open stream (standard input), at most `maxBytes` bytes; `name` is
/// used in messages.
std::string readTextStream(std::FILE* stream, const std::string& name, size_t maxBytes);

/// Writes `contents` to `path`. A regular file, or a path that does not exist yet, is
/// written atomically: a temporary file ".<name>.tmp-<pid>-<n>" is created in the
/// target's folder, written, synced to disk and renamed over the target. A symbolic link
/// is followed (the file it points to is replaced, the link stays); an existing file keeps
/// its permissions, a new one gets those any new file gets under the umask. A character
/// device or FIFO (/dev/null, /dev/stdout, a pipe) is written directly; a directory,
/// socket or block device is refused. On failure (a missing or read-only folder, a full
/// disk or device, an interrupt) the temporary is removed and the error is an io error
/// naming `path`; an existing file keeps its old contents. A process stopped by a signal
/// leaves a temporary behind only if nothing called removePendingTemporaries() (the `tsl`
/// command does on SIGINT, SIGTERM and SIGHUP) — after SIGKILL, say — and the next write
/// to the same target removes it once its process has ended.
void writeFileAtomically(const std::string& path, std::string_view contents);

/// Deletes the temporary files of writes in progress in this process. Async-signal-safe:
/// for a signal handler that is about to end the process.
void removePendingTemporaries() noexcept;

} // namespace tsl
