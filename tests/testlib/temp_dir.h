// A fresh folder under the system temporary folder, removed with everything in it when the
// object dies. For tests that write files.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace orchid::testlib {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "orchid_test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The path of `name` inside the folder; writes `text` to it when given.
  std::string file(const std::string& name, const std::string& text = "") const {
    std::filesystem::path p = path_ / name;
    if (!text.empty()) {
      std::filesystem::create_directories(p.parent_path());
      std::ofstream(p) << text;
    }
    return p.string();
  }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace orchid::testlib
