// tests/unit/runtime/IoTest.cpp — .npy, CSV and text files: round trips, damage, failures.
//
// Files live in a fresh temporary folder per test. Damaged inputs are built byte by byte,
// so each test names exactly what is wrong; the truncation and corruption sweeps check
// that no damage at all gets past the reader as anything but an io error.
#include "runtime/Io.h"
#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Views.h"

#include <csignal>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

using namespace tsl;
namespace fs = std::filesystem;

namespace {

/// A folder that exists for the life of one test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("tsl-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(path), {}));
  }
};

void writeBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Reads a test's text file (no test file comes near the limit).
std::string readTextFile(const std::string& path) { return tsl::readTextFile(path, size_t(1) << 30); }

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// The message of the io error `fn` throws, or a description of what happened instead.
template <typename Fn>
std::string ioErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::Io ? e.message() : cat("(not an io error: ", e.what(), ")");
  } catch (const std::exception& e) {
    return cat("(not a tsl::Error: ", e.what(), ")");
  }
  return "(no error)";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

/// A .npy file around `dict` (padded as NumPy pads it) followed by `data`.
std::string npyBytes(const std::string& dict, std::string_view data, int major = 1) {
  const size_t lengthBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + lengthBytes + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + std::string(data);
}

template <typename T>
std::string bytesOf(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

/// A contiguous tensor with pseudo-random bits (bool: 0 or 1).
Tensor randomTensor(DType dtype, const Shape& shape, uint32_t seed) {
  Tensor t = Tensor::empty(dtype, shape);
  std::mt19937 rng(seed);
  char* p = t.mutableData();
  for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.elementSize(); ++i)
    p[i] = static_cast<char>(dtype == DType::Bool ? rng() & 1 : rng());
  return t;
}

bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.data(), cb.data(), static_cast<size_t>(ca.numel()) * ca.elementSize()) == 0;
}

template <typename T>
T at(const Tensor& t, int64_t flatIndex) {
  return loadElement<T>(contiguous(t).data() + flatIndex * static_cast<int64_t>(sizeof(T)));
}

} // namespace

// ---- .npy ----

TEST_CASE("saveNpy and loadNpy round-trip every NumPy dtype and shape bit for bit") {
  TempDir dir;
  const Shape shapes[] = {{}, {0}, {5}, {3, 4}, {2, 0, 3}, {1, 2, 1, 3, 1, 1, 1, 2}, {300, 7}};
  uint32_t seed = 1;
  for (DType dtype : {DType::Bool, DType::I32, DType::I64, DType::F16, DType::F32, DType::F64})
    for (const Shape& shape : shapes) {
      CAPTURE(dtypeName(dtype));
      CAPTURE(shape.str());
      const Tensor x = randomTensor(dtype, shape, seed++);
      saveNpy(dir / "x.npy", x);
      CHECK(sameBits(loadNpy(dir / "x.npy"), x));
    }
  CHECK(dir.entries() == 1); // no temporaries left behind
}

TEST_CASE("bf16 is saved as float32 holding exactly the same values") {
  TempDir dir;
  const Tensor x = astype(randomTensor(DType::F32, {4, 5}, 7), DType::BF16);
  saveNpy(dir / "b.npy", x);
  const Tensor back = loadNpy(dir / "b.npy");
  CHECK(back.dtype() == DType::F32);
  CHECK(sameBits(back, astype(x, DType::F32)));
  saveNpy(dir / "s.npy", Tensor::ofFloat(1.0 / 3, DType::BF16));
  CHECK(loadNpy(dir / "s.npy").toDouble() == 0.333984375);
}

TEST_CASE("weak scalars are saved as their concrete dtype") {
  TempDir dir;
  saveNpy(dir / "f.npy", Tensor::weakFloat(0.5));
  CHECK(loadNpy(dir / "f.npy").dtype() == DType::F32);
  saveNpy(dir / "i.npy", Tensor::weakInt(-3));
  const Tensor i = loadNpy(dir / "i.npy");
  CHECK(i.dtype() == DType::I64);
  CHECK(i.toInt() == -3);
}

