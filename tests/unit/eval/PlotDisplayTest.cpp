// tests/unit/eval/PlotDisplayTest.cpp — plots and progress bars as a notebook host sees
// them: a plot's representations (SVG gnuplot drew, an HTML image of it), and a progress
// bar as one display updated in place through the host's DisplaySink.
#include "tsl/Display.h"
#include "tsl/tsl.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace tsl;

namespace {

struct Shown {
  MimeBundle bundle;
  std::string id;
  bool update;
};

class RecordingSink final : public DisplaySink {
public:
  std::vector<Shown> shown;
  void show(const MimeBundle& bundle, const std::string& id, bool update) override {
    shown.push_back({bundle, id, update});
  }
};

} // namespace

TEST_CASE("a plot is represented as SVG drawn by gnuplot, and as an HTML image of it") {
  Engine engine;
  const Value p = engine.eval("(plot [1 2 3] [[3.0 1.0 2.0] [1 2 3]] :label [\"a\" \"b\"] :title \"curves\")");
  const MimeBundle bundle = engine.represent(p);
  REQUIRE(bundle.find("text/plain"));
  CHECK(*bundle.find("text/plain") == "#<plot 2 series \"curves\">");
  const std::string* svg = bundle.find("image/svg+xml");
  REQUIRE(svg);
  CHECK(svg->starts_with("<svg")); // no XML prolog: some notebook exporters refuse one
  CHECK(svg->find("curves") != std::string::npos);
  CHECK(svg->find("gnuplot_plot_2") != std::string::npos);
  const std::string* html = bundle.find("text/html");
  REQUIRE(html);
  CHECK(html->starts_with("<img src=\"data:image/svg+xml;base64,"));
  // Any other value gets no picture.
  CHECK(engine.represent(engine.eval("{:a 1}")).find("image/svg+xml") == nullptr);
  // The plot's representer is the only one: a plot (a map holding tensors) is not also a
  // table of its fields, whose text/html would compete with the picture's.
  CHECK(bundle.items.size() == 3);
}

TEST_CASE("a progress bar is one display, shown once and then updated, ending at the total") {
  Engine engine;
  auto sink = std::make_shared<RecordingSink>();
  engine.setDisplaySink(sink);
  CHECK(engine.print(engine.eval("(reduce + (progress (range 10) :label \"steps\"))")) == "45");
  REQUIRE(sink->shown.size() >= 2);
  const std::string id = sink->shown.front().id;
  CHECK(!id.empty());
  CHECK_FALSE(sink->shown.front().update);
  for (size_t i = 1; i < sink->shown.size(); ++i) {
    CHECK(sink->shown[i].id == id);
    CHECK(sink->shown[i].update);
  }
  const MimeBundle& first = sink->shown.front().bundle;
  const MimeBundle& last = sink->shown.back().bundle;
  REQUIRE(first.find("text/plain"));
  CHECK(first.find("text/plain")->find("steps [") == 0);
  CHECK(first.find("text/plain")->find(" 0/10 ") != std::string::npos);
  REQUIRE(last.find("text/plain"));
  CHECK(last.find("text/plain")->find(" 10/10 100%") != std::string::npos);
  REQUIRE(last.find("text/html"));
  CHECK(last.find("text/html")->find("<progress value=\"10\" max=\"10\"") != std::string::npos);

  // A second bar is another display; doseq walks it through rest.
  const size_t before = sink->shown.size();
  engine.eval("(doseq [x (progress [1 2 3] :label \"<b>\")] x)");
  REQUIRE(sink->shown.size() > before);
  CHECK(sink->shown[before].id != id);
  CHECK(sink->shown.back().bundle.find("text/plain")->find(" 3/3 ") != std::string::npos);
  CHECK(sink->shown.back().bundle.find("text/html")->find("&lt;b&gt;") != std::string::npos);
}
