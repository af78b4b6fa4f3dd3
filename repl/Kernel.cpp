// repl/Kernel.cpp — `tsl kernel`: runs the Jupyter kernel (tsl-kernel, installed beside
// tsl) or installs its kernelspec, as `jupyter kernelspec install` would
// (docs/notebook.md).
#include "repl/Options.h"

#include "tsl/tsl.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace tsl::cli {

namespace {

namespace fs = std::filesystem;

fs::path kernelExecutable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& candidate : {self.parent_path() / "tsl-kernel", self.parent_path().parent_path() / "kernel" / "tsl-kernel"})
    if (fs::exists(candidate, ec)) return candidate;
  return {};
}

int install(const std::vector<std::string>& args, const fs::path& kernel) {
  fs::path base = "/usr/local/share/jupyter"; // Jupyter's system-wide folder
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--user") {
      const char* data = std::getenv("XDG_DATA_HOME");
      const char* home = std::getenv("HOME");
      if (data && *data) base = fs::path(data) / "jupyter";
      else if (home) base = fs::path(home) / ".local/share/jupyter";
      else {
        std::cerr << "tsl kernel install --user: HOME is not set\n";
        return 2;
      }
    } else if (args[i] == "--prefix" && i + 1 < args.size()) {
      base = fs::path(args[++i]) / "share/jupyter";
    } else {
      std::cerr << "usage: tsl kernel install [--user | --prefix DIR]\n";
      return 2;
    }
  }
  const fs::path dir = base / "kernels" / "tsl";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "tsl kernel install: cannot create " << dir.string() << ": " << ec.message() << "\n";
    return 1;
  }
  std::string escaped;
  for (char c : fs::absolute(kernel).string()) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  writeFileAtomically((dir / "kernel.json").string(),
                      "{\n  \"argv\": [\"" + escaped +
                          "\", \"-f\", \"{connection_file}\"],\n  \"display_name\": \"TSL\",\n  \"language\": \"tsl\",\n"
                          "  \"interrupt_mode\": \"signal\",\n  \"metadata\": {\"debugger\": false}\n}\n");
  std::cout << "installed the TSL kernel in " << dir.string() << "\n";
  return 0;
}

} // namespace

int kernelCommand(const std::vector<std::string>& args) {
  const fs::path kernel = kernelExecutable();
  if (kernel.empty()) {
    std::cerr << "tsl kernel: this build has no Jupyter kernel (tsl-kernel needs Debian's xeus-dev; rebuild "
                 "with it installed)\n";
    return 1;
  }
  if (!args.empty() && args[0] == "install") return install({args.begin() + 1, args.end()}, kernel);
  std::vector<std::string> words = {kernel.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  std::cerr << "tsl kernel: cannot run " << kernel.string() << "\n";
  return 1;
}

} // namespace tsl::cli
