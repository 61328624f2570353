// Runs a fuzz target without libFuzzer (any compiler): every file of the given corpus
// directories as it is, then `--mutations N` seeded random mutations of each — bits flipped,
// bytes set, ranges deleted, duplicated or replaced by another file's — so that the default
// test run exercises each target briefly and replays the inputs of past findings. A finding
// ends the process after naming the input: an exception escaping the target (the input is
// written to $TMPDIR/orchid-fuzz-finding) or a crash.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
      case 2: {  // delete a range
        size_t at = pick(s.size()), n = std::min(s.size() - at, size_t{1} + pick(16));
        s.erase(at, n);
        break;
      }
      case 3: {  // duplicate a range
        size_t at = pick(s.size()), n = std::min(s.size() - at, size_t{1} + pick(32));
        s.insert(pick(s.size() + 1), s.substr(at, n));
        break;
      }
      case 4: {  // a range of another input
        const std::string& o = corpus[pick(corpus.size())];
        size_t at = pick(o.size()), n = std::min(o.size() - at, size_t{1} + pick(64));
        s.insert(pick(s.size() + 1), o.substr(at, n));
        break;
      }
      default:  // truncate
        s.resize(pick(s.size() + 1));
    }
  }
  return s;
}

// The input being run, for the signal handler (a crash names it, then dies of the signal).
char g_current[512];

void on_signal(int sig) {
  const char head[] = "\nreplay: crashed on ";
  [[maybe_unused]] ssize_t w = write(2, head, sizeof head - 1);
  w = write(2, g_current, strnlen(g_current, sizeof g_current));
  w = write(2, "\n", 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Runs one input; an exception escaping the target is a finding: the input is written to
// `finding_path` and the exception goes on (the process ends).
void run(const std::string& input, const std::string& what, const std::string& finding_path) {
  std::snprintf(g_current, sizeof g_current, "%s", what.c_str());
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    std::ofstream(finding_path, std::ios::binary) << input;
    std::fprintf(stderr, "replay: %s: %s (input written to %s)\n", what.c_str(), e.what(), finding_path.c_str());
    throw;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--mutations") && k + 1 < argc) {
      mutations = std::stol(argv[++k]);
    } else if (!std::strcmp(argv[k], "--seed") && k + 1 < argc) {
      seed = std::stoull(argv[++k]);
    } else if (std::filesystem::is_directory(argv[k])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[k]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(argv[k])) {
      files.emplace_back(argv[k]);
    } else {
      std::fprintf(stderr, "replay: %s is neither an option, a file nor a directory\n", argv[k]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files\n");
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> corpus;
  for (const auto& f : files) corpus.push_back(read_file(f));
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) signal(sig, on_signal);
  std::string finding = (std::filesystem::temp_directory_path() / "orchid-fuzz-finding").string();
  std::mt19937_64 rng(seed);
  long runs = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    std::string name = files[k].filename().string();
    run(corpus[k], name, finding);
    ++runs;
    for (long m = 0; m < mutations; ++m, ++runs)
      run(mutate(corpus[k], corpus, rng), name + " mutation " + std::to_string(m) + " (seed " + std::to_string(seed) + ")",
          finding);
  }
  std::printf("%ld inputs from %zu files, no finding\n", runs, files.size());
  return 0;
}
