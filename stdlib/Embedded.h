// stdlib/Embedded.h — the standard library's TSL sources, compiled into the binary.
//
// Every stdlib/*.tsl file becomes one entry, named by its path without the extension
// ("stdlib/core"), so `(import "stdlib/nn")` never touches the file system.
#pragma once

#include <string_view>
#include <vector>

namespace tsl::stdlib {

struct EmbeddedFile {
  std::string_view name; ///< "stdlib/core"
  std::string_view text;
};

/// All embedded files, in a fixed order.
const std::vector<EmbeddedFile>& embeddedFiles();

} // namespace tsl::stdlib
