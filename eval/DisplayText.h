// eval/DisplayText.h — text helpers of rich display (eval/Display.cpp): base64 and an SVG
// picture as the forms notebooks show; escaping is runtime/Format.h's escapeXml.
#pragma once

#include "runtime/Format.h" // escapeXml: text inside HTML and SVG

#include "tsl/Display.h"

#include <string>
#include <string_view>

namespace tsl {

/// `bytes` in base64 (RFC 4648, padded).
std::string base64(std::string_view bytes);
/// SVG from its `<svg` on, without an XML prolog or doctype (which nbconvert's HTML export
/// rejects); empty if there is no `<svg`.
std::string bareSvg(std::string_view svg);
/// Adds an SVG picture to `bundle`: as image/svg+xml, and as an HTML image with the SVG as
/// a data URL (exporters that sanitise inline SVG, nbconvert 6, keep an image).
void addSvg(MimeBundle& bundle, std::string_view svg);

} // namespace tsl