TEST_CASE("views are saved in row-major order of their logical elements") {
  TempDir dir;
  const Tensor x = randomTensor(DType::I32, {6, 5}, 3);
  const int64_t perm[] = {1, 0};
  const SliceRange ranges[] = {{1, std::nullopt, 2}, {std::nullopt, std::nullopt, -1}};
  for (const Tensor& view : {transpose(x, perm), slice(x, ranges)}) {
    REQUIRE_FALSE(view.isContiguous());
    saveNpy(dir / "v.npy", view);
    CHECK(sameBits(loadNpy(dir / "v.npy"), contiguous(view)));
  }
}

TEST_CASE("the file is NumPy's: version 1.0, a Python dict header, data 64-byte aligned") {
  TempDir dir;
  struct Case {
    Tensor x;
    std::string dict;
  } cases[] = {
      {Tensor::zeros(DType::F32, {2, 3}),
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
      {Tensor::zeros(DType::I64, {5}), "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }"},
      {Tensor::ofBool(true), "{'descr': '|b1', 'fortran_order': False, 'shape': (), }"},
      {Tensor::zeros(DType::F16, {0, 2}),
       "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 2), }"},
  };
  for (const Case& c : cases) {
    saveNpy(dir / "h.npy", c.x);
    const std::string bytes = readBytes(dir / "h.npy");
    REQUIRE(bytes.size() >= 64);
    CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const size_t headerLength =
        static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    CHECK((10 + headerLength) % 64 == 0);
    CHECK(bytes.substr(10, c.dict.size()) == c.dict);
    CHECK(bytes[10 + headerLength - 1] == '\n');
    CHECK(bytes.size() == 10 + headerLength + static_cast<size_t>(c.x.numel()) * c.x.elementSize());
  }
}

TEST_CASE(
    "loadNpy reads Fortran order, big-endian data, versions 2.0 and 3.0 and header variants") {
  TempDir dir;
  const std::string path = dir / "v.npy";
  auto load = [&](const std::string& bytes) {
    writeBytes(path, bytes);
    return loadNpy(path);
  };
  // Fortran order: element [i, j] of a 2x3 array is at i + 2j.
  Tensor f = load(npyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                           bytesOf<int32_t>({0, 10, 1, 11, 2, 12})));
  CHECK(f.shape() == Shape{2, 3});
  CHECK(f.isContiguous());
  for (int64_t k = 0; k < 6; ++k) CHECK(at<int32_t>(f, k) == (k / 3) * 10 + k % 3);
  // Rank 3 Fortran order: [i, j, k] at i + 2j + 6k.
  std::vector<int64_t> fortranData(24);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) fortranData[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  f = load(npyBytes("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3, 4), }",
                    std::string_view(reinterpret_cast<const char*>(fortranData.data()), 24 * 8)));
  for (int64_t n = 0; n < 24; ++n)
    CHECK(at<int64_t>(f, n) == 100 * (n / 12) + 10 * (n / 4 % 3) + n % 4);
  // Big-endian int32 1 and -2; float16 1.0 (0x3c00); float64 0.5 (0x3fe0...).
  Tensor b = load(npyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                           std::string("\0\0\0\x01\xff\xff\xff\xfe", 8)));
  CHECK(at<int32_t>(b, 0) == 1);
  CHECK(at<int32_t>(b, 1) == -2);
  CHECK(load(npyBytes("{'descr': '>f2', 'fortran_order': True, 'shape': (), }",
                      std::string("\x3c\x00", 2)))
            .toDouble() == 1.0);
  const Tensor d = load(npyBytes("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
                                std::string("\x3f\xe0\0\0\0\0\0\0", 8)));
  CHECK(d.shape() == Shape{1});
  CHECK(at<double>(d, 0) == 0.5);
  // Versions 2.0 and 3.0 differ only in a 4-byte header length.
  for (int major : {2, 3}) {
    Tensor v = load(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                             bytesOf<float>({1.5f, -2.0f}), major));
    CHECK(at<float>(v, 1) == -2.0f);
  }
  // Other quotes, key order and spacing; Python 2's 'L'; '=' (native) byte order.
  Tensor q = load(npyBytes("{\"shape\":(3L,),\"fortran_order\":False,\"descr\":\"=i8\"}",
                           bytesOf<int64_t>({7, 8, 9})));
  CHECK(at<int64_t>(q, 2) == 9);
  // Any nonzero byte is true to NumPy; TSL's bools hold exactly 0 or 1.
  Tensor t = load(npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                           std::string("\0\x02\xff", 3)));
  CHECK(std::string(t.data(), 3) == std::string("\0\x01\x01", 3));
}

