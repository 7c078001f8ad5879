// Reading records from the pages of an SQLite file. See page_scan.hpp; the format is
// https://www.sqlite.org/fileformat2.html (section numbers below refer to it).
#include "cache/page_scan.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "cache/safe_file.hpp"
#include "cache/store_schema.hpp"

namespace tune::cache {
namespace {

constexpr std::size_t kHeaderBytes = 100;
constexpr std::uint32_t kWalMagicLe = 0x377f0682;  // checksums of little-endian words
constexpr std::uint32_t kWalMagicBe = 0x377f0683;
constexpr std::size_t kWalHeaderBytes = 32;
constexpr std::size_t kWalFrameHeaderBytes = 24;
// Page types (1.6): index b-tree interior and leaf pages.
constexpr unsigned char kIndexInterior = 0x02;
constexpr unsigned char kIndexLeaf = 0x0a;

std::uint32_t be16(const unsigned char* p) { return (std::uint32_t{p[0]} << 8) | p[1]; }
std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

// A varint (1.6) at p[0..end): its value and length, 0 when it runs past `end`.
std::size_t varint(const unsigned char* p, const unsigned char* end, std::uint64_t* out) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    if (p + i >= end) return 0;
    if (i == 8) {
      *out = (v << 8) | p[i];
      return 9;
    }
    v = (v << 7) | (p[i] & 0x7f);
    if ((p[i] & 0x80) == 0) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

// The page size recorded in a header (1.3.2), or 0 when it is not a valid one.
std::uint32_t header_page_size(const unsigned char* h) {
  std::uint32_t size = be16(h + 16);
  if (size == 1) size = 65536;
  if (size < 512 || size > 65536 || (size & (size - 1)) != 0) return 0;
  return size;
}

// The file's pages: the main file, overlaid by the committed frames of its WAL.
class PageSource {
 public:
  explicit PageSource(const std::string& path) {
    struct stat st {};
    std::string problem;
    fd_ = open_regular_for_read(path, &st, &problem);
    if (fd_ < 0) return;
    unsigned char h[kHeaderBytes];
    const bool header = static_cast<std::size_t>(st.st_size) >= kHeaderBytes &&
                        ::pread(fd_, h, kHeaderBytes, 0) == static_cast<ssize_t>(kHeaderBytes) &&
                        std::memcmp(h, "SQLite format 3", 16) == 0;
    page_size_ = header ? header_page_size(h) : 0;
    reserved_ = header ? h[20] : 0;
    utf8_ = !header || be32(h + 56) == 0 || be32(h + 56) == 1;
    wal_fd_ = open_regular_for_read(path + "-wal", &st, &problem);
    if (wal_fd_ >= 0) read_wal(static_cast<std::uint64_t>(st.st_size));
    if (page_size_ == 0) page_size_ = 4096;  // SQLite's default, and libtune's
    if (::fstat(fd_, &st) == 0) main_pages_ = static_cast<std::uint64_t>(st.st_size) / page_size_;
  }
  ~PageSource() {
    if (fd_ >= 0) ::close(fd_);
    if (wal_fd_ >= 0) ::close(wal_fd_);
  }
  PageSource(const PageSource&) = delete;
  PageSource& operator=(const PageSource&) = delete;

  bool usable() const noexcept { return fd_ >= 0 && utf8_ && usable_size() >= 480; }
  std::uint32_t page_size() const noexcept { return page_size_; }
  // The usable size U of a page (1.3.4): the page less its reserved bytes.
  std::uint32_t usable_size() const noexcept { return page_size_ - reserved_; }
  std::size_t wal_frames() const noexcept { return wal_.size(); }

  // The highest page number any image exists for.
  std::uint64_t last_page() const {
    std::uint64_t last = main_pages_;
    if (!wal_.empty()) last = std::max<std::uint64_t>(last, wal_.rbegin()->first);
    return last;
  }

