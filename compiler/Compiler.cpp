// compiler/Compiler.cpp — backends, pipelines and the cache of compiled code.
#include "compiler/Compiler.h"

#include "compiler/cpu/EagerGemm.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <algorithm>
#include <mutex>

namespace tsl::compiler {

namespace {

// The modules of compiles that stopped (Ctrl-C, an error in a pass or in code generation).
// Freeing a module of 300,000 operations takes most of a second, which would otherwise
// come between Ctrl-C and its message: they are freed when the next compile begins, on
// any engine, or returned with the process (reachable from here, so no leak).
struct Graveyard {
  std::mutex mutex;
  std::vector<std::shared_ptr<const void>> dead;
};

Graveyard& graveyard() {
  static Graveyard* instance = new Graveyard; // never destroyed: it may hold modules at exit
  return *instance;
}

void bury(std::shared_ptr<const void> module) {
  Graveyard& g = graveyard();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.dead.push_back(std::move(module));
}

void clearGraveyard() {
  std::vector<std::shared_ptr<const void>> dead;
  {
    Graveyard& g = graveyard();
    std::lock_guard<std::mutex> lock(g.mutex);
    dead.swap(g.dead);
  }
} // freed here, outside the lock

} // namespace

Compiler::Compiler() {
  registerPasses();
  cpu::installEagerGemm(); // eager matmul runs :cpu's GEMM
}

Compiler::~Compiler() {
  // Executables first: their code may live in a backend's JIT.
  cache_.clear();
}

Backend& Compiler::backend(std::string_view target) {
  if (auto it = backends_.find(target); it != backends_.end()) return *it->second;
  std::unique_ptr<Backend> made = makeBackend(target);
  if (!made) {
    std::string known;
    for (const std::string& name : targetNames()) known += cat(known.empty() ? "" : ", ", ":", name);
    fail(ErrorKind::Value, "unknown target :", target, " (this build has ", known, ")");
  }
  Backend& b = *made;
  backends_.emplace(std::string(target), std::move(made));
  return b;
}

void Compiler::runPasses(ir::Module& module, const std::vector<std::string>& pipeline, const CompileOptions& options,
                         const std::string& entry) {
  ir::PassContext scratch;
  ir::PassContext& context = options.context ? *options.context : scratch;
  const std::string outer = context.entry, outerLayouts = context.layoutTarget;
  const std::vector<bool> outerDonated = context.donated;
  const int64_t outerBucket = context.bucketBytes;
  context.entry = entry;
  context.donated = options.donated;
  context.bucketBytes = options.bucketBytes;
  if (!options.layoutTarget.empty()) context.layoutTarget = options.layoutTarget;
  auto restore = [&] {
    context.entry = outer;
    context.layoutTarget = outerLayouts;
    context.donated = outerDonated;
    context.bucketBytes = outerBucket;
  };
  try {
    ir::PassManager(pipeline).run(module, context);
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

void Compiler::optimize(ir::Module& module, std::string_view target, const CompileOptions& options,
                        const std::string& entry) {
  Backend& b = backend(target);
  CompileOptions laid = options;
  if (laid.layoutTarget.empty()) laid.layoutTarget = b.layoutTarget();
  runPasses(module, b.pipeline(), laid, entry);
}

std::string Compiler::emit(const ir::Module& module, const std::string& entry, std::string_view target,
                           Artifact artifact, const CompileOptions& options) {
  const ir::Function* function = module.find(entry);
  TSL_ASSERT(function, "emit: the module has no function @", entry);
  return backend(target).emit(module, *function, artifact, options);
}

std::string Compiler::cacheKey(const ir::Module& module, const std::string& entry, std::string_view target,
                               const CompileOptions& options) {
  Backend& b = backend(target);
  std::string donated;
  for (bool d : options.donated) donated += d ? '1' : '0';
  std::string key = cat(target, "|@", entry, "|donate ", donated, "|layouts ", options.layoutTarget, "|bucket ",
                        options.bucketBytes, "|", b.cacheKey(options));
  for (const auto& [name, value] : options.backend) key += cat("|", name, "=", value);
  // The module as lowered (value names included: they change nothing, but the same
  // program lowered twice prints the same); the pipeline is a function of the rest.
  return cat(key, "\n", ir::printModule(module, {false}));
}

std::shared_ptr<Executable> Compiler::compile(std::unique_ptr<ir::Module> module, const std::string& entry,
                                              std::string_view target, const CompileOptions& options) {
  Backend& b = backend(target);
  // Looked up before the pipeline runs: a hit costs printing the module, nothing more.
  const std::string key = cacheKey(*module, entry, target, options);
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if (it->first == key) {
      cache_.splice(cache_.begin(), cache_, it); // most recently used first
      ++hits_;
      return cache_.front().second;
    }
  clearGraveyard();
  std::shared_ptr<ir::Module> owned(std::move(module));
  std::shared_ptr<Executable> executable;
  try {
    optimize(*owned, target, options, entry);
    const ir::Function* function = owned->find(entry);
    TSL_ASSERT(function, "compile: the module has no function @", entry);
    executable = b.compile(owned, *function, options);
  } catch (...) {
    bury(std::move(owned));
    throw;
  }
  cache_.emplace_front(key, executable);
  if (cache_.size() > kCachedExecutables) cache_.pop_back();
  return executable;
}

} // namespace tsl::compiler