TEST_CASE("a missing, unreadable or non-.npy file is an io error naming it") {
  TempDir dir;
  const std::string path = dir / "x.npy";
  CHECK(contains(ioErrorOf([&] { loadNpy(path); }),
                 path + ": cannot open: no such file or directory"));
  CHECK(contains(ioErrorOf([&] { loadNpy(dir.path.string()); }), "is a directory"));
  writeBytes(path, "");
  CHECK(ioErrorOf([&] { loadNpy(path); }) == path + ": not a .npy file (no \\x93NUMPY magic)");
  writeBytes(path, "hello, world\n");
  CHECK(contains(ioErrorOf([&] { loadNpy(path); }), "not a .npy file"));
  writeBytes(path, std::string("\x93NUMPY\x01", 7));
  CHECK(contains(ioErrorOf([&] { loadNpy(path); }),
                 "truncated: the file ends inside the .npy preamble"));
}

TEST_CASE("a damaged .npy header is an io error naming the file and the damage") {
  TempDir dir;
  const std::string path = dir / "h.npy";
  const std::string f4 = "'descr': '<f4', 'fortran_order': False";
  const struct {
    std::string bytes, expected;
  } cases[] = {
      {npyBytes("{" + f4 + ", 'shape': (1,), }", std::string(4, '\0'), 4),
       "unsupported .npy format version 4.0"},
      {std::string("\x93NUMPY\x01\x01\x00\x00", 10), "unsupported .npy format version 1.1"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{}", 12),
       "truncated: expected a header of 255 bytes, found 2"},
      {std::string("\x93NUMPY\x02\x00\x00\x00\x00\x80", 12),
       "its length 2147483648 is implausible"},
      {npyBytes("[1, 2]", ""), "expected '{' at byte 0"},
      {npyBytes("{" + f4 + "}", ""), "missing key 'shape'"},
      {npyBytes("{" + f4 + ", 'shape': (), 'extra': 1}", ""), "unknown key 'extra'"},
      {npyBytes("{" + f4 + ", 'shape': (), 'shape': ()}", ""), "key 'shape' appears twice"},
      {npyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': ()}", ""),
       "unsupported dtype '<u2'"},
      {npyBytes("{'descr': '|f4', 'fortran_order': False, 'shape': ()}", ""),
       "unsupported dtype '|f4'"},
      {npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': ()}", ""),
       "unsupported dtype '<c8'"},
      {npyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", ""),
       "structured dtypes"},
      {npyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", ""),
       "fortran_order must be True or False"},
      {npyBytes("{" + f4 + ", 'shape': (-1,)}", ""), "negative dimension -1 in shape"},
      {npyBytes("{" + f4 + ", 'shape': (3)}", ""), "shape must be a tuple"},
      {npyBytes("{" + f4 + ", 'shape': (1.5,)}", ""), "expected ',' or ')' in shape"},
      {npyBytes("{" + f4 + ", 'shape': (x,)}", ""), "expected an integer in shape"},
      {npyBytes("{" + f4 + ", 'shape': (99999999999999999999,)}", ""), "dimension too large"},
      {npyBytes("{" + f4 + ", 'shape': (1,1,1,1,1,1,1,1,1)}", ""), "more than 8 dimensions"},
      {npyBytes("{" + f4 + ", 'shape': (1099511627776, 2)}", ""), "more than 2^40 elements"},
      {npyBytes("{" + f4 + ", 'shape': (2097152, 2097152, 2097152)}", ""),
       "more than 2^40 elements"},
      {npyBytes("{" + f4 + ", 'shape': ()} junk", ""), "unexpected text after the dictionary"},
      {npyBytes("{'descr: '<f4'}", ""), "expected ':'"},
      {npyBytes("{'descr", ""), "unterminated string"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.expected);
    writeBytes(path, c.bytes);
    const std::string message = ioErrorOf([&] { loadNpy(path); });
    CHECK(contains(message, path + ": "));
    CHECK(contains(message, c.expected));
  }
}

