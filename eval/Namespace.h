// eval/Namespace.h — global definitions: vars, namespaces and modules.
//
// Every file is read into a namespace. The REPL and `tsl run` use "user"; an imported
// module gets its own, named by its path ("stdlib/nn"), and the importer reaches its
// definitions through an alias (the last path segment: `nn/linear`). Names not found in
// the current namespace fall back to "core": the builtins and stdlib/core.
//
// A reference to a name nobody has defined yet creates an undefined var, so that functions
// may refer to each other in any order; using it before a `def` runs is a name error.
#pragma once

#include "eval/Value.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tsl {

class Namespace;

struct Var {
  std::string name; ///< unqualified
  Namespace* ns = nullptr;
  Value value;
  bool defined = false;  ///< a `def` has run
  bool declared = false; ///< a `def` of it has been analysed (it will be defined)
  std::string doc;
  Span defSpan;  ///< where it was defined
  Span firstUse; ///< where it was first referred to (for `tsl check`)

  bool isMacro() const { return defined && value.isFunction() && value.function().isMacro(); }
};

class Namespace {
public:
  explicit Namespace(std::string name, Namespace* fallback)
      : name_(std::move(name)), fallback_(fallback) {}

  const std::string& name() const { return name_; }
  /// The var named `name` in this namespace only, or nullptr.
  Var* find(std::string_view name) const;
  /// The var named `name` here, created (undefined) if missing.
  Var* intern(std::string_view name);
  /// Resolves a symbol the way code in this namespace sees it: `alias/name` through an
  /// import, else this namespace, else the fallback ("core") if defined there. With
  /// `create`, an unknown plain name becomes a new undefined var here; without, it gives
  /// nullptr. Throws a name error for an unknown alias or a name a module lacks.
  Var* resolve(std::string_view symbol, bool create, const Span& span);

  void addAlias(std::string alias, Namespace* target) { aliases_[std::move(alias)] = target; }
  const std::map<std::string, Namespace*>& aliases() const { return aliases_; }
  Namespace* fallback() const { return fallback_; }
  /// Vars in name order.
  const std::map<std::string, std::unique_ptr<Var>, std::less<>>& vars() const { return vars_; }

private:
  std::string name_;
  Namespace* fallback_;
  std::map<std::string, std::unique_ptr<Var>, std::less<>> vars_;
  std::map<std::string, Namespace*> aliases_;
};

} // namespace tsl
