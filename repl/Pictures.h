// repl/Pictures.h — `tsl --pictures DIR [--open]`: the pictures a program or the REPL
// shows, written as numbered SVG files, through the public display API (tsl/Display.h).
#pragma once

#include "tsl/tsl.h"

#include <memory>
#include <string>

namespace tsl::cli {

/// A display sink that writes every picture shown (a bundle holding image/svg+xml) as
/// DIR/picture-N.svg (N from 1, three digits at least; a file of that name is replaced)
/// and says "tsl: wrote PATH" on stderr; with `open`, also starts `xdg-open PATH` (without
/// waiting for it; if there is none, says so once). It keeps pictures only: the engine
/// prints what is displayed as text, as without a sink, and draws progress bars itself.
class Pictures final : public DisplaySink {
public:
  Pictures(std::string dir, bool open) : dir_(std::move(dir)), open_(open) {}
  void show(const MimeBundle& bundle, const std::string& id, bool update) override;
  bool keepsPicturesOnly() const override { return true; }
  /// Writes `bundle`'s picture, if it has one; whether it did. A folder that cannot be
  /// made or a file that cannot be written is said on stderr, not raised: a picture is
  /// not worth stopping a program for.
  bool write(const MimeBundle& bundle);

private:
  void openFile(const std::string& path);
  std::string dir_;
  bool open_;
  int count_ = 0;
  bool saidNoOpener_ = false;
};

/// Writes the picture of a value the REPL prints (a plot, a trace, layout-svg's or
/// graph's text), if it has one. Tensors are not represented: they have no picture.
void writePicture(Engine& engine, Pictures& pictures, const Value& value);

} // namespace tsl::cli
