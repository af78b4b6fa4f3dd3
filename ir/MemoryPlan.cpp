// ir/MemoryPlan.cpp — printing a memory plan.
#include "ir/MemoryPlan.h"

#include "ir/Printer.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace tsl::ir {

const char* homeName(Home home) {
  switch (home) {
  case Home::Scalar: return "scalar";
  case Home::Parameter: return "parameter";
  case Home::Constant: return "constant";
  case Home::Result: return "result";
  case Home::Fused: return "fused";
  case Home::Arena: return "arena";
  case Home::Shared: return "shared";
  }
  return "?";
}

const Value* MemoryPlan::root(const Value* v) const {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    const Placement* p = find(v);
    if (!p || p->home != Home::Shared || !p->shares) return v;
    v = p->shares;
  }
  return v;
}

namespace {

std::string bytesText(int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  if (bytes >= (int64_t(1) << 30)) out << static_cast<double>(bytes) / double(int64_t(1) << 30) << " GiB";
  else if (bytes >= (int64_t(1) << 20)) out << static_cast<double>(bytes) / double(1 << 20) << " MiB";
  else if (bytes >= (int64_t(1) << 10)) out << static_cast<double>(bytes) / double(1 << 10) << " KiB";
  else return cat(bytes, " B");
  return out.str();
}

} // namespace

std::string MemoryPlan::str(const Function& function) const {
  const ValueNames names = valueNames(function);
  auto nameOf = [&](const Value* v) {
    auto it = names.names.find(v);
    return it == names.names.end() ? std::string("%?") : it->second;
  };
  std::ostringstream out;
  out << "// memory plan of @" << function.name() << ": peak " << arenaBytes << " bytes of arena ("
      << bytesText(arenaBytes) << "), results " << resultBytes << " bytes";
  if (donatedBytes > 0) out << " (" << donatedBytes << " over donated parameters)";
  out << "\n";
  out << "//   " << std::left << std::setw(10) << "value" << std::setw(22) << "type" << std::setw(10) << "home"
      << std::right << std::setw(11) << "offset" << std::setw(11) << "bytes" << "  live\n";
  for (const Placement& p : values) {
    if (p.home == Home::Scalar || p.home == Home::Fused) continue; // nothing to place
    out << "//   " << std::left << std::setw(10) << nameOf(p.value) << std::setw(22) << p.value->type().str()
        << std::setw(10) << homeName(p.home) << std::right << std::setw(11)
        << (p.home == Home::Arena ? std::to_string(p.offset) : std::string("-")) << std::setw(11) << p.bytes << "  "
        << p.defined << ".." << p.lastUse;
    if (p.home == Home::Shared) out << (p.inPlace ? "  in place of " : "  view of ") << nameOf(p.shares);
    if (p.donor) out << "  over donated " << nameOf(p.donor);
    out << "\n";
  }
  return out.str();
}

} // namespace tsl::ir
