// runtime/Io.cpp — tensors to and from files: NumPy's .npy, CSV (gzip by suffix), text.
//
// Reading trusts nothing in the file: a .npy header is parsed by a small strict parser
// (not an evaluator), its shape is checked against Shape's limits and the data length
// against the file's size before any tensor is allocated, so a hostile or damaged file
// costs at most its own size in memory and ends in an io error naming it. Writing goes
// through writeAtomically(): a fresh temporary beside the target, written in full, synced
// and renamed over it; on any failure the temporary is unlinked before the error is raised.
#include "runtime/Layout.h"
#include "runtime/Io.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Interrupt.h"
#include "runtime/Views.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <span>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>
#include <zlib.h>

namespace tsl {
namespace {

// ---- Files ----

/// An errno as a lowercase phrase ("no such file or directory"), per the message style.
std::string errnoText(int err) {
  std::string text = std::generic_category().message(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

template <typename... Parts>
[[noreturn]] void ioFail(const std::string& path, const Parts&... parts) {
  fail(ErrorKind::Io, path, ": ", parts...);
}

/// Closes the descriptor on every path out of a function, including errors.
struct FileDescriptor {
  int fd = -1;
  explicit FileDescriptor(int f) : fd(f) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  FileDescriptor& operator=(FileDescriptor&&) = delete;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

/// What a file that is not a regular one is, for messages.
const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Opens `path` for reading. Only regular files are read: a device or FIFO may never end
/// (/dev/zero) or never begin (a FIFO without a writer would block the open itself, so
/// the open does not wait), and a program cannot be interrupted while it waits.
FileDescriptor openForReading(const std::string& path, struct stat& info) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (file.fd < 0) ioFail(path, "cannot open: ", errnoText(errno));
  if (::fstat(file.fd, &info) != 0) ioFail(path, "cannot read: ", errnoText(errno));
  if (S_ISDIR(info.st_mode)) ioFail(path, "is a directory, not a file");
  if (!S_ISREG(info.st_mode)) ioFail(path, "is ", fileKind(info.st_mode), ", not a regular file");
  ::fcntl(file.fd, F_SETFL, ::fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
  return file;
}

/// Reads up to `size` bytes, fewer only at the end of the file.
size_t readUpTo(int fd, char* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    checkInterrupt();
    const ssize_t n = ::read(fd, out + done, std::min<size_t>(size - done, size_t(1) << 24));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ioFail(path, "cannot read: ", errnoText(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// ---- Temporaries of writes in progress ----

/// The temporaries being written, for removePendingTemporaries() to delete from a signal
/// handler: fixed slots of plain memory, each published only once its path is complete.
struct PendingSlot {
  std::atomic<int> state{0}; ///< 0 free, 1 being filled or emptied, 2 holds a path
  char path[PATH_MAX];
};
PendingSlot pendingSlots[64];

/// Registers `path` while it exists; a path that does not fit is simply not registered.
class PendingTemporary {
public:
  explicit PendingTemporary(const std::string& path) {
    if (path.size() >= PATH_MAX) return;
    for (PendingSlot& slot : pendingSlots) {
      int expected = 0;
      if (!slot.state.compare_exchange_strong(expected, 1)) continue;
      std::memcpy(slot.path, path.c_str(), path.size() + 1);
      slot.state.store(2, std::memory_order_release);
      slot_ = &slot;
      return;
    }
  }
  ~PendingTemporary() {
    if (slot_) slot_->state.store(0, std::memory_order_release);
  }
  PendingTemporary(const PendingTemporary&) = delete;
  PendingTemporary& operator=(const PendingTemporary&) = delete;

private:
  PendingSlot* slot_ = nullptr;
};

/// Removes temporaries that killed processes left for `target` (".NAME.tmp-PID-N" whose
/// PID no longer runs), so a SIGKILL costs disk space only until the next write.
void removeStaleTemporaries(const std::filesystem::path& folder, const std::string& name) {
  const std::string prefix = "." + name + ".tmp-";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (!entry.starts_with(prefix)) continue;
    const char* digits = entry.c_str() + prefix.size();
    char* after = nullptr;
    const long pid = std::strtol(digits, &after, 10);
    if (after == digits || *after != '-' || pid <= 0) continue;
    if (pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove(it->path(), ignored);
  }
}

/// Writes every piece to `fd`, checking for an interrupt between chunks; false (with
/// errno set) on a write error.
bool writeAll(int fd, std::span<const std::string_view> pieces) {
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      checkInterrupt();
      const ssize_t n = ::write(fd, piece.data(), std::min<size_t>(piece.size(), size_t(1) << 24));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      piece.remove_prefix(static_cast<size_t>(n));
    }
  }
  return true;
}

/// Writes to a character device or FIFO as it is: there is no file to replace.
void writeDirectly(const std::string& path, std::span<const std::string_view> pieces) {
  // Not waiting in open: a FIFO without a reader is an error, not a hang.
  FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (file.fd < 0) {
    if (errno == ENXIO) ioFail(path, "cannot write: no process is reading the FIFO");
    ioFail(path, "cannot open for writing: ", errnoText(errno));
  }
  ::fcntl(file.fd, F_SETFL, ::fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
  if (!writeAll(file.fd, pieces)) ioFail(path, "cannot write: ", errnoText(errno));
  const int fd = std::exchange(file.fd, -1);
  if (::close(fd) != 0) ioFail(path, "cannot write: ", errnoText(errno));
}

/// Where a write to `path`, which does not exist, creates the file: the end of a chain of
/// dangling symbolic links, or `path` itself.
std::string creationTarget(const std::string& path) {
  std::filesystem::path current(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current.string();
    std::error_code ec;
    std::filesystem::path link = std::filesystem::read_symlink(current, ec);
    if (ec) ioFail(path, "cannot write: ", errnoText(ec.value()));
    current = link.is_absolute() ? link : current.parent_path() / link;
  }
  ioFail(path, "cannot write: too many levels of symbolic links");
}

/// Writes `pieces` to `path`. A regular file (after following symbolic links, which stay
/// links) is replaced atomically: a temporary in the same folder (a rename is atomic only
/// within one file system), written in full, synced and renamed over it, keeping the old
/// file's permissions. A character device or FIFO is written directly; any other special
/// file is refused. On any failure the temporary is removed and an existing file keeps
/// its contents.
void writeAtomically(const std::string& path, std::span<const std::string_view> pieces) {
  if (!std::filesystem::path(path).has_filename()) ioFail(path, "cannot write: not a file name");
  struct stat existing {};
  std::string targetPath;
  bool exists = false;
  if (::stat(path.c_str(), &existing) == 0) {
    if (S_ISCHR(existing.st_mode) || S_ISFIFO(existing.st_mode)) return writeDirectly(path, pieces);
    if (S_ISDIR(existing.st_mode)) ioFail(path, "cannot write: is a directory");
    if (!S_ISREG(existing.st_mode)) ioFail(path, "cannot write: is ", fileKind(existing.st_mode), ", not a regular file");
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
    targetPath = ec ? path : canonical.string();
    exists = true;
  } else if (errno == ENOENT) {
    targetPath = creationTarget(path);
  } else {
    ioFail(path, "cannot write: ", errnoText(errno));
  }
  const std::filesystem::path target(targetPath);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  removeStaleTemporaries(folder, target.filename().string());
  // Hidden and named after the target, so a temporary orphaned by a killed process is
  // recognisable. O_EXCL makes a clash with another writer a retry, never shared data;
  // mode 0666 lets the umask give a new file the permissions any new file would get.
  static std::atomic<unsigned> counter{0};
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temporary = (folder / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                           "-" + std::to_string(counter++)))
                    .string();
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    ioFail(path, "cannot create a temporary file in '", folder.string(), "': ", errnoText(errno));
  PendingTemporary pending(temporary);
  auto abandon = [&](const char* what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    ioFail(path, what, errnoText(err));
  };
  try {
    if (!writeAll(fd, pieces)) abandon("cannot write: ", errno);
  } catch (...) { // interrupted
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (exists && ::fchmod(fd, existing.st_mode & 07777) != 0) abandon("cannot set permissions: ", errno);
  // Synced before the rename, so a crash cannot leave the new name on missing data.
  if (::fsync(fd) != 0 && errno != EINVAL) abandon("cannot write: ", errno);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("cannot write: ", errno);
  if (::rename(temporary.c_str(), targetPath.c_str()) != 0) abandon("cannot replace: ", errno);
}

// ---- .npy ----

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;
/// NumPy's own headers are under 200 bytes for TSL's ranks; a much longer one is damage.
constexpr size_t kMaxNpyHeader = size_t(1) << 20;

struct NpyDescr {
  const char* code; ///< NumPy's kind and item size, as in "<f4"
  DType dtype;
};
constexpr NpyDescr kNpyDescrs[] = {{"b1", DType::Bool}, {"i4", DType::I32}, {"i8", DType::I64},
                                   {"f2", DType::F16},  {"f4", DType::F32}, {"f8", DType::F64}};

struct NpyHeader {
  DType dtype = DType::F32;
  bool swapBytes = false; ///< stored in the other byte order than this machine's
  bool fortranOrder = false;
  Shape shape;
};

/// Parses the header NumPy writes, a Python dict literal such as
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
/// accepting exactly its three keys in any order, either quote, and Python's spacing.
class NpyHeaderParser {
public:
  NpyHeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen[3] = {false, false, false};
    expect('{');
    while (!peek('}')) {
      const std::string key = parseString();
      expect(':');
      const int index = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (index < 0) corrupt("unknown key '", key, "'");
      if (seen[index]) corrupt("key '", key, "' appears twice");
      seen[index] = true;
      if (index == 0)
        parseDescr(header);
      else if (index == 1)
        header.fortranOrder = parseBool();
      else
        header.shape = parseShape();
      if (!peek('}')) expect(',');
    }
    expect('}');
    skipSpace();
    if (pos_ != text_.size()) corrupt("unexpected text after the dictionary");
    if (!seen[0] || !seen[1] || !seen[2])
      corrupt("missing key '", !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape", "'");
    return header;
  }

private:
  template <typename... Parts>
  [[noreturn]] void corrupt(const Parts&... parts) {
    ioFail(path_, "corrupt .npy header: ", parts...);
  }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) corrupt("expected '", c, "' at byte ", pos_);
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      corrupt("expected a quoted string at byte ", pos_);
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) corrupt("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    if (value.find('\\') != std::string::npos) corrupt("escapes in strings are not supported");
    pos_ = end + 1;
    return value;
  }
  bool parseBool() {
    skipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    corrupt("fortran_order must be True or False");
  }
  void parseDescr(NpyHeader& header) {
    if (peek('[')) corrupt("structured dtypes are not supported");
    const std::string descr = parseString();
    const std::string supported = "supported: bool, int32, int64, float16, float32, float64";
    if (descr.size() != 3) ioFail(path_, "unsupported dtype '", descr, "' (", supported, ")");
    const std::string_view code = std::string_view(descr).substr(1);
    const NpyDescr* found = nullptr;
    for (const NpyDescr& d : kNpyDescrs)
      if (code == d.code) found = &d;
    const char order = descr[0];
    // '|' means "byte order does not apply", which is only true of one-byte items.
    const bool validOrder =
        order == '<' || order == '>' || order == '=' || (order == '|' && code == "b1");
    if (!found || !validOrder) ioFail(path_, "unsupported dtype '", descr, "' (", supported, ")");
    header.dtype = found->dtype;
    header.swapBytes = dtypeSize(found->dtype) > 1 &&
                       ((order == '<' && std::endian::native == std::endian::big) ||
                        (order == '>' && std::endian::native == std::endian::little));
  }
  Shape parseShape() {
    expect('(');
    std::vector<int64_t> dims;
    bool trailingComma = false;
    while (!peek(')')) {
      if (dims.size() == static_cast<size_t>(Shape::kMaxRank))
        ioFail(path_, "shape has more than ", Shape::kMaxRank, " dimensions, TSL's maximum rank");
      skipSpace();
      int64_t dim = 0;
      const char* begin = text_.data() + pos_;
      const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), dim);
      if (ec == std::errc::result_out_of_range) corrupt("dimension too large in shape");
      if (ec != std::errc()) corrupt("expected an integer in shape at byte ", pos_);
      if (dim < 0) corrupt("negative dimension ", dim, " in shape");
      pos_ += static_cast<size_t>(end - begin);
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_; // Python 2's long suffix
      dims.push_back(dim);
      trailingComma = peek(',');
      if (trailingComma)
        ++pos_;
      else if (!peek(')'))
        corrupt("expected ',' or ')' in shape at byte ", pos_);
    }
    ++pos_;
    // In Python "(3)" is the integer 3, not a tuple: NumPy rejects it too.
    if (dims.size() == 1 && !trailingComma) corrupt("shape must be a tuple");
    return Shape(std::span<const int64_t>(dims));
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

void swapElementBytes(char* data, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with spaces and a
/// newline so the data starts 64-byte aligned (NumPy's ARRAY_ALIGN), with the preamble.
std::string npyPreambleAndHeader(DType dtype, const Shape& shape) {
  std::string code;
  for (const NpyDescr& d : kNpyDescrs)
    if (d.dtype == dtype) code = d.code;
  TSL_ASSERT(!code.empty(), "saveNpy: no .npy code for ", dtypeName(dtype));
  const char order = dtype == DType::Bool                         ? '|'
                     : std::endian::native == std::endian::little ? '<'
                                                                  : '>';
  std::string dict = cat("{'descr': '", order, code, "', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < shape.rank(); ++i) dict += cat(i ? ", " : "", shape[i]);
  dict += shape.rank() == 1 ? ",), }" : "), }";
  // Version 1.0 stores the header length in 2 bytes; a longer header needs 2.0's 4 bytes.
  for (const size_t lengthBytes : {size_t(2), size_t(4)}) {
    const size_t preamble = kNpyMagicSize + 2 + lengthBytes;
    const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
    const size_t headerLength = total - preamble;
    if (lengthBytes == 2 && headerLength > 0xFFFF) continue;
    std::string out(kNpyMagic, kNpyMagicSize);
    out += static_cast<char>(lengthBytes == 2 ? 1 : 2);
    out += '\0';
    for (size_t i = 0; i < lengthBytes; ++i)
      out += static_cast<char>((headerLength >> (8 * i)) & 0xFF);
    out += dict;
    out.append(headerLength - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  fail(ErrorKind::Internal, "saveNpy: the .npy header does not fit");
}

// ---- CSV ----

/// Bytes of a plain or gzip-compressed file, in chunks.
class ChunkReader {
public:
  explicit ChunkReader(const std::string& path) : path_(path), file_(openForReading(path, info_)) {
    if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) return;
    gz_ = gzdopen(file_.fd, "rb");
    if (!gz_) ioFail(path, "cannot open: out of memory");
    file_.fd = -1; // gzclose closes it now
    gzbuffer(gz_, 1 << 16);
    // zlib would read a file without the gzip magic as plain text; the name says gzip.
    if (gzdirect(gz_)) {
      gzclose(gz_);
      gz_ = nullptr;
      ioFail(path, "not a gzip file (the name ends in .gz)");
    }
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;
  ~ChunkReader() {
    if (gz_) gzclose(gz_);
  }

  /// Up to `size` bytes; 0 only at the end of the data.
  size_t read(char* out, size_t size) {
    checkInterrupt();
    if (!gz_) return readUpTo(file_.fd, out, size, path_);
    const int n = gzread(gz_, out, static_cast<unsigned>(size));
    int code = Z_OK;
    std::string_view message = gzerror(gz_, &code);
    // A file cut short reads to its end and then reports Z_BUF_ERROR.
    if (code == Z_BUF_ERROR) ioFail(path_, "truncated gzip data");
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      if (message.starts_with("<fd:"))
        message.remove_prefix(std::min(message.size(), message.find(": ") + 2));
      ioFail(path_, "corrupt gzip data: ", message);
    }
    return static_cast<size_t>(n);
  }

private:
  const std::string& path_;
  struct stat info_ {};
  FileDescriptor file_;
  gzFile gz_ = nullptr;
};

/// A field for a message: quoted, at most 24 characters, unprintable bytes as '?'.
std::string quoteField(std::string_view field) {
  std::string out = "'";
  for (size_t i = 0; i < field.size() && i < 24; ++i)
    out += std::isprint(static_cast<unsigned char>(field[i])) ? field[i] : '?';
  return out + (field.size() > 24 ? "...'" : "'");
}

/// A decimal float: "1.5", "-2e-3", "inf", "nan". Magnitudes beyond double become ±inf
/// or ±0 (as Python's float() gives), where from_chars would only report "out of range".
template <typename F>
bool parseFloat(const char* begin, const char* end, F& out) {
  const auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ptr != end || ec == std::errc::invalid_argument) return false;
  if (ec != std::errc::result_out_of_range) return true;
  long double wide = 0;
  const auto [widePtr, wideEc] = std::from_chars(begin, end, wide);
  if (wideEc == std::errc()) {
    out = static_cast<F>(wide);
    return widePtr == end;
  }
  const std::string_view text(begin, static_cast<size_t>(end - begin));
  const size_t exponent = text.find_first_of("eE");
  const bool tiny = exponent != std::string_view::npos
                        ? text.substr(exponent + 1, 1) == "-"
                        : text.find_first_not_of("-0") == text.find('.');
  const F magnitude = tiny ? F(0) : std::numeric_limits<F>::infinity();
  out = text[0] == '-' ? -magnitude : magnitude;
  return true;
}

/// One field as T. Integer dtypes read integers exactly through i64; other numbers are
/// read as doubles and converted by the runtime's rules (truncation, saturation).
template <typename T>
bool parseField(std::string_view field, T& out) {
  const char* begin = field.data();
  const char* end = begin + field.size();
  if (begin != end && *begin == '+') {
    ++begin; // Python and NumPy accept a leading '+'; from_chars does not
    if (begin == end || *begin == '+' || *begin == '-') return false;
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return parseFloat(begin, end, out); // rounded once, straight from decimal
  } else {
    if constexpr (!kIsFloatElement<T>) {
      int64_t integer = 0;
      const auto [ptr, ec] = std::from_chars(begin, end, integer);
      if (ec == std::errc() && ptr == end) {
        out = convertElement<T>(integer);
        return true;
      }
    }
    double value = 0;
    if (!parseFloat(begin, end, value)) return false;
    out = convertElement<T>(value);
    return true;
  }
}

template <typename T>
Tensor parseCsv(ChunkReader& reader, const std::string& path, const CsvOptions& options) {
  // std::vector<bool> packs bits; bool elements are one byte each, as in a tensor.
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
  std::vector<Stored> values;
  int64_t columns = -1, rows = 0, lineNumber = 0, firstRowLine = 0;

  auto parseLine = [&](std::string_view line) {
    ++lineNumber;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1); // Windows line ends
    if (options.skipHeader && lineNumber == 1) return;
    auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
    if (std::all_of(line.begin(), line.end(), isSpace)) return;
    // Columns count bytes from 1: everything before a reported column is ASCII (spaces,
    // commas and numbers), so bytes and characters agree.
    auto where = [&](size_t offset) { return cat(path, ":", lineNumber, ":", offset + 1, ": "); };
    int64_t field = 0;
    size_t pos = 0;
    while (true) {
      while (pos < line.size() && isSpace(line[pos])) ++pos;
      const size_t start = pos;
      size_t stop = std::min(line.find(',', pos), line.size());
      pos = stop;
      while (stop > start && isSpace(line[stop - 1])) --stop;
      ++field;
      if (columns >= 0 && field > columns)
        fail(ErrorKind::Io, where(start), "more than ", columns, " fields (line ", firstRowLine,
             " has ", columns, ")");
      const std::string_view text = line.substr(start, stop - start);
      if (text.empty()) fail(ErrorKind::Io, where(start), "field ", field, " is empty");
      T value{};
      if (!parseField(text, value))
        fail(ErrorKind::Io, where(start), "field ", field, " is not a number: ", quoteField(text));
      values.push_back(static_cast<Stored>(value));
      if (pos == line.size()) break;
      ++pos; // the comma
    }
    if (columns < 0) {
      columns = field;
      firstRowLine = lineNumber;
    } else if (field < columns) {
      fail(ErrorKind::Io, where(line.size()), field, field == 1 ? " field" : " fields",
           ", expected ", columns, " (as on line ", firstRowLine, ")");
    }
    ++rows;
  };

  std::string pending;
  std::vector<char> chunk(1 << 16);
  while (const size_t n = reader.read(chunk.data(), chunk.size())) {
    pending.append(chunk.data(), n);
    size_t start = 0;
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1)
      parseLine(std::string_view(pending).substr(start, newline - start));
    pending.erase(0, start);
  }
  if (!pending.empty()) parseLine(pending);

  Shape shape;
  try {
    shape = Shape{rows, std::max<int64_t>(columns, 0)};
    (void)shape.numel();
  } catch (const Error& e) {
    ioFail(path, e.message());
  }
  Tensor out = Tensor::empty(dtypeOf<T>(), shape);
  if (!values.empty())
    std::memcpy(out.mutableData(), values.data(), values.size() * sizeof(Stored));
  return out;
}

} // namespace

// ---- Public functions ----

Tensor loadNpy(const std::string& path) {
  struct stat info {};
  FileDescriptor file = openForReading(path, info);
  if (!S_ISREG(info.st_mode)) ioFail(path, "not a regular file");
  return decodeNpy(path, static_cast<size_t>(info.st_size),
                   [&](char* out, size_t size) { return readUpTo(file.fd, out, size, path); });
}

Tensor decodeNpy(const std::string& path, size_t fileSize, const std::function<size_t(char*, size_t)>& read) {
  char preamble[12] = {};
  const size_t got = read(preamble, std::min<size_t>(fileSize, 10));
  if (std::memcmp(preamble, kNpyMagic, std::min(got, kNpyMagicSize)) != 0 || got == 0)
    ioFail(path, "not a .npy file (no \\x93NUMPY magic)");
  if (got < 10) ioFail(path, "truncated: the file ends inside the .npy preamble");
  const int major = static_cast<unsigned char>(preamble[6]),
            minor = static_cast<unsigned char>(preamble[7]);
  if (!(major >= 1 && major <= 3 && minor == 0))
    ioFail(path, "unsupported .npy format version ", major, ".", minor,
           " (supported: 1.0, 2.0, 3.0)");
  // 1.0 stores the header length in 2 bytes (little-endian), 2.0 and 3.0 in 4.
  size_t preambleSize = 10;
  if (major >= 2) {
    if (read(preamble + 10, 2) < 2)
      ioFail(path, "truncated: the file ends inside the .npy preamble");
    preambleSize = 12;
  }
  size_t headerLength = 0;
  for (size_t i = preambleSize; i-- > 8;)
    headerLength = headerLength << 8 | static_cast<unsigned char>(preamble[i]);
  if (headerLength > kMaxNpyHeader)
    ioFail(path, "corrupt .npy header: its length ", headerLength, " is implausible");
  if (preambleSize + headerLength > fileSize)
    ioFail(path, "truncated: expected a header of ", headerLength, " bytes, found ",
           fileSize - preambleSize);
  std::string headerText(headerLength, '\0');
  if (read(headerText.data(), headerLength) < headerLength)
    ioFail(path, "truncated: the file ends inside the .npy header");

  NpyHeader header;
  int64_t count = 0;
  try {
    header = NpyHeaderParser(headerText, path).parse();
    count = header.shape.numel();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Io) throw;
    ioFail(path, "corrupt .npy header: ", e.message()); // Shape's value errors
  }
  const size_t width = dtypeSize(header.dtype);
  const size_t expected = static_cast<size_t>(count) * width; // at most 2^43: no overflow
  const size_t found = fileSize - preambleSize - headerLength;
  if (found < expected)
    ioFail(path, "truncated: expected ", expected, " bytes of data, found ", found);
  if (found > expected)
    ioFail(path, "corrupt: expected ", expected, " bytes of data, found ", found,
           " (extra bytes after the array)");

  // Fortran order is C order of the reversed shape; transposing that view gives the array.
  Shape stored = header.shape;
  if (header.fortranOrder) std::reverse(&stored[0], &stored[0] + stored.rank());
  Tensor out = Tensor::empty(header.dtype, stored);
  char* data = out.mutableData();
  if (read(data, expected) < expected)
    ioFail(path, "truncated: the file shrank while it was read");
  if (header.swapBytes) swapElementBytes(data, static_cast<size_t>(count), width);
  // Any byte but 0 is true to NumPy; a C++ bool must hold exactly 0 or 1.
  if (header.dtype == DType::Bool)
    for (size_t i = 0; i < expected; ++i) data[i] = data[i] != 0;
  if (header.fortranOrder && header.shape.rank() > 1) out = contiguous(transpose(out, {}));
  return out;
}

NpyImage npyImage(const Tensor& x) {
  if (x.blocked()) return npyImage(plain(x));
  // bf16 has no NumPy dtype; every bf16 value is exactly a float32. Weak literals are
  // stored as their concrete dtype (weak floats as f32), like any stored value.
  Tensor t = x;
  if (x.weak()) t = astype(x, concreteDType(x.typeKey()));
  if (t.dtype() == DType::BF16) t = astype(t, DType::F32);
  t = contiguous(t);
  return {npyPreambleAndHeader(t.dtype(), t.shape()), t};
}

void saveNpy(const std::string& path, const Tensor& x) {
  const NpyImage image = npyImage(x);
  const std::string_view pieces[] = {image.header, image.bytes()};
  writeAtomically(path, pieces);
}

Tensor loadCsv(const std::string& path, const CsvOptions& options) {
  ChunkReader reader(path);
  return dispatchDType(options.dtype,
                       [&](auto tag) { return parseCsv<decltype(tag)>(reader, path, options); });
}

std::string readTextFile(const std::string& path, size_t maxBytes) {
  struct stat info {};
  FileDescriptor file = openForReading(path, info);
  const auto size = static_cast<size_t>(info.st_size);
  auto tooLarge = [&](size_t bytes) {
    ioFail(path, "is ", bytes, " bytes, more than the limit of ", maxBytes, " bytes for this file");
  };
  if (size > maxBytes) tooLarge(size);
  std::string contents;
  contents.reserve(size);
  char chunk[1 << 16];
  while (const size_t n = readUpTo(file.fd, chunk, sizeof chunk, path)) {
    if (contents.size() + n > maxBytes) tooLarge(contents.size() + n); // it grew while read
    contents.append(chunk, n);
  }
  return contents;
}

std::string readTextStream(std::FILE* stream, const std::string& name, size_t maxBytes) {
  std::string contents;
  char chunk[1 << 16];
  for (;;) {
    checkInterrupt();
    const size_t n = std::fread(chunk, 1, sizeof chunk, stream);
    if (contents.size() + n > maxBytes)
      ioFail(name, "is more than the limit of ", maxBytes, " bytes for this file");
    contents.append(chunk, n);
    if (n < sizeof chunk) break;
  }
  if (std::ferror(stream)) ioFail(name, "cannot read: ", errnoText(errno));
  return contents;
}

void removePendingTemporaries() noexcept {
  for (PendingSlot& slot : pendingSlots)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
}

void writeFileAtomically(const std::string& path, std::string_view contents) {
  writeAtomically(path, std::span<const std::string_view>(&contents, 1));
}

} // namespace tsl
