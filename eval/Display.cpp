// eval/Display.cpp — values as MIME bundles (tsl/Display.h): the representers' registry,
// Engine::represent and the evaluator's explicit output.
#include "eval/DisplayText.h"
#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "tsl/tsl.h"

#include <cstdint>
#include <ostream>

namespace tsl {

namespace {

std::vector<Representer>& representers() {
  static std::vector<Representer> all;
  return all;
}

MimeBundle representValue(const Value& value) {
  MimeBundle bundle;
  bundle.add("text/plain", printValue(value, true));
  for (const Representer& representer : representers())
    if (representer(value, bundle)) break; // the first that knows the value represents it
  return bundle;
}

} // namespace

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

std::string bareSvg(std::string_view svg) {
  const size_t start = svg.find("<svg");
  return start == std::string_view::npos ? std::string() : std::string(svg.substr(start));
}

void addSvg(MimeBundle& bundle, std::string_view svg) {
  const std::string bare = bareSvg(svg);
  bundle.add("image/svg+xml", bare);
  bundle.add("text/html", "<img src=\"data:image/svg+xml;base64," + base64(bare) + "\"/>");
}

void addRepresenter(Representer representer) { representers().push_back(std::move(representer)); }

MimeBundle Engine::represent(const Value& value) const { return representValue(value); }

void Engine::setDisplaySink(std::shared_ptr<DisplaySink> sink) { impl_->setDisplaySink(std::move(sink)); }

void Evaluator::show(const Value& value, const std::string& id, bool update) {
  if (displaySink_ && !displaySink_->keepsPicturesOnly()) {
    displaySink_->show(representValue(value), id, update);
    return;
  }
  out() << printValue(value, false) << '\n';
  if (displaySink_) {
    out() << std::flush; // the text comes before what the sink says
    displaySink_->show(representValue(value), {}, false);
  }
}

} // namespace tsl
