// ir/Parser.h — reading the IR's text form (as ir/Printer.h writes it).
//
// Malformed text is a syntax error at the line and column of the IR text where it went
// wrong; nothing else is ever thrown. Parsing does not verify: ir/Verifier.h does.
#pragma once

#include "ir/IR.h"

#include <memory>
#include <string_view>

namespace tsl::ir {

/// Parses a module (one or more functions). `fileName` names the text in errors.
std::unique_ptr<Module> parseModule(std::string_view text, std::string_view fileName = "<ir>");

} // namespace tsl::ir