TEST_CASE("data shorter or longer than the shape is an io error found before allocating") {
  TempDir dir;
  const std::string path = dir / "d.npy";
  writeBytes(path, npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }",
                            std::string(12, 'x')));
  CHECK(ioErrorOf([&] { loadNpy(path); }) ==
        path + ": truncated: expected 4000 bytes of data, found 12");
  writeBytes(path, npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                            std::string(9, 'x')));
  CHECK(ioErrorOf([&] { loadNpy(path); }) ==
        path + ": corrupt: expected 8 bytes of data, found 9 (extra bytes after the array)");
  // 2^40 float64s would be 8 TiB: refused from the file size, never attempted.
  writeBytes(
      path,
      npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (1048576, 1048576), }", "abc"));
  CHECK(contains(ioErrorOf([&] { loadNpy(path); }),
                 "truncated: expected 8796093022208 bytes of data, found 3"));
}

TEST_CASE("every truncation of a valid .npy file is an io error naming the file") {
  TempDir dir;
  saveNpy(dir / "full.npy", randomTensor(DType::F64, {3, 5}, 11));
  const std::string bytes = readBytes(dir / "full.npy");
  const std::string path = dir / "cut.npy";
  for (size_t length = 0; length < bytes.size(); ++length) {
    CAPTURE(length);
    writeBytes(path, bytes.substr(0, length));
    CHECK(contains(ioErrorOf([&] { loadNpy(path); }), path + ": "));
  }
}

TEST_CASE("a .npy file with random damage loads or is an io error, nothing else") {
  TempDir dir;
  saveNpy(dir / "full.npy", randomTensor(DType::F32, {4, 3}, 5));
  const std::string bytes = readBytes(dir / "full.npy");
  const std::string path = dir / "bad.npy";
  std::mt19937 rng(12345);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    for (int k = 0; k <= trial % 3; ++k) // mostly the header, which is what gets parsed
      damaged[rng() % 80] =
          static_cast<char>(trial % 2 ? rng() : "0123456789(),' -:{}LTF<>|x"[rng() % 26]);
    writeBytes(path, damaged);
    const std::string message = ioErrorOf([&] { loadNpy(path); });
    if (message == "(no error)")
      ++loaded;
    else if (contains(message, path + ": "))
      ++refused;
    else
      FAIL_CHECK("unexpected outcome: " << message);
  }
  CHECK(loaded > 0);
  CHECK(refused > 0);
}

// ---- Atomic writes and text ----

TEST_CASE("writeFileAtomically creates and replaces files and leaves no temporary") {
  TempDir dir;
  const std::string path = dir / "t.txt";
  writeFileAtomically(path, "first");
  CHECK(readTextFile(path) == "first");
  writeFileAtomically(path, std::string("second\0with a nul", 17));
  CHECK(readTextFile(path) == std::string("second\0with a nul", 17));
  writeFileAtomically(path, "");
  CHECK(readTextFile(path).empty());
  CHECK(dir.entries() == 1);
  CHECK((fs::status(path).permissions() & fs::perms::owner_read) != fs::perms::none);
}

