// ir/Attributes.h — typed operation attributes as text, and back.
//
// Attributes are typed structs (runtime/Ops.h); the text form is a dictionary of named
// fields, `{axes = [0, 1], keepdims = true}`. Each struct's fields are listed once
// (Attributes.cpp) and both directions follow from that list.
#pragma once

#include "runtime/Ops.h"

#include <string>
#include <utility>
#include <vector>

namespace tsl::ir {

/// A parsed attribute value: a number, boolean, string, identifier (dtypes), `none`, or a
/// list of values.
struct AttrValue {
  enum class Kind : uint8_t { Int, Float, Bool, String, Ident, None, List };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  std::string text; ///< String and Ident
  std::vector<AttrValue> list;
};

using AttrDict = std::vector<std::pair<std::string, AttrValue>>;

/// The fields of an operation's attributes (empty for NoAttrs).
AttrDict attrsToDict(const OpAttrs& attrs);
/// The attributes of `kind` from fields; a syntax error naming the field if one is
/// missing, unknown or of the wrong kind.
OpAttrs attrsFromDict(OpKind kind, const AttrDict& fields);
/// "{a = 1, b = [2, 3]}" (empty string for no fields).
std::string printAttrs(const OpAttrs& attrs);
std::string printAttrValue(const AttrValue& value);

} // namespace tsl::ir
