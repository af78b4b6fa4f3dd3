// eval/Progress.cpp — progress bars: (progress coll :label s :total n).
//
// TSL's sequences are not lazy, so a progress bar cannot sit inside a sequence that
// produces elements on demand. Instead `progress` returns a vector of coll's elements that
// carries an observer (eval/Value.h, SequenceObserver): each `rest` taken of it (doseq,
// loop with rest, destructuring) and map, filter and reduce walking it tell the observer
// how many elements are behind. The elements are those of coll, unchanged.
//
// Where the bar goes: to the engine's display sink if the host installed one (a
// notebook: one display, updated in place), else to stderr if it is a terminal (one
// line redrawn with \r, cleared at the end), else nowhere — pipes, files and CI logs stay
// clean. Redrawing is limited to 10 times a second (4 in a notebook), plus the last state.
#include "eval/Builtins.h"
#include "eval/DisplayText.h"
#include "tsl/Display.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <sys/ioctl.h>
#include <unistd.h>

namespace tsl::builtins {

namespace {

using Clock = std::chrono::steady_clock;

/// "m:ss" (or "h:mm:ss").
std::string clockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%lld:%02lld", s / 60, s % 60);
  return buffer;
}

class ProgressBar;

/// The terminal bars of this thread not yet finished, oldest first. They share one line:
/// the newest (an inner loop's) draws, the others wait until it is done.
thread_local std::vector<ProgressBar*> tTerminalBars;

class ProgressBar final : public SequenceObserver {
public:
  ProgressBar(std::string label, size_t total, std::shared_ptr<DisplaySink> sink, bool terminal)
      : label_(std::move(label)), total_(total), sink_(std::move(sink)), terminal_(terminal && !sink_),
        start_(Clock::now()) {
    static unsigned counter = 0;
    id_ = "tsl-progress-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    if (terminal_) tTerminalBars.push_back(this);
    draw(true);
  }
  ~ProgressBar() override {
    // Left before the end (an error, a loop that stopped early): the terminal line is
    // cleared all the same; a notebook keeps the last state it was shown.
    if (terminal_ && !finished_) {
      clearLine();
      leaveLine();
    }
  }

  /// Clears this thread's progress line, if one shows, before other output is written
  /// to the terminal; the bar comes back with its next step.
  static void clearShownLine() {
    if (!tTerminalBars.empty()) tTerminalBars.back()->clearLine();
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void reached(size_t done) override {
    if (finished_) return;
    done_ = std::min(done, total_);
    draw(done_ == total_);
  }

private:
  /// "label 37/100 [=======>      ]  37% 12.3 it/s 0:03<0:05"
  std::string line(size_t width, bool ascii) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
    char numbers[128];
    const std::string rateText = rate >= 1 || done_ == 0 ? cat(std::round(rate * 10) / 10, " it/s")
                                                         : cat(std::round(10 / rate) / 10, " s/it");
    const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : NAN;
    std::snprintf(numbers, sizeof numbers, " %zu/%zu %3d%% %s %s<%s", done_, total_,
                  total_ ? static_cast<int>(100 * done_ / total_) : 100, rateText.c_str(), clockText(elapsed).c_str(),
                  done_ == total_ ? "0:00" : clockText(eta).c_str());
    std::string head = label_.empty() ? "" : label_ + " ";
    if (!ascii) return head + numbers;
    // The bar takes what the line leaves, between 10 and 40 columns.
    const size_t used = head.size() + std::strlen(numbers) + 3;
    const size_t barWidth = width > used + 10 ? std::min<size_t>(40, width - used) : 10;
    const size_t filled = total_ ? barWidth * done_ / total_ : barWidth;
    std::string bar = "[" + std::string(filled, '=') + (filled < barWidth ? ">" : "") +
                      std::string(barWidth - filled - (filled < barWidth ? 1 : 0), ' ') + "]";
    return head + bar + numbers;
  }