  // Page `pgno`'s image (1-based) into `out` (page_size() bytes). False when neither file
  // has it whole.
  bool read(std::uint64_t pgno, unsigned char* out) const {
    if (pgno == 0) return false;
    if (auto it = wal_.find(pgno); it != wal_.end())
      return ::pread(wal_fd_, out, page_size_, static_cast<off_t>(it->second)) ==
             static_cast<ssize_t>(page_size_);
    if (pgno > main_pages_) return false;
    return ::pread(fd_, out, page_size_, static_cast<off_t>((pgno - 1) * page_size_)) ==
           static_cast<ssize_t>(page_size_);
  }

 private:
  // The WAL (4.1): frames whose salts match its header and whose cumulative checksum holds,
  // up to the last commit frame; later frames of a page replace earlier ones.
  void read_wal(std::uint64_t size) {
    unsigned char h[kWalHeaderBytes];
    if (size < kWalHeaderBytes || ::pread(wal_fd_, h, sizeof h, 0) != sizeof h) return;
    const std::uint32_t magic = be32(h);
    const std::uint32_t wal_page = be32(h + 8);
    if ((magic != kWalMagicLe && magic != kWalMagicBe) || wal_page < 512 || wal_page > 65536 ||
        (wal_page & (wal_page - 1)) != 0)
      return;
    if (page_size_ != 0 && wal_page != page_size_) return;
    const bool big = magic == kWalMagicBe;
    std::uint32_t s0 = 0, s1 = 0;
    checksum(big, h, 24, &s0, &s1);
    if (s0 != be32(h + 24) || s1 != be32(h + 28)) return;
    std::vector<unsigned char> frame(kWalFrameHeaderBytes + wal_page);
    std::map<std::uint64_t, std::uint64_t> pending, committed;
    for (std::uint64_t off = kWalHeaderBytes; off + frame.size() <= size; off += frame.size()) {
      if (::pread(wal_fd_, frame.data(), frame.size(), static_cast<off_t>(off)) !=
          static_cast<ssize_t>(frame.size()))
        break;
      if (std::memcmp(frame.data() + 8, h + 16, 8) != 0) break;  // salts of another generation
      checksum(big, frame.data(), 8, &s0, &s1);
      checksum(big, frame.data() + kWalFrameHeaderBytes, wal_page, &s0, &s1);
      if (s0 != be32(frame.data() + 16) || s1 != be32(frame.data() + 20)) break;
      const std::uint32_t pgno = be32(frame.data());
      if (pgno == 0) break;
      pending[pgno] = off + kWalFrameHeaderBytes;
      if (be32(frame.data() + 4) != 0) {  // a commit frame
        for (const auto& [p, o] : pending) committed[p] = o;
        pending.clear();
      }
    }
    if (committed.empty()) return;
    page_size_ = wal_page;
    wal_ = std::move(committed);
  }

  // The WAL checksum (4.2) over `n` bytes (a multiple of 8), continuing from s0, s1.
  static void checksum(bool big, const unsigned char* p, std::size_t n, std::uint32_t* s0,
                       std::uint32_t* s1) {
    auto word = [big](const unsigned char* w) {
      return big ? be32(w)
                 : (std::uint32_t{w[3]} << 24) | (std::uint32_t{w[2]} << 16) |
                       (std::uint32_t{w[1]} << 8) | w[0];
    };
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      *s0 += word(p + i) + *s1;
      *s1 += word(p + i + 4) + *s0;
    }
  }

