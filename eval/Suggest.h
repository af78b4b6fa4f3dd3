// eval/Suggest.h — "did you mean ...?" for a name nobody defined: the nearest names in
// scope, and those of standard library modules not yet imported, with the import to add.
#pragma once

#include <string>
#include <string_view>

namespace tsl {

class Namespace;

/// The edit distance between a and b (insertions, deletions, substitutions and swaps of
/// neighbours, Damerau-Levenshtein's optimal string alignment), or `limit + 1` when it
/// exceeds `limit`.
size_t editDistance(std::string_view a, std::string_view b, size_t limit);

/// " (did you mean shuffle?)" for an unbound `name` seen from `ns`: up to three of the
/// defined names nearest to it — those of `ns`, of core, of the modules `ns` imports
/// (qualified, nn/linear) and of the standard library modules it does not (followed by
/// the import to add) — or "" when none is close enough.
std::string suggestNames(const Namespace& ns, std::string_view name);

/// " (did you mean nn/linear?)" for `alias/name` when `module` (imported as alias) has
/// no `name`: the nearest of its names.
std::string suggestMember(const Namespace& module, std::string_view alias, std::string_view name);

/// " (add (import \"stdlib/nn\"))" when a standard library module would be imported as
/// `alias`, else "".
std::string suggestImport(std::string_view alias);

} // namespace tsl
