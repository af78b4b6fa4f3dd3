// compiler/Backends.cpp — the targets this build has, and compiler/'s passes.
#include "compiler/Backend.h"
#include "ir/MemoryPlan.h"

#include "compiler/cpu/CpuBackend.h"
#include "compiler/interp/InterpBackend.h"
#include "compiler/passes/Passes.h"
#include "compiler/tc/TcBackend.h"
#include "tsl/FormatFloat.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace tsl::compiler {

const char* loweringName(Lowering lowering) {
  switch (lowering) {
  case Lowering::Native: return "native";
  case Lowering::RuntimeKernel: return "runtime kernel";
  case Lowering::GenericKernel: return "generic kernel";
  }
  return "?";
}

const char* artifactName(Artifact artifact) {
  switch (artifact) {
  case Artifact::Llvm: return "llvm";
  case Artifact::Asm: return "asm";
  case Artifact::Object: return "obj";
  case Artifact::Library: return "lib";
  case Artifact::Header: return "header";
  }
  return "?";
}

std::string Executable::inspect(std::string_view) const { return {}; }

MemoryUse Executable::memory() const {
  MemoryUse use;
  if (const auto& plan = entry().plan()) {
    use.arenaBytes = plan->arenaBytes;
    use.resultBytes = plan->resultBytes;
    use.donatedBytes = plan->donatedBytes;
  }
  return use;
}

std::string Backend::emit(const ir::Module&, const ir::Function&, Artifact artifact, const CompileOptions&) {
  fail(ErrorKind::Value, "target :", name(), " makes no ", artifactName(artifact), " output (use :cpu)");
}

std::string Backend::cacheKey(const CompileOptions&) const { return {}; }
Stat Backend::statistics(bool) { return Stat::map({}); }
std::string Backend::statisticsJson(bool total) { return statistics(total).json(); }
Timeline Backend::trace() { return {}; }
void Backend::beforeRun(const FlagValues&) {}
std::vector<Output> Backend::afterRun(const FlagValues&) { return {}; }

namespace {

std::string jsonText(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += cat('\\', c);
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
      out += buffer;
    } else out += c;
  }
  return out + "\"";
}

void writeJson(const Stat& s, std::string& out) {
  switch (s.kind) {
  case Stat::Kind::Int: out += std::to_string(s.integer); return;
  case Stat::Kind::Real: out += formatShortest(s.real, false); return;
  case Stat::Kind::Text: out += jsonText(s.text); return;
  case Stat::Kind::List:
    out += "[";
    for (size_t i = 0; i < s.items.size(); ++i) {
      if (i) out += ", ";
      writeJson(s.items[i], out);
    }
    out += "]";
    return;
  case Stat::Kind::Map:
    out += "{";
    for (size_t i = 0; i < s.keys.size(); ++i) {
      std::string key = s.keys[i];
      std::replace(key.begin(), key.end(), '-', '_');
      out += cat(i ? ", " : "", jsonText(key), ": ");
      writeJson(s.values[i], out);
    }
    out += "}";
    return;
  }
}

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<BackendInfo>> infos; // never removed: pointers stay valid
  bool builtinsAdded = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

void add(Registry& r, BackendInfo info, bool replace) {
  for (auto& existing : r.infos)
    if (existing->name == info.name) {
      if (replace) *existing = std::move(info);
      return;
    }
  r.infos.push_back(std::make_unique<BackendInfo>(std::move(info)));
}

/// The registry, with this build's own targets in it.
Registry& filled() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.builtinsAdded) {
    r.builtinsAdded = true;
    add(r, cpuBackendInfo(), false);
    add(r, interpBackendInfo(), false);
    add(r, tc::tcBackendInfo(), false);
  }
  return r;
}

} // namespace

std::string Stat::json() const {
  std::string out;
  writeJson(*this, out);
  return out;
}

void registerBackend(BackendInfo info) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  add(r, std::move(info), true);
}

std::vector<const BackendInfo*> backendInfos() {
  Registry& r = filled();
  std::lock_guard lock(r.mutex);
  std::vector<const BackendInfo*> out;
  for (const auto& info : r.infos) out.push_back(info.get());
  std::stable_sort(out.begin(), out.end(), [](const BackendInfo* a, const BackendInfo* b) { return a->preference < b->preference; });
  return out;
}

const BackendInfo* findBackendInfo(std::string_view name) {
  for (const BackendInfo* info : backendInfos())
    if (info->name == name) return info;
  return nullptr;
}

std::unique_ptr<Backend> makeBackend(std::string_view name) {
  registerPasses();
  const BackendInfo* info = findBackendInfo(name);
  return info && info->make ? info->make() : nullptr;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const BackendInfo* info : backendInfos()) names.push_back(info->name);
  return names;
}

std::vector<std::string> layoutNames() {
  std::vector<std::string> names;
  for (const BackendInfo* info : backendInfos())
    if (!info->layouts.empty()) names.push_back(info->layouts);
  names.push_back("none");
  return names;
}

void registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    ir::registerPass("fuse", createFusePass);
    ir::registerPass("expand-einsum", createExpandEinsumPass);
    ir::registerPass("plan-memory", createPlanMemoryPass);
    ir::registerPass("layout-insert", createLayoutInsertPass);
    ir::registerPass("layout-assign", createLayoutAssignPass);
    ir::registerPass("layout-eliminate", createLayoutEliminatePass);
    ir::registerPass("bucket-all-reduce", createBucketAllReducePass);
  });
}

const std::vector<std::string>& optimizationPasses() {
  static const std::vector<std::string> passes = [] {
    std::vector<std::string> p = ir::optimizationPasses();
    // Right after inlining, before any pass simplifies: every rank traced the same program
    // (rank-dependent constants differ in value only), so every rank buckets the same
    // all-reduces in the same order; once constants fold, a rank's IR may lose operations
    // another keeps, and positions would differ (docs/distributed.md).
    auto inl = std::find(p.begin(), p.end(), "inline");
    p.insert(inl == p.end() ? p.begin() : inl + 1, "bucket-all-reduce");
    return p;
  }();
  return passes;
}

const std::vector<std::string>& layoutPasses() {
  static const std::vector<std::string> passes = {"layout-insert", "layout-assign", "layout-eliminate"};
  return passes;
}

std::vector<std::string> passNames() {
  registerPasses();
  return ir::passNames();
}

} // namespace tsl::compiler