  int fd_ = -1;
  int wal_fd_ = -1;
  std::uint32_t page_size_ = 0;
  std::uint32_t reserved_ = 0;
  bool utf8_ = true;
  std::uint64_t main_pages_ = 0;
  std::map<std::uint64_t, std::uint64_t> wal_;  // page number -> offset of its image in the WAL
};

// The pages on the freelist (1.5), as far as its trunk chain can be read.
std::set<std::uint64_t> freelist_pages(const PageSource& src) {
  std::set<std::uint64_t> free;
  std::vector<unsigned char> page(src.page_size());
  if (!src.read(1, page.data())) return free;
  std::uint64_t trunk = be32(page.data() + 32);
  const std::uint64_t last = src.last_page();
  for (std::uint64_t hops = 0; trunk != 0 && trunk <= last && hops <= last; ++hops) {
    if (!free.insert(trunk).second || !src.read(trunk, page.data())) break;
    const std::uint32_t leaves = be32(page.data() + 4);
    if (leaves > (src.usable_size() - 8) / 4) break;
    for (std::uint32_t i = 0; i < leaves; ++i) free.insert(be32(page.data() + 8 + 4 * i));
    trunk = be32(page.data());
  }
  return free;
}

// Decodes a record (2.1): false unless its header and body account for exactly `payload`.
bool decode_record(std::string_view payload, std::vector<RecordValue>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
  const unsigned char* end = p + payload.size();
  std::uint64_t header_size = 0;
  std::size_t n = varint(p, end, &header_size);
  if (n == 0 || header_size < n || header_size > payload.size()) return false;
  const unsigned char* type_at = p + n;
  const unsigned char* header_end = p + header_size;
  const unsigned char* body = header_end;
  while (type_at < header_end) {
    std::uint64_t type = 0;
    n = varint(type_at, header_end, &type);
    if (n == 0) return false;
    type_at += n;
    RecordValue v;
    std::uint64_t len = 0;
    if (type == 0) {
      v.type = SQLITE_NULL;
    } else if (type <= 6) {
      static constexpr std::uint64_t kIntBytes[] = {0, 1, 2, 3, 4, 6, 8};
      len = kIntBytes[type];
      if (static_cast<std::uint64_t>(end - body) < len) return false;
      std::uint64_t u = (body[0] & 0x80) != 0 ? ~std::uint64_t{0} : 0;  // sign extension
      for (std::uint64_t i = 0; i < len; ++i) u = (u << 8) | body[i];
      v.type = SQLITE_INTEGER;
      v.integer = static_cast<std::int64_t>(u);
    } else if (type == 7) {
      len = 8;
      if (end - body < 8) return false;
      std::uint64_t u = 0;
      for (int i = 0; i < 8; ++i) u = (u << 8) | body[i];
      v.type = SQLITE_FLOAT;
      std::memcpy(&v.real, &u, sizeof u);
    } else if (type == 8 || type == 9) {
      v.type = SQLITE_INTEGER;
      v.integer = type == 9 ? 1 : 0;
    } else if (type >= 12) {
      len = (type - 12) / 2;
      if (static_cast<std::uint64_t>(end - body) < len) return false;
      v.type = type % 2 == 0 ? SQLITE_BLOB : SQLITE_TEXT;
      v.bytes.assign(reinterpret_cast<const char*>(body), static_cast<std::size_t>(len));
    } else {
      return false;  // 10 and 11 are reserved
    }
    body += len;
    out->push_back(std::move(v));
  }
  return body == end;
}

// Reads one page's cells into records. `page` holds page `pgno`'s image.
class CellReader {
 public:
  CellReader(const PageSource& src, const std::function<void(const std::vector<RecordValue>&)>& cb)
      : src_(src), cb_(cb), overflow_(src.page_size()) {}

  std::size_t records() const noexcept { return records_; }

  void read_page(std::uint64_t pgno, const unsigned char* page) {
    const std::size_t hdr = pgno == 1 ? kHeaderBytes : 0;
    const unsigned char type = page[hdr];
    if (type != kIndexInterior && type != kIndexLeaf) return;
    const std::uint32_t u = src_.usable_size();
    const std::size_t ptrs = hdr + (type == kIndexLeaf ? 8 : 12);
    const std::uint32_t cells = be16(page + hdr + 3);
    if (ptrs + 2 * std::size_t{cells} > u) return;
    for (std::uint32_t i = 0; i < cells; ++i) {
      std::size_t off = be16(page + ptrs + 2 * i);
      if (off < ptrs + 2 * std::size_t{cells} || off >= u) continue;
      if (type == kIndexInterior) off += 4;  // the left child's page number
      if (read_cell(page + off, page + u) && decode_record(payload_, &values_)) {
        ++records_;
        cb_(values_);
      }
    }
  }

