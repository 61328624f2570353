// Fuzz target: an ONNX model's bytes through the loader and fission. Bad input must end in a
// UserError (naming the file, node and operator); anything else — an InternalError, another
// exception, a crash, a sanitizer report — is a finding. External data is looked up in a
// directory that does not exist, so no file outside the input is read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "ir/verifier.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    orchid::frontend::OpGraph ops =
        orchid::frontend::load_onnx_bytes(bytes, "/nonexistent/orchid-fuzz/model.onnx");
    orchid::ir::Graph g = orchid::fission::fission(ops);
    orchid::ir::verify_or_throw(g, "after fission of a fuzzed model");
  } catch (const orchid::UserError&) {
  }
  return 0;
}
