// eval/EngineTargets.cpp — the targets through the embedding API: their statistics, the
// flags, commands and REPL commands they declare (compiler::BackendInfo). Nothing here
// names a target.
#include "tsl/tsl.h"

#include "compiler/Compiler.h"
#include "eval/Evaluator.h"

#include <iostream>

namespace tsl {

namespace {

/// A flag's declaration (the first target declaring it), or null.
const compiler::BackendOption* findFlag(std::string_view name) {
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendOption& option : info->options)
      if (option.flag && option.name == name) return &option;
  return nullptr;
}

/// The flags of the engine that `info` declares.
compiler::FlagValues flagsOf(const Evaluator& evaluator, const compiler::BackendInfo& info) {
  compiler::FlagValues out;
  for (const auto& [name, value] : const_cast<Evaluator&>(evaluator).compileDebug().flags)
    for (const compiler::BackendOption& option : info.options)
      if (option.flag && option.name == name) out.emplace_back(name, value);
  return out;
}

} // namespace

std::vector<std::string> Engine::targets() { return compiler::targetNames(); }

std::string Engine::statistics(std::string_view target, bool total) {
  return impl_->compiler().backend(target).statisticsJson(total);
}

std::vector<Engine::TargetFlag> Engine::targetFlags() {
  std::vector<TargetFlag> out;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendOption& option : info->options)
      if (option.flag) out.push_back({option.name, option.valueOptional, option.command, option.usage, option.help});
  return out;
}

std::string Engine::checkTargetFlag(std::string_view name, const std::string& value) {
  const compiler::BackendOption* option = findFlag(name);
  if (!option) fail(ErrorKind::Value, "no target takes --", name);
  if (!option->parse) return value;
  compiler::OptionInput input;
  input.text = value;
  input.printed = value;
  return option->parse(input, "tsl");
}

void Engine::startRun() {
  for (const compiler::BackendInfo* info : compiler::backendInfos()) {
    const compiler::FlagValues flags = flagsOf(*impl_, *info);
    if (!flags.empty()) impl_->compiler().backend(info->name).beforeRun(flags);
  }
}

void Engine::finishRun() {
  for (const compiler::BackendInfo* info : compiler::backendInfos()) {
    const compiler::FlagValues flags = flagsOf(*impl_, *info);
    if (flags.empty()) continue;
    for (const compiler::Output& output : impl_->compiler().backend(info->name).afterRun(flags)) {
      if (output.path.empty()) std::cerr << output.text << std::flush;
      else writeFileAtomically(output.path, output.text);
    }
  }
}

std::vector<Engine::TargetCommand> Engine::targetCommands() {
  std::vector<TargetCommand> out;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendCommand& command : info->commands) out.push_back({command.name, command.usage, command.help});
  return out;
}

int Engine::runTargetCommand(std::string_view name, const std::vector<std::string>& args) {
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendCommand& command : info->commands) {
      if (command.name != name) continue;
      compiler::BackendCommand::Context cx;
      cx.args = args;
      cx.flags = flagsOf(*impl_, *info);
      cx.out = &std::cout;
      cx.addSource = [this](std::string_view file, std::string text) { impl_->sources().add(file, std::move(text)); };
      cx.writeFile = [](const std::string& path, std::string_view bytes) { writeFileAtomically(path, bytes); };
      cx.readSource = [](const std::string& path) { return readSource(path); };
      return command.run(cx);
    }
  fail(ErrorKind::Value, "no command '", name, "'");
}

std::vector<Engine::ReplCommand> Engine::replCommands() {
  std::vector<ReplCommand> out;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendBuiltin& b : info->builtins)
      if (!b.replCommand.empty())
        out.push_back({b.replCommand, b.name, b.replHelp, b.kind != compiler::BackendBuiltin::Kind::Statistics &&
                                                            b.kind != compiler::BackendBuiltin::Kind::Trace});
  return out;
}

std::vector<Engine::EmitKind> Engine::emitKinds() {
  std::vector<EmitKind> out;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendEmit& e : info->emits) out.push_back({e.name, info->name, e.binary, e.help});
  return out;
}

} // namespace tsl
