// parser/Diagnostics.cpp — file:line:col headlines, source lines and carets.
#include "parser/Diagnostics.h"

#include <algorithm>

namespace tsl {

void SourceManager::add(std::string_view file, std::string text) {
  texts_.insert_or_assign(std::string(file), std::move(text));
}

uint32_t SourceManager::append(std::string_view file, std::string_view text) {
  std::string& transcript = texts_[std::string(file)];
  const auto firstLine = static_cast<uint32_t>(std::count(transcript.begin(), transcript.end(), '\n')) + 1;
  transcript += text;
  if (transcript.empty() || transcript.back() != '\n') transcript += '\n';
  return firstLine;
}

const std::string* SourceManager::text(const Span& span) const {
  if (!span.file) return nullptr;
  auto it = texts_.find(*span.file);
  return it == texts_.end() ? nullptr : &it->second;
}

std::string renderHeadline(const Error& error) {
  std::string out;
  const Span& span = error.span();
  if (span.known()) out += cat(span.fileName(), ":", span.line, ":", span.col, ": ");
  out += error.what();
  out += '\n';
  return out;
}

std::string renderCaret(std::string_view text, const Span& span) {
  // Find the span's line.
  size_t begin = 0;
  for (uint32_t line = 1; line < span.line; ++line) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return {};
    ++begin;
  }
  size_t end = text.find('\n', begin);
  std::string_view line = text.substr(begin, end == std::string_view::npos ? text.npos : end - begin);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  // Walk code points up to the start column, copying tabs so the caret lines up.
  std::string marker;
  uint32_t col = 1;
  size_t i = 0;
  for (; i < line.size() && col < span.col; ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if ((byte & 0xC0) == 0x80) continue;
    marker += line[i] == '\t' ? '\t' : ' ';
    ++col;
  }
  marker += '^';
  const uint32_t last = span.endLine == span.line ? span.endCol : UINT32_MAX;
  for (++i, ++col; i < line.size() && col <= last; ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if ((byte & 0xC0) == 0x80) continue;
    marker += '~';
    ++col;
  }
  return cat(line, "\n", marker, "\n");
}

std::string SourceManager::render(const Error& error) const {
  std::string out = renderHeadline(error);
  if (const std::string* source = text(error.span())) out += renderCaret(*source, error.span());
  out += error.notes();
  return out;
}

} // namespace tsl