  void draw(bool force) {
    if (!sink_ && !terminal_) return;
    const Clock::time_point now = Clock::now();
    const auto interval = std::chrono::milliseconds(sink_ ? 250 : 100);
    if (terminal_ && (tTerminalBars.empty() || tTerminalBars.back() != this)) return; // an inner bar draws
    if (!force && drawn_ && lineShown_ && now - lastDraw_ < interval) return;
    lastDraw_ = now;
    const bool last = done_ == total_;
    if (sink_) {
      MimeBundle bundle;
      bundle.add("text/plain", line(80, true));
      bundle.add("text/html", cat("<div><progress value=\"", done_, "\" max=\"", std::max<size_t>(total_, 1),
                                  "\" style=\"width:20em\"></progress> ", escapeXml(line(0, false)), "</div>"));
      sink_->show(bundle, id_, drawn_);
    } else {
      winsize size{};
      const size_t width = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
      std::string text = line(width, true);
      if (text.size() >= width) text.resize(width - 1);
      // On a terminal the bar is a live display: redrawn in place, gone when done.
      std::fprintf(stderr, "\r%s\033[K", last ? "" : text.c_str());
      std::fflush(stderr);
      lineShown_ = !last;
    }
    drawn_ = true;
    if (last) {
      finished_ = true;
      if (terminal_) leaveLine();
    }
  }

  void clearLine() {
    if (!lineShown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    lineShown_ = false;
  }

  /// Gives the line back to the bar this one interrupted.
  void leaveLine() {
    std::erase(tTerminalBars, this);
    if (!tTerminalBars.empty()) tTerminalBars.back()->draw(true);
  }

  std::string label_;
  size_t total_;
  size_t done_ = 0;
  std::shared_ptr<DisplaySink> sink_;
  bool terminal_;
  Clock::time_point start_;
  Clock::time_point lastDraw_;
  bool drawn_ = false;
  bool lineShown_ = false; ///< the terminal line shows this bar now
  bool finished_ = false;
  std::string id_;
};

} // namespace

void clearProgressLine() { ProgressBar::clearShownLine(); }

void registerProgressBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("progress", 1, 5, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"label", "total"});
    if (kw.positional().size() != 1) fail(ErrorKind::Type, "progress: expected (progress coll :label s :total n)");
    const Value& coll = args[0];
    if (!(coll.isNil() || coll.isSequential() || coll.isMap() || coll.isString() || coll.isNonScalarTensor()))
      badArgument(cx, 0, "a collection", coll);
    std::string label;
    if (const Value* l = kw.find("label")) {
      if (!l->isString()) fail(ErrorKind::Type, "progress: :label must be a string, got ", describeKind(*l));
      label = l->string().text();
    }
    std::vector<Value> items = sequenceItems(coll);
    size_t total = items.size();
    if (const Value* t = kw.find("total")) {
      if (!t->isTensor() || !t->tensor().isScalar() || !isInteger(t->tensor().dtype()) || t->tensor().toInt() < 0)
        fail(ErrorKind::Type, "progress: :total must be a non-negative integer, got ", describeKind(*t));
      total = static_cast<size_t>(t->tensor().toInt());
    }
    std::shared_ptr<DisplaySink> sink = cx.evaluator.sharedDisplaySink();
    if (sink && sink->keepsPicturesOnly()) sink.reset(); // bars as without a sink
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    auto* vector = new VectorObj(std::move(items));
    Value out(vector);
    if (sink || terminal) vector->observe(std::make_shared<ProgressBar>(label, total, sink, terminal));
    return out;
  });
  document(evaluator, "progress",
           "(progress coll :label s :total n): coll's elements (a vector; a tensor's rows) with a progress bar — count, rate, elapsed time and time left — that advances as doseq, loop over rest, map, filter or reduce walk them: drawn on stderr when it is a terminal, updated in place in a notebook, silent otherwise.\n  e.g. (reduce + (progress (range 100) :label \"sum\"))  ; 4950");
}

} // namespace tsl::builtins
