// eval/Display.cpp — values as MIME bundles (tsl/Display.h): the representers' registry,
// Engine::represent and the evaluator's explicit output.
#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "tsl/tsl.h"

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
  for (const Representer& representer : representers()) representer(value, bundle);
  return bundle;
}

} // namespace

void addRepresenter(Representer representer) { representers().push_back(std::move(representer)); }

MimeBundle Engine::represent(const Value& value) const { return representValue(value); }

void Engine::setDisplaySink(std::shared_ptr<DisplaySink> sink) { impl_->setDisplaySink(std::move(sink)); }

void Evaluator::show(const Value& value, const std::string& id, bool update) {
  if (displaySink_) {
    displaySink_->show(representValue(value), id, update);
    return;
  }
  out() << printValue(value, false) << '\n';
}

} // namespace tsl
