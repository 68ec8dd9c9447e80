// write_file_atomic: the one place that puts bytes on disk for the output writers. A reader of the
// target sees either the previous file or the complete new one, because the new content is made
// durable under a temporary name in the same directory (same file system) before the rename.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

[[noreturn]] void throw_cannot_write(const std::filesystem::path& path, const std::string& why) {
  throw std::runtime_error("cannot write " + path.string() + ": " + why);
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::filesystem::path tmp =
      dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw_cannot_write(path, std::strerror(errno));

  // Any failure from here on leaves a temp file behind unless we remove it.
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw_cannot_write(path, std::strerror(err));
  };
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_cannot_write(path, std::strerror(err));
  }

  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    ::unlink(tmp.c_str());
    throw_cannot_write(path, ec.message());
  }
  // Make the rename itself durable; a failure here cannot un-write the file, so it is not an error.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace rbfpde