TEST_CASE("a write that cannot happen is an io error and leaves nothing behind") {
  TempDir dir;
  const std::string missing = dir / "no/such/folder/x.npy";
  CHECK(contains(ioErrorOf([&] { saveNpy(missing, Tensor::ofInt(1)); }),
                 missing + ": cannot create a temporary file"));
  CHECK(
      contains(ioErrorOf([&] { writeFileAtomically(missing, "x"); }), "no such file or directory"));
  // The target is a folder: refused before any temporary exists.
  fs::create_directory(dir / "sub");
  CHECK(ioErrorOf([&] { writeFileAtomically(dir / "sub", "x"); }) == dir / "sub" + ": cannot write: is a directory");
  CHECK(dir.entries() == 1);
  // A read-only place (sysfs refuses new files even to root).
  CHECK(contains(ioErrorOf([&] { writeFileAtomically("/sys/tsl-io-test.txt", "x"); }),
                 "/sys/tsl-io-test.txt: "));
  if (::geteuid() != 0) {
    fs::permissions(dir / "sub", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(
        contains(ioErrorOf([&] { writeFileAtomically(dir / "sub/x", "x"); }), "permission denied"));
    fs::permissions(dir / "sub", fs::perms::owner_all);
  }
}

TEST_CASE("a write failing midway keeps the old file and removes the temporary") {
  TempDir dir;
  const std::string path = dir / "keep.txt";
  writeFileAtomically(path, "old contents");
  // A file size limit makes write() fail with EFBIG after 64 KiB, as a full disk would.
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto* previousHandler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 1 << 16;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  const std::string message =
      ioErrorOf([&] { writeFileAtomically(path, std::string(1 << 20, 'x')); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previousHandler);
  CHECK(contains(message, path + ": cannot write: file too large"));
  CHECK(readTextFile(path) == "old contents");
  CHECK(dir.entries() == 1);
}

TEST_CASE("readTextFile returns the bytes of a file or an io error naming it") {
  TempDir dir;
  writeBytes(dir / "a.txt", std::string("line 1\r\nline\0 2", 15));
  CHECK(readTextFile(dir / "a.txt") == std::string("line 1\r\nline\0 2", 15));
  const std::string big(200000, 'z');
  writeBytes(dir / "big.txt", big);
  CHECK(readTextFile(dir / "big.txt") == big);
  CHECK(ioErrorOf([&] { readTextFile(dir / "none.txt"); }) ==
        dir / "none.txt" + ": cannot open: no such file or directory");
  CHECK(contains(ioErrorOf([&] { readTextFile(dir.path.string()); }), "is a directory"));
}

TEST_CASE("readTextFile refuses devices and FIFOs (which may never end) and files over its limit") {
  TempDir dir;
  CHECK(ioErrorOf([] { tsl::readTextFile("/dev/zero", 1 << 20); }) ==
        "/dev/zero: is a character device, not a regular file");
  // A FIFO nobody writes to: refused at once, not waited on.
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ioErrorOf([&] { tsl::readTextFile(fifo, 1 << 20); }) == fifo + ": is a FIFO, not a regular file");
  CHECK(ioErrorOf([&] { loadCsv(fifo, {}); }) == fifo + ": is a FIFO, not a regular file");
  CHECK(ioErrorOf([&] { loadNpy(fifo); }) == fifo + ": is a FIFO, not a regular file");
  CHECK(ioErrorOf([] { loadCsv("/dev/zero", {}); }) == "/dev/zero: is a character device, not a regular file");
  writeBytes(dir / "ten.txt", "0123456789");
  CHECK(tsl::readTextFile(dir / "ten.txt", 10) == "0123456789");
  CHECK(ioErrorOf([&] { tsl::readTextFile(dir / "ten.txt", 9); }) ==
        dir / "ten.txt" + ": is 10 bytes, more than the limit of 9 bytes for this file");
}

TEST_CASE("writes follow symbolic links and keep the file's permissions") {
  TempDir dir;
  const std::string real = dir / "real.txt", link = dir / "link.txt";
  writeFileAtomically(real, "old");
  fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("real.txt", link);
  writeFileAtomically(link, "new");
  CHECK(fs::is_symlink(link)); // still a link, to the replaced file
  CHECK(readTextFile(real) == "new");
  CHECK(fs::status(real).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  // A dangling link: the file is created where it points.
  fs::create_symlink("later.txt", dir / "dangling.txt");
  writeFileAtomically(dir / "dangling.txt", "made");
  CHECK(fs::is_symlink(dir / "dangling.txt"));
  CHECK(readTextFile(dir / "later.txt") == "made");
  CHECK(dir.entries() == 4); // real, link, dangling, later: no temporaries
}

TEST_CASE("writes to devices and FIFOs go to them directly; other special files are refused") {
  TempDir dir;
  CHECK_NOTHROW(writeFileAtomically("/dev/null", "discarded"));
  CHECK(fs::is_character_file("/dev/null"));
  // /dev/full fails every write, as a full disk does: an io error, and the device stays.
  CHECK(ioErrorOf([] { saveNpy("/dev/full", Tensor::ofInt(1)); }) == "/dev/full: cannot write: no space left on device");
  CHECK(fs::is_character_file("/dev/full"));
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ioErrorOf([&] { writeFileAtomically(fifo, "x"); }) == fifo + ": cannot write: no process is reading the FIFO");
  CHECK(fs::is_fifo(fifo));
  // With a reader, the bytes arrive through the FIFO.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  writeFileAtomically(fifo, "through");
  char buffer[16] = {};
  CHECK(::read(reader, buffer, sizeof buffer) == 7);
  CHECK(std::string(buffer) == "through");
  ::close(reader);
  CHECK(fs::is_fifo(fifo));
}

TEST_CASE("temporaries of writes that a killed process left behind are removed by the next write") {
  TempDir dir;
  const std::string path = dir / "x.npy";
  // A PID that cannot be running (beyond pid_max) and one that is (this process's parent).
  writeBytes(dir / ".x.npy.tmp-2147483646-3", "stale");
  const std::string alive = ".x.npy.tmp-" + std::to_string(::getppid()) + "-0";
  writeBytes(dir / alive, "another writer's");
  saveNpy(path, Tensor::ofInt(5));
  CHECK_FALSE(fs::exists(dir / ".x.npy.tmp-2147483646-3"));
  CHECK(fs::exists(dir / alive));
  CHECK(loadNpy(path).toInt() == 5);
}

// ---- CSV ----

TEST_CASE("loadCsv reads rows of numbers into a [rows, columns] tensor") {
  TempDir dir;
  const std::string path = dir / "a.csv";
  writeBytes(path, "1,2,3\n\n 4 ,\t5.5 ,6e1\r\n   \n+7,-8,-0.0\n1e400,-inf,nan");
  const Tensor x = loadCsv(path, {});
  CHECK(x.dtype() == DType::F32);
  CHECK(x.shape() == Shape{4, 3});
  const float expected[] = {1, 2, 3, 4, 5.5f, 60, 7, -8, -0.0f, INFINITY, -INFINITY};
  for (int k = 0; k < 11; ++k) CHECK(at<float>(x, k) == expected[k]);
  CHECK(std::signbit(at<float>(x, 8)));
  CHECK(std::isnan(at<float>(x, 11)));
  writeBytes(path, "1\n2\n");
  CHECK(loadCsv(path, {}).shape() == Shape{2, 1}); // rank 2 even for one column
  writeBytes(path, "");
  CHECK(loadCsv(path, {}).shape() == Shape{0, 0});
  writeBytes(path, "a,b\n");
  CHECK(loadCsv(path, {DType::F32, true}).shape() == Shape{0, 0});
  writeBytes(path, "x,y\n1,2\n");
  CHECK(loadCsv(path, {DType::I32, true}).shape() == Shape{1, 2});
  writeBytes(path, ".5,5.,Infinity,-INF,NaN,1E2");
  const Tensor forms = loadCsv(path, {DType::F64});
  CHECK(at<double>(forms, 0) == 0.5);
  CHECK(at<double>(forms, 1) == 5.0);
  CHECK(at<double>(forms, 2) == INFINITY);
  CHECK(at<double>(forms, 3) == -INFINITY);
  CHECK(std::isnan(at<double>(forms, 4)));
  CHECK(at<double>(forms, 5) == 100.0);
  writeBytes(path, "1e-400,-1e-99999,1e99999,0.5e-30");
  const Tensor tiny = loadCsv(path, {DType::F64});
  CHECK(at<double>(tiny, 0) == 0.0);
  CHECK(std::signbit(at<double>(tiny, 1)));
  CHECK(at<double>(tiny, 2) == INFINITY);
  CHECK(at<double>(tiny, 3) == 0.5e-30);
}

TEST_CASE("loadCsv converts each number to the requested dtype by the runtime's rules") {
  TempDir dir;
  const std::string path = dir / "n.csv";
  writeBytes(path, "9007199254740993,2.7,-2.7,1e30,-99999999999999999999,0\n");
  const Tensor i64 = loadCsv(path, {DType::I64});
  CHECK(at<int64_t>(i64, 0) == 9007199254740993); // exact: not through a double
  CHECK(at<int64_t>(i64, 1) == 2);
  CHECK(at<int64_t>(i64, 2) == -2);
  CHECK(at<int64_t>(i64, 3) == INT64_MAX);
  CHECK(at<int64_t>(i64, 4) == INT64_MIN);
  const Tensor i32 = loadCsv(path, {DType::I32});
  CHECK(at<int32_t>(i32, 0) == 1); // wraps, as astype does
  CHECK(at<int32_t>(i32, 3) == INT32_MAX);
  const Tensor b = loadCsv(path, {DType::Bool});
  CHECK(std::string(b.data(), 6) == std::string("\1\1\1\1\1\0", 6));
  writeBytes(path, "0.1,1.00000005960464477550,0.333333333333333333,65520");
  CHECK(at<double>(loadCsv(path, {DType::F64}), 0) == 0.1);
  // 1.00000005960464477550 lies just above 1 + 2^-24, the midpoint between the floats 1
  // and 1 + 2^-23: read straight from decimal it rounds up; through a double it would
  // become exactly the midpoint and round to even, to 1.
  CHECK(at<float>(loadCsv(path, {DType::F32}), 1) == 1.0f + 0x1p-23f);
  CHECK(at<bf16>(loadCsv(path, {DType::BF16}), 2) == bf16(0.333984375f));
  CHECK(std::isinf(static_cast<float>(at<f16>(loadCsv(path, {DType::F16}), 3))));
}

TEST_CASE("malformed CSV is an io error naming file, line and column") {
  TempDir dir;
  const std::string path = dir / "bad.csv";
  const struct {
    std::string text, expected;
    bool skipHeader = false;
  } cases[] = {
      {"1,2\n3\n", ":2:2: 1 field, expected 2 (as on line 1)"},
      {"\n1,2\n3,4,5\n", ":3:5: more than 2 fields (line 2 has 2)"},
      {"1,2\n3,x\n", ":2:3: field 2 is not a number: 'x'"},
      {"\n\n1,  abc \n", ":3:5: field 2 is not a number: 'abc'"},
      {"1,,2\n", ":1:3: field 2 is empty"},
      {"1,2,\n", ":1:5: field 3 is empty"},
      {"1 2\n", ":1:1: field 1 is not a number: '1 2'"},
      {"0x10\n", "field 1 is not a number: '0x10'"},
      {"+-1\n", "field 1 is not a number: '+-1'"},
      {"1,\x01\x02\n", "field 2 is not a number: '?"
                       "?'"},
      {"1," + std::string(100, 'q') + "\n", "'qqqqqqqqqqqqqqqqqqqqqqqq...'"},
      {"a,b\n1,2\n3,y\n", ":3:3: field 2 is not a number: 'y'", true},
      {"150,4,setosa\n", ":1:7: field 3 is not a number: 'setosa'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    writeBytes(path, c.text);
    const std::string message = ioErrorOf([&] { loadCsv(path, {DType::F32, c.skipHeader}); });
    CHECK(contains(message, path));
    // A position given means the whole message: "path:line:column: what".
    if (c.expected[0] == ':')
      CHECK(message == path + c.expected);
    else
      CHECK(contains(message, c.expected));
  }
  CHECK(contains(ioErrorOf([&] { loadCsv(dir / "none.csv", {}); }), dir / "none.csv: cannot open"));
}

TEST_CASE("a .gz suffix means gzip, across chunk boundaries") {
  TempDir dir;
  // Enough rows that lines straddle the reader's 64 KiB chunks, compressed or not.
  std::string text;
  for (int row = 0; row < 4000; ++row) {
    for (int col = 0; col < 10; ++col) text += cat(col ? ", " : "", row * 10 + col, ".25");
    text += row % 2 ? "\r\n" : "\n";
  }
  writeBytes(dir / "p.csv", text);
  gzFile gz = gzopen((dir / "p.csv.gz").c_str(), "wb");
  REQUIRE(gz);
  REQUIRE(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  gzclose(gz);
  for (const char* name : {"p.csv", "p.csv.gz"}) {
    const Tensor x = loadCsv(dir / name, {DType::F64});
    REQUIRE(x.shape() == Shape{4000, 10});
    bool all = true;
    for (int64_t k = 0; k < 40000; ++k)
      all = all && at<double>(x, k) == static_cast<double>(k) + 0.25;
    CHECK(all);
  }
}

TEST_CASE("a .gz file that is not, or no longer, gzip is an io error naming it") {
  TempDir dir;
  const std::string path = dir / "x.csv.gz";
  writeBytes(path, "1,2\n");
  CHECK(ioErrorOf([&] { loadCsv(path, {}); }) == path + ": not a gzip file (the name ends in .gz)");
  writeBytes(path, "");
  CHECK(contains(ioErrorOf([&] { loadCsv(path, {}); }), "not a gzip file"));
  const std::string gz = readBytes(TSL_DATA_DIR "/digits.csv.gz");
  writeBytes(path, gz.substr(0, gz.size() / 2));
  CHECK(ioErrorOf([&] { loadCsv(path, {}); }) == path + ": truncated gzip data");
  std::string damaged = gz;
  for (size_t k = 1000; k < 1100; ++k) damaged[k] = static_cast<char>(damaged[k] ^ 0x5a);
  writeBytes(path, damaged);
  const std::string corrupt = ioErrorOf([&] { loadCsv(path, {}); });
  CHECK(contains(corrupt, path + ": corrupt gzip data: "));
  CHECK_FALSE(contains(corrupt, "<fd:")); // zlib's name for the descriptor is no use to a reader
}

TEST_CASE("the shipped data sets load: digits (gzip) and iris (with a header)") {
  const Tensor digits = loadCsv(TSL_DATA_DIR "/digits.csv.gz", {DType::I64});
  REQUIRE(digits.shape() == Shape{1797, 65});
  bool pixelsInRange = true, labelsInRange = true;
  for (int64_t r = 0; r < 1797; ++r)
    for (int64_t c = 0; c < 65; ++c) {
      const int64_t v = at<int64_t>(digits, r * 65 + c);
      (c < 64 ? pixelsInRange : labelsInRange) &= v >= 0 && v <= (c < 64 ? 16 : 9);
    }
  CHECK(pixelsInRange);
  CHECK(labelsInRange);
  CHECK(at<int64_t>(digits, 2) == 5); // first row: 0,0,5,13,9,...
  CHECK(at<int64_t>(digits, 64) == 0);
  CHECK(at<int64_t>(digits, 65 + 64) == 1);

  const Tensor iris = loadCsv(TSL_DATA_DIR "/iris.csv", {DType::F32, true});
  REQUIRE(iris.shape() == Shape{150, 5});
  CHECK(at<float>(iris, 0) == 5.1f);
  CHECK(at<float>(iris, 3) == 0.2f);
  int perClass[3] = {0, 0, 0};
  for (int64_t r = 0; r < 150; ++r) ++perClass[static_cast<int>(at<float>(iris, r * 5 + 4))];
  CHECK(perClass[0] == 50);
  CHECK(perClass[1] == 50);
  CHECK(perClass[2] == 50);
  CHECK(contains(ioErrorOf([] { loadCsv(TSL_DATA_DIR "/iris.csv", {}); }),
                 "iris.csv:1:7: field 3 is not a number: 'setosa'"));
}
