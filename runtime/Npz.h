// runtime/Npz.h — named tensors to and from NumPy's .npz archives.
//
// An .npz file is a zip archive whose members are .npy files, "name.npy" for the array
// called "name" (numpy.savez, numpy.load). The zip side is libzip's (Debian's libzip-dev):
// a maintained library that reads every zip NumPy writes (stored or deflated, zip64) and
// checks sizes and CRCs itself, so no zip format is written or parsed here. Members are
// .npy images from runtime/Io.h in both directions.
#pragma once

#include "runtime/Tensor.h"

#include <span>
#include <string>
#include <vector>

namespace tsl {

struct NpzEntry {
  std::string name; ///< the array's name, without the member's ".npy"
  Tensor tensor;
};

/// Every array of an .npz archive, in the archive's order. Members may be stored or
/// deflated (numpy.savez, numpy.savez_compressed), in zip or zip64 form. Anything else is
/// an io error naming the file (and the member): not a regular file, not a zip archive,
/// a truncated or corrupt archive, an encrypted member, another compression method, a
/// member whose name does not end in ".npy" or whose content is not a .npy image TSL
/// reads (runtime/Io.h, loadNpy), a CRC mismatch, two members of one name, or a member
/// declaring more bytes than its compressed data could hold (deflate expands at most
/// 1032-fold, stored data not at all) — checked before anything is allocated.
std::vector<NpzEntry> loadNpz(const std::string& path);

/// Writes the entries as an .npz archive of stored (uncompressed) "name.npy" members, as
/// numpy.savez does, in the given order. The archive is built in memory and written
/// atomically (writeFileAtomically). Names must be non-empty and distinct (a value error
/// otherwise).
void saveNpz(const std::string& path, std::span<const NpzEntry> entries);

} // namespace tsl
