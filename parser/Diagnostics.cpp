// parser/Diagnostics.cpp — file:line:col headlines, source lines and carets.
#include "parser/Diagnostics.h"

#include <algorithm>
#include <vector>

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

  // The line's code points, as byte ranges.
  std::vector<std::string_view> points;
  for (size_t i = 0; i < line.size();) {
    size_t next = i + 1;
    while (next < line.size() && (static_cast<unsigned char>(line[next]) & 0xC0) == 0x80) ++next;
    points.push_back(line.substr(i, next - i));
    i = next;
  }
  const size_t first = span.col == 0 ? 0 : span.col - 1; // 0-based code point of the caret
  const size_t last = span.endLine == span.line && span.endCol >= span.col ? span.endCol - 1 : points.size();
  // A long line shows a window around the caret.
  constexpr size_t kBefore = 60, kWidth = 160;
  const size_t from = first > kBefore ? first - kBefore : 0;
  const size_t to = std::min(points.size(), from + kWidth);
  std::string shown = from > 0 ? "..." : "";
  std::string marker(shown.size(), ' ');
  for (size_t i = from; i < to; ++i) {
    const auto byte = static_cast<unsigned char>(points[i][0]);
    const bool control = points[i].size() == 1 && (byte < 0x20 || byte == 0x7F) && byte != '\t';
    shown += control ? std::string_view("?") : points[i]; // never echo control bytes
    if (i < first) marker += byte == '\t' ? '\t' : ' ';
    else if (i == first) marker += '^';
    else if (i <= last) marker += '~';
  }
  if (first >= to) marker += '^'; // the caret sits past the end of the line
  if (to < points.size()) shown += "...";
  return cat(shown, "\n", marker, "\n");
}

std::string SourceManager::render(const Error& error) const {
  std::string out = renderHeadline(error);
  if (const std::string* source = text(error.span())) out += renderCaret(*source, error.span());
  out += error.notes();
  return out;
}

} // namespace tsl
