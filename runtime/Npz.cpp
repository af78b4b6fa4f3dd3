// runtime/Npz.cpp — .npz archives through libzip, members through runtime/Io.h.
//
// Reading streams each member through libzip's decompressor into the tensor decodeNpy
// allocates, after checking the sizes the archive declares against what its compressed
// data could hold, so a hostile archive cannot make TSL allocate more than a bounded
// multiple of the file's size. Writing builds the archive in a libzip memory buffer and
// hands its bytes to writeFileAtomically, so an .npz is written exactly as atomically as a
// .npy.
#include "runtime/Npz.h"

#include "runtime/Interrupt.h"
#include "runtime/Io.h"

#include <zip.h>

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <system_error>

namespace tsl {
namespace {

template <typename... Parts>
[[noreturn]] void ioFail(const std::string& path, const Parts&... parts) {
  fail(ErrorKind::Io, path, ": ", parts...);
}

/// libzip's messages start with a capital; ours are lowercase (an acronym, "CRC error",
/// stays as it is).
std::string lowercaseFirst(std::string text) {
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  if (text.size() > 1 && lower(text[1])) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

std::string zipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = lowercaseFirst(zip_error_strerror(&error));
  zip_error_fini(&error);
  return text;
}

constexpr std::string_view kMemberSuffix = ".npy";
/// Deflate's largest expansion: 258 bytes from a 2-bit-plus code, about 1032 to 1. A
/// member declaring more than this from its compressed size is lying.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct MemberCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

/// The member's bytes must fit what the archive could hold; anything else is damage.
void checkDeclaredSize(const std::string& where, const zip_stat_t& st, uint64_t fileSize) {
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD))
    ioFail(where, "corrupt: the archive does not give the member's sizes");
  if (st.valid & ZIP_STAT_ENCRYPTION_METHOD && st.encryption_method != ZIP_EM_NONE)
    ioFail(where, "encrypted members are not supported");
  if (st.comp_size > fileSize)
    ioFail(where, "corrupt: the member claims ", st.comp_size, " compressed bytes in a file of ", fileSize);
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size)
      ioFail(where, "corrupt: a stored member of ", st.comp_size, " bytes claims ", st.size, " bytes");
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size > st.comp_size * kMaxDeflateRatio + 1024)
      ioFail(where, "corrupt: ", st.comp_size, " deflated bytes cannot hold the ", st.size, " bytes the member claims");
  } else {
    ioFail(where, "compression method ", st.comp_method, " is not supported (stored or deflated only)");
  }
}

} // namespace

std::vector<NpzEntry> loadNpz(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    ioFail(path, "cannot open: ", lowercaseFirst(std::generic_category().message(errno)));
  if (!S_ISREG(info.st_mode)) ioFail(path, "not a regular file");
  const auto fileSize = static_cast<uint64_t>(info.st_size);

  int code = 0;
  std::unique_ptr<zip_t, ArchiveCloser> archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!archive) ioFail(path, "not an .npz archive: ", zipErrorText(code));
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  if (count < 0) ioFail(path, "corrupt archive: ", lowercaseFirst(zip_strerror(archive.get())));

  std::vector<NpzEntry> entries;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    checkInterrupt();
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      ioFail(path, "corrupt archive: member ", i, ": ", lowercaseFirst(zip_strerror(archive.get())));
    const std::string member = st.name;
    const std::string where = path + ": member '" + member + "'";
    if (member.size() <= kMemberSuffix.size() || !member.ends_with(kMemberSuffix))
      ioFail(where, "not an array (an .npz member is named NAME.npy)");
    checkDeclaredSize(where, st, fileSize);
    std::string name = member.substr(0, member.size() - kMemberSuffix.size());
    if (!seen.insert(name).second) ioFail(where, "corrupt: two members are named '", member, "'");

    std::unique_ptr<zip_file_t, MemberCloser> file(zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!file) ioFail(where, "cannot read: ", lowercaseFirst(zip_strerror(archive.get())));
    auto read = [&](char* out, size_t size) -> size_t {
      size_t got = 0;
      while (got < size) {
        const zip_int64_t n = zip_fread(file.get(), out + got, size - got);
        if (n < 0) ioFail(where, "corrupt: ", lowercaseFirst(zip_file_strerror(file.get())));
        if (n == 0) break;
        got += static_cast<size_t>(n);
      }
      return got;
    };
    Tensor tensor = decodeNpy(where, static_cast<size_t>(st.size), read);
    // Reading on to the end makes libzip compare the CRC and the real length.
    char extra = 0;
    if (read(&extra, 1) != 0) ioFail(where, "corrupt: more data than the member declares");
    entries.push_back({std::move(name), std::move(tensor)});
  }
  return entries;
}

void saveNpz(const std::string& path, std::span<const NpzEntry> entries) {
  std::set<std::string_view> names;
  std::vector<NpyImage> images;
  images.reserve(entries.size());
  for (const NpzEntry& e : entries) {
    if (e.name.empty()) fail(ErrorKind::Value, "save-npz: an array name is empty");
    if (!names.insert(e.name).second) fail(ErrorKind::Value, "save-npz: two arrays are named '", e.name, "'");
    images.push_back(npyImage(e.tensor));
  }

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!buffer) ioFail(path, "cannot build the archive: ", lowercaseFirst(zip_error_strerror(&error)));
  zip_source_keep(buffer); // read back after zip_close
  struct SourceRelease {
    void operator()(zip_source_t* s) const { zip_source_free(s); }
  };
  std::unique_ptr<zip_source_t, SourceRelease> keep(buffer);
  std::unique_ptr<zip_t, ArchiveCloser> archive(zip_open_from_source(buffer, ZIP_TRUNCATE, &error));
  if (!archive) ioFail(path, "cannot build the archive: ", lowercaseFirst(zip_error_strerror(&error)));
  zip_error_fini(&error);

  auto failArchive = [&]() { ioFail(path, "cannot build the archive: ", lowercaseFirst(zip_strerror(archive.get()))); };
  // Each member's bytes (header, then elements) must live until zip_close, which is when
  // libzip copies them into the archive.
  std::vector<std::string> members(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    checkInterrupt();
    members[i].reserve(images[i].size());
    members[i] = images[i].header;
    members[i].append(images[i].bytes());
    images[i].data = Tensor();
    zip_source_t* content = zip_source_buffer(archive.get(), members[i].data(), members[i].size(), 0);
    if (!content) failArchive();
    const std::string memberName = entries[i].name + std::string(kMemberSuffix);
    const zip_int64_t index = zip_file_add(archive.get(), memberName.c_str(), content, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(content);
      failArchive();
    }
    if (zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0) failArchive();
  }
  if (zip_close(archive.get()) != 0) failArchive();
  archive.release(); // zip_close freed it

  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(buffer, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || zip_source_open(buffer) != 0)
    ioFail(path, "cannot read the archive back: ", lowercaseFirst(zip_error_strerror(zip_source_error(buffer))));
  std::string bytes(static_cast<size_t>(st.size), '\0');
  const zip_int64_t got = zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  if (got != static_cast<zip_int64_t>(bytes.size())) ioFail(path, "cannot read the archive back");
  members.clear();
  writeFileAtomically(path, bytes);
}

} // namespace tsl
