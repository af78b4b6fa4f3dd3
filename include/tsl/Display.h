// include/tsl/Display.h — rich output: a value as several representations (MIME types),
// and where explicit output (display, progress bars) goes.
//
// A value has a plain-text form (what the REPL prints) and may have richer ones: an HTML
// table for a tensor, SVG for a plot or a graph. Engine::represent gives all of them;
// parts of TSL that draw (plots, layouts, graphs) add theirs with addRepresenter. A host
// that can show pictures (the notebook kernel) installs a DisplaySink; without one,
// explicit output is printed as text where print goes.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tsl {

class Value;

/// Representations of one value: (MIME type, data) pairs, "text/plain" first. Data is text
/// (SVG and HTML included); binary data (image/png) is base64, as Jupyter expects.
struct MimeBundle {
  std::vector<std::pair<std::string, std::string>> items;
  /// The data for `mime`, or nullptr.
  const std::string* find(const std::string& mime) const {
    for (const auto& [m, data] : items)
      if (m == mime) return &data;
    return nullptr;
  }
  void add(std::string mime, std::string data) { items.emplace_back(std::move(mime), std::move(data)); }
};

/// Where `display` and live output (progress bars) go.
class DisplaySink {
public:
  virtual ~DisplaySink() = default;
  /// Shows `bundle`. A non-empty `id` names the display: with `update`, the display shown
  /// earlier under that id is replaced (a progress bar redrawn in place).
  virtual void show(const MimeBundle& bundle, const std::string& id, bool update) = 0;
  /// Whether it only keeps pictures (`tsl --pictures DIR`). Such a sink is given what is
  /// displayed after it has been printed as text, as without a sink, and progress bars are
  /// drawn as without a sink (on stderr at a terminal); show() is then called with an
  /// empty id.
  virtual bool keepsPicturesOnly() const { return false; }
};

/// Adds representations of `value` to `bundle` (after text/plain) if it is a kind of value
/// the representer knows; returns whether it added any. Representers are tried in order
/// of registration; the first that knows the value represents it (a plot, a map, is then
/// not also shown as a table of its fields).
using Representer = std::function<bool(const Value& value, MimeBundle& bundle)>;

/// Registers a representer for every engine (at static initialisation or before engines
/// run; not thread-safe against represent).
void addRepresenter(Representer representer);

} // namespace tsl
