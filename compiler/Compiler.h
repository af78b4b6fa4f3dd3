// compiler/Compiler.h — an engine's compiler: its backends and its compiled code.
//
// The evaluator lowers a function to an IR module (eval/Tracer.h) and hands it here; the
// compiler runs the target's pipeline on it and compiles it with the target's backend.
// This is the narrow interface between the two layers: modules in, executables out.
//
// Compiled code is cached by what determines it: the module as lowered (before any
// pass), the entry, the target, the donated parameters, the layout preferences, the
// target's options (CompileOptions::backend) and its own key fields (Backend::cacheKey:
// :cpu's CPU and optimisation level). It is looked up before the pipeline runs: a
// function compiled again — the same jit function called from a fresh closure, a
// derivative rebuilt — costs neither the passes nor code generation. The cache holds the
// most recent kCachedExecutables; an executable's code is freed when neither the cache
// nor any jit function holds it.
#pragma once

#include "compiler/Backend.h"

#include <list>
#include <map>
#include <memory>
#include <string>

namespace tsl::compiler {

class Compiler {
public:
  Compiler();
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  /// The backend of `target` (a registered target's name), made on first use; a value
  /// error naming the targets this build has for any other name.
  Backend& backend(std::string_view target);

  /// Runs the target's pipeline on `module` (in place), with the switches of `options`;
  /// functions `entry` (if given) no longer calls are dropped as passes inline them.
  void optimize(ir::Module& module, std::string_view target, const CompileOptions& options,
                const std::string& entry = "");
  /// Runs `pipeline` (pass names) on `module`: `tsl compile --pass`.
  void runPasses(ir::Module& module, const std::vector<std::string>& pipeline, const CompileOptions& options,
                 const std::string& entry = "");

  /// The code of `entry` of an optimised `module` as `artifact` (Backend::emit).
  std::string emit(const ir::Module& module, const std::string& entry, std::string_view target, Artifact artifact,
                   const CompileOptions& options);

  /// Optimises `module` for `target` and compiles its function `entry`.
  std::shared_ptr<Executable> compile(std::unique_ptr<ir::Module> module, const std::string& entry,
                                      std::string_view target, const CompileOptions& options);

  /// Executables kept for reuse.
  static constexpr size_t kCachedExecutables = 64;
  /// Compilations answered from the cache so far (without running the pipeline).
  size_t cacheHits() const { return hits_; }
  /// The key compile() caches the compilation of `module` (as lowered) under.
  std::string cacheKey(const ir::Module& module, const std::string& entry, std::string_view target,
                       const CompileOptions& options);

  /// The backends made so far (their statistics, their run hooks), by target name.
  const std::map<std::string, std::unique_ptr<Backend>, std::less<>>& madeBackends() const { return backends_; }

private:
  size_t hits_ = 0;
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> backends_;
  /// Most recently used first.
  std::list<std::pair<std::string, std::shared_ptr<Executable>>> cache_;
};

} // namespace tsl::compiler
