// eval/Namespace.cpp — name resolution across namespaces and imports.
#include "eval/Namespace.h"
#include "eval/Suggest.h"

namespace tsl {

Var* Namespace::find(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.get();
}

Var* Namespace::intern(std::string_view name) {
  if (Var* var = find(name)) return var;
  auto var = std::make_unique<Var>();
  var->name = std::string(name);
  var->ns = this;
  Var* raw = var.get();
  vars_.emplace(std::string(name), std::move(var));
  return raw;
}

Var* Namespace::resolve(std::string_view symbol, bool create, const Span& span) {
  const size_t slash = symbol.find('/');
  if (slash != std::string_view::npos && slash > 0 && slash + 1 < symbol.size()) {
    const std::string alias(symbol.substr(0, slash));
    const std::string_view name = symbol.substr(slash + 1);
    auto it = aliases_.find(alias);
    if (it == aliases_.end()) {
      if (Var* var = find(symbol)) return var; // a plain name that contains '/'
      throw Error(ErrorKind::Name,
                  cat("no module is imported as '", alias, "' (for ", symbol, ")", suggestImport(alias)), span);
    }
    Var* var = it->second->find(name);
    if (!var || !(var->defined || var->declared))
      throw Error(ErrorKind::Name, cat("module ", it->second->name(), " defines no '", name, "'", suggestMember(*it->second, alias, name)),
                  span);
    return var;
  }
  if (Var* var = find(symbol)) return var;
  if (fallback_)
    if (Var* var = fallback_->find(symbol); var && (var->defined || var->declared)) return var;
  return create ? intern(symbol) : nullptr;
}

} // namespace tsl
