// Safe file handling for every on-disk cache (the tuning database and the binary caches):
// never follow a symbolic link, never open something that can block (FIFO, device, socket),
// create temporary files exclusively, and sweep temporaries a killed process left behind.
// Private to the library.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tune::cache {

// What lstat() found at a path. Nothing is opened, so a FIFO or device cannot block.
enum class PathKind : std::uint8_t { absent, regular, directory, symlink, special, error };

struct PathCheck {
  PathKind kind = PathKind::absent;
  struct stat st {};    // valid for regular, directory, symlink, special
  std::string problem;  // for symlink/special/directory/error: what it is, for a warning
};

// Looks at `path` with lstat(): a symbolic link is reported as such (with its target), a
// FIFO, character or block device or socket as `special`.
PathCheck inspect_path(const std::string& path);

// The one rule for "is this a safe regular file inside a cache directory": empty when `path`
// is absent or a regular file, else what it is ("a symbolic link to /etc/passwd", "a FIFO",
// "a directory"), so the caller can refuse it with a warning naming the path.
std::string unsafe_file_reason(const std::string& path);
// The same for a cache (sub)directory: empty when absent or a real directory; a symbolic
// link or anything else is refused.
std::string unsafe_dir_reason(const std::string& dir);

// Opens a regular file for reading without following a link (O_NOFOLLOW) and without
// blocking on a special file (O_NONBLOCK, then fstat() must say regular). Returns the
// descriptor, or -1 with `problem` set (errno text, or what the file is). `st` receives
// fstat() of what was opened.
int open_regular_for_read(const std::string& path, struct stat* st, std::string* problem);

// Reads exactly `n` bytes (short reads retried). False on error or end of file.
bool read_exact(int fd, char* out, std::size_t n);
// Writes all of `bytes`. False on error (errno is kept).
bool write_all(int fd, std::string_view bytes);

// Creates a new temporary file <dir>/<stem>.tmp.<pid>.<n> with O_CREAT|O_EXCL|O_NOFOLLOW
// (never an existing file, never through a link), mode 0644 less the umask. Returns the
// descriptor and its path, or -1 with `problem`.
int create_temp_file(const std::string& dir, const std::string& stem, std::string* path_out,
                     std::string* problem);

// Whether a file name is one create_temp_file() makes.
bool is_temp_name(std::string_view name) noexcept;

// Temporaries older than this are left by a process that died between write and rename.
inline constexpr std::chrono::seconds kStaleTempAge{3600};

// Removes the regular files in `dir` named like create_temp_file()'s whose modification time
// is older than `max_age`; returns how many. Links and special files are left alone.
std::size_t remove_stale_temp_files(const std::string& dir,
                                    std::chrono::seconds max_age = kStaleTempAge);

// Identity of a file (device and inode), to notice a file replaced behind an open handle.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool valid = false;
  friend bool operator==(const FileId& a, const FileId& b) noexcept {
    return a.valid == b.valid && a.dev == b.dev && a.ino == b.ino;
  }
};
// lstat() identity of `path` (invalid when absent).
FileId file_id(const std::string& path);

}  // namespace tune::cache
