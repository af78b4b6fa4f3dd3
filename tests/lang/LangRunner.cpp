// tests/lang/LangRunner.cpp — runs tests/lang/*.tsl programs with inline expectations.
//
// Each top-level form of a test file is evaluated in order, as at a REPL: an error ends
// that form, not the file. Comments after a form state what it must do:
//
//   (+ 1 2)              ; expect: 3              the printed value (as the REPL shows it)
//   (println "hi")       ; out: hi                one line of output (repeat for more)
//   (undefined-thing)    ; expect-error: name error: unbound
//   (f 1)                ; expect-error: 4:1: type error   (also checks line 4, column 1)
//
// A directive belongs to the last form that ends on or before its line. A form with no
// `expect-error` must not fail; a form's output must match its `out` lines exactly when
// it has any. Every top-level call of a user function is also compiled with jit :interp
// and jit :cpu, and the results compared with eager's (tests/lang/Differential.h).
// Usage: tsl-lang-runner FILE...; exit status 1 if anything did not match.
#include "eval/Evaluator.h"
#include "tests/lang/Differential.h"
#include "parser/Reader.h"
#include "eval/EngineAccess.h"
#include "tsl/tsl.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace {

struct Expectation {
  uint32_t line = 0;
  std::optional<std::string> value;
  std::optional<std::string> error;
  std::vector<std::string> out;
};

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

/// Finds `; expect: ...`, `; out: ...` and `; expect-error: ...` comments by line.
std::vector<std::pair<uint32_t, std::pair<std::string, std::string>>> directives(const std::string& text) {
  std::vector<std::pair<uint32_t, std::pair<std::string, std::string>>> found;
  std::istringstream lines(text);
  std::string line;
  uint32_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    for (const char* kind : {"expect-error:", "expect:", "out:"}) {
      const std::string marker = std::string("; ") + kind;
      const size_t at = line.find(marker);
      if (at == std::string::npos) continue;
      found.push_back({number, {kind, trim(line.substr(at + marker.size()))}});
      break;
    }
  }
  return found;
}

int runFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot open\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  std::ostringstream output;
  tsl::Engine engine(10000, &output);
  tsl::Evaluator& evaluator = tsl::EngineAccess::of(engine);
  engine.setArgs({"first-arg", "second-arg"});

  std::vector<tsl::SyntaxPtr> forms;
  try {
    evaluator.sources().add(path, text);
    forms = tsl::readAll(text, path);
  } catch (const tsl::Error& e) {
    std::cerr << engine.describe(e);
    return 1;
  }

  // Attach each directive to the last form ending on or before its line.
  std::vector<Expectation> expectations(forms.size());
  for (const auto& [line, directive] : directives(text)) {
    std::optional<size_t> owner;
    for (size_t i = 0; i < forms.size(); ++i)
      if (forms[i]->span().endLine <= line) owner = i;
    if (!owner) {
      std::cerr << path << ":" << line << ": directive before any form\n";
      return 1;
    }
    Expectation& e = expectations[*owner];
    e.line = line;
    const auto& [kind, argument] = directive;
    if (kind == "expect:") e.value = argument;
    else if (kind == "expect-error:") e.error = argument;
    else e.out.push_back(argument);
  }

  int failures = 0, cases = 0, jitFailures = 0;
  auto report = [&](const tsl::SyntaxPtr& form, const std::string& message) {
    ++failures;
    std::cerr << path << ":" << form->span().line << ": " << message << "\n";
  };
  tsl::testing::DifferentialStats jit;
  tsl::testing::installDifferential(evaluator, output, jit);
  for (size_t i = 0; i < forms.size(); ++i) {
    const Expectation& expect = expectations[i];
    cases += expect.value || expect.error || !expect.out.empty();
    output.str("");
    std::string printed;
    std::optional<tsl::Error> error;
    try {
      evaluator.clearInterrupt();
      const tsl::Value value = evaluator.evalForm(forms[i], evaluator.user());
      printed = engine.print(value);
    } catch (const tsl::Error& e) {
      error = e;
    } catch (const tsl::ExitRequest& request) {
      printed = "exit " + std::to_string(request.code);
    }
    for (const std::string& failure : jit.failures) std::cerr << path << ":" << failure << "\n";
    jitFailures += static_cast<int>(jit.failures.size());
    jit.failures.clear();
    if (expect.error) {
      if (!error) {
        report(forms[i], "expected an error (" + *expect.error + ") but got " + printed);
        continue;
      }
      std::string wanted = *expect.error;
      // An optional "LINE:COL: " prefix checks the error's position.
      const size_t colon = wanted.find(": ");
      if (colon != std::string::npos && wanted.find(':') < colon &&
          wanted.find_first_not_of("0123456789:") == colon + 1) {
        const std::string position = wanted.substr(0, colon);
        const std::string actual = std::to_string(error->span().line) + ":" + std::to_string(error->span().col);
        if (position != actual) report(forms[i], "error at " + actual + ", expected at " + position);
        wanted = wanted.substr(colon + 2);
      }
      if (std::string(error->what()).find(wanted) == std::string::npos)
        report(forms[i], "expected error containing '" + wanted + "', got: " + error->what());
      continue;
    }
    if (error) {
      report(forms[i], std::string("unexpected error: ") + engine.describe(*error));
      continue;
    }
    if (expect.value && printed != *expect.value)
      report(forms[i], "expected " + *expect.value + ", got " + printed);
    if (!expect.out.empty()) {
      std::string wanted;
      for (const std::string& line : expect.out) wanted += line + "\n";
      if (output.str() != wanted)
        report(forms[i], "expected output:\n" + wanted + "got:\n" + output.str());
    }
  }
  std::cout << path << ": " << cases - failures << "/" << cases << " cases passed; jit :interp and :cpu agreed on " << jit.compared
            << " calls (" << jit.bitExact << " bit for bit; " << jit.notJittable << " not jittable, " << jit.impure
            << " impure, " << jit.tooLarge
            << " too large, " << jitFailures
            << " differed)\n";
  return failures == 0 && jitFailures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: tsl-lang-runner FILE.tsl...\n";
    return 2;
  }
  return tsl::runOnLargeStack([&] {
    int status = 0;
    for (int i = 1; i < argc; ++i) status |= runFile(argv[i]);
    return status;
  });
}
