// kernel/main.cpp — `tsl-kernel -f CONNECTION_FILE`: TSL as a Jupyter kernel.
//
// Interrupts. Jupyter interrupts a kernel by sending SIGINT to its process group
// (kernel.json's interrupt_mode "signal"). xeus 2.4 installs no handler and its ZeroMQ
// poll throws on EINTR, so a plain handler would kill an idle kernel. SIGINT is therefore
// blocked here, before any thread starts (every xeus and ZeroMQ thread, and every child
// process, inherits the mask), and one thread takes it with sigwait and asks the engine to
// stop: the running cell ends with `runtime error: interrupted`, an idle kernel carries on.
#include "kernel/Interpreter.h"

#include <xeus/xhelper.hpp>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_zmq.hpp>

#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <pthread.h>
#include <thread>

namespace {

std::atomic<tsl::Engine*> runningEngine{nullptr};

void takeInterrupts(sigset_t set) {
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (tsl::Engine* engine = runningEngine.load()) engine->interrupt();
  }
}

const char* usage = "usage: tsl-kernel -f CONNECTION_FILE\n"
                    "A Jupyter kernel for TSL, started by Jupyter (install its kernelspec with\n"
                    "`tsl kernel install [--user|--prefix DIR]`).\n";

} // namespace

int main(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--version")) {
      std::cout << "tsl-kernel " << TSL_VERSION << "\n";
      return 0;
    }
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << usage;
      return 0;
    }
  }
  const std::string connection = xeus::extract_filename(argc, argv);
  if (connection.empty()) {
    std::cerr << usage;
    return 2;
  }

  sigset_t interrupts;
  sigemptyset(&interrupts);
  sigaddset(&interrupts, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupts, nullptr);
  std::thread(takeInterrupts, interrupts).detach();

  try {
    xeus::xconfiguration config = xeus::load_configuration(connection);
    auto context = xeus::make_context<zmq::context_t>();
    auto interpreter = std::make_unique<tsl::kernel::Interpreter>();
    runningEngine.store(&interpreter->engine());
    // `replace`: output that is not UTF-8 becomes U+FFFD rather than losing the reply.
    xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context), std::move(interpreter),
                         xeus::make_xserver_zmq, xeus::make_in_memory_history_manager(), nullptr,
                         xeus::make_null_debugger, nl::json::object(), nl::json::error_handler_t::replace);
    kernel.start(); // serves until a shutdown request, then exits
  } catch (const std::exception& e) {
    std::cerr << "tsl-kernel: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
