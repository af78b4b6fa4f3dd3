// runtime/Io.h — tensors to and from files: NumPy's .npy, CSV (gzip by suffix), text.
//
// Every write goes to a temporary file in the target's folder and is renamed over the
// target only once complete, so a failed or interrupted write never leaves a broken file
// (nor a stray temporary). Every read checks what it reads: a missing, unreadable,
// truncated or corrupt file is an io error naming the file and what was wrong.
#pragma once

#include "runtime/Tensor.h"

#include <string>
#include <string_view>

namespace tsl {

/// Reads a .npy file (format versions 1.0, 2.0 and 3.0; C or Fortran order; little- or
/// big-endian; 0-d arrays) of a dtype TSL has: bool, int32, int64, float16, float32,
/// float64. The result is a contiguous row-major tensor.
Tensor loadNpy(const std::string& path);

/// Writes `x` as a C-order .npy (version 1.0, or 2.0 if the header needs it). bf16 has
/// no NumPy dtype and is written widened to float32 (exactly).
void saveNpy(const std::string& path, const Tensor& x);

struct CsvOptions {
  DType dtype = DType::F32;
  bool skipHeader = false;
};

/// Reads a CSV file of numbers into a rank-2 tensor [rows, columns] (rank 2 even for one
/// column). A path ending in ".gz" is decompressed (zlib). Fields are separated by commas,
/// optionally surrounded by spaces; empty lines are skipped; every row must have the same
/// number of fields and every field must be a number (an io error naming the line and
/// column otherwise).
Tensor loadCsv(const std::string& path, const CsvOptions& options);

/// The whole contents of a file (an io error if it cannot be read).
std::string readTextFile(const std::string& path);

/// Writes `contents` to `path` atomically (temporary file, then rename).
void writeFileAtomically(const std::string& path, std::string_view contents);

} // namespace tsl
