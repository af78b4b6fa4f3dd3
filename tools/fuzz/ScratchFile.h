// tools/fuzz/ScratchFile.h — the loaders' fuzz targets read files: each input is written
// to a file of this process's own in a scratch folder (the tmpfs /dev/shm when there is
// one), under the name the loader is given; the folder goes when the process exits.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tsl::fuzz {

inline std::filesystem::path& scratchFolder() {
  static std::filesystem::path folder = [] {
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    const std::filesystem::path dir = base / ("tsl-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::atexit([] { std::filesystem::remove_all(scratchFolder()); });
    return dir;
  }();
  return folder;
}

inline std::string scratchPath(const std::string& name) { return (scratchFolder() / name).string(); }

inline void writeScratch(const std::string& path, const void* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

} // namespace tsl::fuzz
