// repl/Pictures.cpp — pictures written as SVG files, and opened if asked (repl/Pictures.h).
#include "repl/Pictures.h"

#include <cstdio>
#include <fcntl.h>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace tsl::cli {

namespace {

/// Whether `program` is an executable file in a folder of PATH.
bool onPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= folders.size()) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::string folder = end > start ? folders.substr(start, end - start) : ".";
    if (access((folder + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

} // namespace

bool Pictures::write(const MimeBundle& bundle) {
  const std::string* svg = bundle.find("image/svg+xml");
  if (!svg) return false;
  char name[32];
  std::snprintf(name, sizeof name, "picture-%03d.svg", ++count_);
  const std::string path = (std::filesystem::path(dir_) / name).string();
  std::cout << std::flush; // the program's output so far comes before the message
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot make the folder '" + dir_ + "': " + ec.message());
    writeFileAtomically(path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + *svg);
  } catch (const Error& e) {
    std::cerr << "tsl: --pictures: " << e.message() << "\n" << std::flush;
    return false;
  }
  std::cerr << "tsl: wrote " << path << "\n" << std::flush;
  if (open_) openFile(path);
  return true;
}

void Pictures::show(const MimeBundle& bundle, const std::string&, bool) { write(bundle); }

void Pictures::openFile(const std::string& path) {
  if (saidNoOpener_) return;
  if (!onPath("xdg-open")) {
    std::cerr << "tsl: --open: xdg-open is not installed (Debian's xdg-utils); pictures are only written\n";
    saidNoOpener_ = true;
    return;
  }
  // xdg-open runs detached from the terminal's input and output; a thread reaps it so
  // that a program that opens many pictures leaves no zombies and never waits.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const std::string program = "xdg-open";
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(path.c_str()), nullptr};
  const int failed = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) {
    std::cerr << "tsl: --open: cannot start xdg-open; pictures are only written\n";
    saidNoOpener_ = true;
    return;
  }
  std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();
}

void writePicture(Engine& engine, Pictures& pictures, const Value& value) {
  // Only maps (plots, traces) and strings (SVG, DOT) have pictures; a tensor's table is
  // not worth making.
  if (!value.isMap() && !value.isString()) return;
  pictures.write(engine.represent(value));
}

} // namespace tsl::cli
