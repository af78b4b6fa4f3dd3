// eval/Suggest.cpp — the nearest defined names to an unbound one, for name errors.
#include "eval/Suggest.h"
#include "eval/Namespace.h"
#include "stdlib/Embedded.h"

#include <algorithm>
#include <vector>

namespace tsl {

namespace {

struct Candidate {
  std::string shown;  ///< as the user would write it: shuffle, nn/linear
  size_t distance;
  std::string module; ///< the stdlib module to import first, or ""
};

/// How far a name may be from what was typed: short names must be nearly exact, or
/// every one-letter local would suggest an operator.
size_t limitFor(std::string_view typed) {
  return typed.size() < 3 ? 0 : typed.size() <= 5 ? 1 : typed.size() <= 8 ? 2 : 3;
}

/// The alias an import gives a module path: its last segment.
std::string_view aliasOf(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// The names a standard library source defines at top level, read without running it.
std::vector<std::string> definedNames(std::string_view text) {
  std::vector<std::string> names;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    for (std::string_view head : {"(defn ", "(defmacro ", "(def "}) {
      if (!line.starts_with(head)) continue;
      std::string_view rest = line.substr(head.size());
      const size_t stop = rest.find_first_of(" \t()[]\"");
      names.emplace_back(rest.substr(0, stop));
      break;
    }
  }
  return names;
}

bool suggestible(std::string_view name, const Var& var) {
  return (var.defined || var.declared) && !name.empty() && name[0] != '%';
}

void consider(std::vector<Candidate>& out, std::string_view typed, std::string shown, std::string_view shortName,
              std::string module) {
  const size_t limit = limitFor(typed);
  size_t d = editDistance(typed, shown, limit);
  if (shortName.size() != shown.size()) d = std::min(d, editDistance(typed, shortName, limit));
  // An exact match of a module's short name (linear for nn/linear) is always worth saying.
  if (d <= limit) out.push_back({std::move(shown), d, std::move(module)});
}

std::string render(std::vector<Candidate> found) {
  if (found.empty()) return "";
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.module.empty() != b.module.empty()) return a.module.empty();
    return a.shown < b.shown;
  });
  std::vector<Candidate> kept;
  for (Candidate& c : found)
    if (kept.size() < 3 && std::none_of(kept.begin(), kept.end(), [&](const Candidate& k) { return k.shown == c.shown; }))
      kept.push_back(std::move(c));
  std::string out = " (did you mean ";
  for (size_t i = 0; i < kept.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kept.size() ? " or " : ", ") + kept[i].shown;
  out += "?";
  std::vector<std::string> modules;
  for (const Candidate& c : kept)
    if (!c.module.empty() && std::find(modules.begin(), modules.end(), c.module) == modules.end())
      modules.push_back(c.module);
  for (size_t i = 0; i < modules.size(); ++i)
    out += (i == 0 ? " " : "; ") + std::string("the ") + std::string(aliasOf(modules[i])) + "/ names need (import \"" +
           modules[i] + "\")";
  return out + ")";
}

} // namespace

size_t editDistance(std::string_view a, std::string_view b, size_t limit) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  // Three rows of the optimal-string-alignment table.
  std::vector<size_t> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    current[0] = i;
    size_t rowMin = current[0];
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d = std::min(d, before[j - 2] + 1);
      current[j] = d;
      rowMin = std::min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return std::min(previous[m], limit + 1);
}

std::string suggestNames(const Namespace& ns, std::string_view name) {
  std::vector<Candidate> found;
  for (const Namespace* scope : {static_cast<const Namespace*>(&ns), static_cast<const Namespace*>(ns.fallback())})
    if (scope)
      for (const auto& [n, var] : scope->vars())
        if (n != name && suggestible(n, *var)) consider(found, name, n, n, "");
  for (const auto& [alias, module] : ns.aliases())
    if (alias != "core")
      for (const auto& [n, var] : module->vars())
        if (suggestible(n, *var)) consider(found, name, alias + "/" + n, n, "");
  for (const stdlib::EmbeddedFile& file : stdlib::embeddedFiles()) {
    if (file.name == "stdlib/core" || file.name == ns.name()) continue;
    bool imported = false;
    for (const auto& [alias, module] : ns.aliases()) imported |= module->name() == file.name;
    if (imported) continue;
    const std::string alias(aliasOf(file.name));
    for (const std::string& n : definedNames(file.text)) consider(found, name, alias + "/" + n, n, std::string(file.name));
  }
  return render(std::move(found));
}

std::string suggestMember(const Namespace& module, std::string_view alias, std::string_view name) {
  std::vector<Candidate> found;
  for (const auto& [n, var] : module.vars())
    if (suggestible(n, *var)) consider(found, name, cat(alias, "/", n), n, "");
  return render(std::move(found));
}

std::string suggestImport(std::string_view alias) {
  for (const stdlib::EmbeddedFile& file : stdlib::embeddedFiles())
    if (file.name != "stdlib/core" && aliasOf(file.name) == alias)
      return cat(" (add (import \"", file.name, "\"))");
  return "";
}

} // namespace tsl
