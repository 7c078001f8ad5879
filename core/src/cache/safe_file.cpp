// Safe file handling for the caches. See safe_file.hpp.
#include "safe_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace tune::cache {
namespace {

std::string kind_text(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISDIR(st.st_mode)) return "a directory";
  return "not a regular file";
}

std::string link_text(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return "a symbolic link";
  return "a symbolic link to " + std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

PathCheck inspect_path(const std::string& path) {
  PathCheck c;
  if (::lstat(path.c_str(), &c.st) != 0) {
    if (errno == ENOENT) return c;
    c.kind = PathKind::error;
    c.problem = std::string("not inspectable (") + std::strerror(errno) + ")";  // "<path> is ..."
    return c;
  }
  if (S_ISREG(c.st.st_mode)) {
    c.kind = PathKind::regular;
  } else if (S_ISLNK(c.st.st_mode)) {
    c.kind = PathKind::symlink;
    c.problem = link_text(path);
  } else if (S_ISDIR(c.st.st_mode)) {
    c.kind = PathKind::directory;
    c.problem = "a directory";
  } else {
    c.kind = PathKind::special;
    c.problem = kind_text(c.st);
  }
  return c;
}

std::string unsafe_file_reason(const std::string& path) {
  PathCheck c = inspect_path(path);
  if (c.kind == PathKind::absent || c.kind == PathKind::regular) return {};
  return c.problem;
}

std::string unsafe_dir_reason(const std::string& dir) {
  PathCheck c = inspect_path(dir);
  if (c.kind == PathKind::absent || c.kind == PathKind::directory) return {};
  if (c.kind == PathKind::regular) return "a regular file, not a directory";
  return c.problem;
}

int open_regular_for_read(const std::string& path, struct stat* st, std::string* problem) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *problem = errno == ELOOP ? link_text(path) : std::string(std::strerror(errno));
    return -1;
  }
  if (::fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    *problem = kind_text(*st);
    ::close(fd);
    return -1;
  }
  // Regular files never block; clear O_NONBLOCK anyway so reads behave plainly.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

bool read_exact(int fd, char* out, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, out, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_all(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

int create_temp_file(const std::string& dir, const std::string& stem, std::string* path_out,
                     std::string* problem) {
  static std::atomic<std::uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = dir + "/" + stem + ".tmp." + std::to_string(::getpid()) + "." +
                       std::to_string(counter.fetch_add(1));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      *path_out = std::move(path);
      return fd;
    }
    if (errno != EEXIST) {
      *problem = std::strerror(errno);
      return -1;
    }
  }
  *problem = "no free temporary name";
  return -1;
}

bool is_temp_name(std::string_view name) noexcept {
  return name.find(".tmp.") != std::string_view::npos;
}

std::size_t remove_stale_temp_files(const std::string& dir, std::chrono::seconds max_age) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  const std::time_t cutoff = std::time(nullptr) - static_cast<std::time_t>(max_age.count());
  std::size_t removed = 0;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (!is_temp_name(name)) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_mtime >= cutoff) continue;
    if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

FileId file_id(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return FileId{st.st_dev, st.st_ino, true};
}

}  // namespace tune::cache