 private:
  // One index cell (1.6) at `p`, ending before `end`: its payload, overflow included.
  bool read_cell(const unsigned char* p, const unsigned char* end) {
    std::uint64_t size = 0;
    const std::size_t n = p < end ? varint(p, end, &size) : 0;
    if (n == 0) return false;
    const std::uint64_t u = src_.usable_size();
    // The most a chain within the file can hold: anything larger is garbage.
    if (size > (src_.last_page() + 1) * u) return false;
    const std::uint64_t x = ((u - 12) * 64 / 255) - 23;
    const std::uint64_t m = ((u - 12) * 32 / 255) - 23;
    std::uint64_t local = size;
    if (size > x) {
      const std::uint64_t k = m + ((size - m) % (u - 4));
      local = k <= x ? k : m;
    }
    const unsigned char* data = p + n;
    if (static_cast<std::uint64_t>(end - data) < local + (local < size ? 4 : 0)) return false;
    payload_.assign(reinterpret_cast<const char*>(data), static_cast<std::size_t>(local));
    if (local == size) return true;
    std::uint64_t next = be32(data + local);
    std::uint64_t left = size - local;
    for (std::uint64_t hops = 0; left > 0; ++hops) {
      if (next == 0 || hops > src_.last_page() || !src_.read(next, overflow_.data())) return false;
      const std::uint64_t take = std::min<std::uint64_t>(left, u - 4);
      payload_.append(reinterpret_cast<const char*>(overflow_.data() + 4),
                      static_cast<std::size_t>(take));
      left -= take;
      next = be32(overflow_.data());
    }
    return true;
  }

  const PageSource& src_;
  const std::function<void(const std::vector<RecordValue>&)>& cb_;
  std::vector<unsigned char> overflow_;
  std::string payload_;
  std::vector<RecordValue> values_;
  std::size_t records_ = 0;
};

}  // namespace

PageScanStats scan_index_records(
    const std::string& path,
    const std::function<void(const std::vector<RecordValue>&)>& on_record) {
  PageScanStats stats;
  PageSource src(path);
  if (!src.usable()) return stats;
  stats.wal_frames = src.wal_frames();
  const std::set<std::uint64_t> free = freelist_pages(src);
  CellReader cells(src, on_record);
  std::vector<unsigned char> page(src.page_size());
  const std::uint64_t last = src.last_page();
  for (std::uint64_t pgno = 1; pgno <= last; ++pgno) {
    if (free.count(pgno) != 0 || !src.read(pgno, page.data())) continue;
    ++stats.pages;
    const unsigned char type = page[pgno == 1 ? kHeaderBytes : 0];
    if (type != kIndexInterior && type != kIndexLeaf) continue;
    ++stats.index_pages;
    cells.read_page(pgno, page.data());
  }
  stats.records = cells.records();
  return stats;
}

bool has_cache_header(const std::string& path) {
  struct stat st {};
  std::string problem;
  const int fd = open_regular_for_read(path, &st, &problem);
  if (fd < 0) return false;
  unsigned char h[kHeaderBytes];
  const bool read = ::pread(fd, h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  ::close(fd);
  return read && std::memcmp(h, "SQLite format 3", 16) == 0 &&
         be32(h + 60) >= static_cast<std::uint32_t>(kOldestCacheSchemaVersion) &&
         be32(h + 60) <= static_cast<std::uint32_t>(kCacheSchemaVersion) &&
         be32(h + 68) == static_cast<std::uint32_t>(kCacheApplicationId);
}

}  // namespace tune::cache
