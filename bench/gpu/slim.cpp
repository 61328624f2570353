// `slim_artifact ARCH OUT ART...`: each CUDA artifact ART copied to OUT/<its name> without its
// weights (slim_weights.h), for carrying to a GPU machine; cuda_model_bench regenerates them.
#include <cstdio>
#include <filesystem>
#include <string>

#include "slim_weights.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: slim_artifact ARCH OUT ARTIFACT...\n");
    return 2;
  }
  namespace fs = std::filesystem;
  try {
    for (int i = 3; i < argc; ++i) {
      fs::path dir(argv[i]);
      if (dir.filename().empty()) dir = dir.parent_path();
      orchid::bench::slim_artifact(dir.string(), (fs::path(argv[2]) / dir.filename()).string(), argv[1]);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "slim_artifact: %s\n", e.what());
    return 1;
  }
  return 0;
}
