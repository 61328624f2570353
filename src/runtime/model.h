// A loaded artifact (DESIGN.md, "Runtime"): its plan, kernel libraries, weights and library
// steps. Loading checks everything once — the plan, the checksums of every file, the host's
// ISA, each kernel descriptor against its step, each library step's graph against its
// buffers — so that running needs no checks beyond the caller's pointers.
//
// A Model is immutable once loaded and may be shared by any number of threads, each running
// it through its own Session (session.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "orchid/kernel_abi.h"
#include "runtime/aligned_buffer.h"
#include "runtime/kernel_library.h"
#include "runtime/library_step.h"
#include "runtime/plan.h"

namespace orchid::runtime {

class Model {
 public:
  // Loads the artifact directory `dir`. Every problem is a UserError naming the file (and
  // the field, step or ISA flag) at fault.
  static std::shared_ptr<const Model> load(const std::string& dir);

  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& dir() const { return dir_; }
  const Plan& plan() const { return plan_; }
  const std::byte* weights() const { return weights_.data(); }
  // The kernel a generated step calls; nullptr for other steps.
  const orchid_kernel_desc* kernel(size_t step) const { return steps_[step].kernel; }
  // The library step of an "onednn" or "reference" step; nullptr for generated steps.
  const LibraryStep* library_step(size_t step) const { return steps_[step].library.get(); }
  // The largest scratch_bytes of any step: what each thread of a session needs.
  int64_t max_scratch_bytes() const;

 private:
  struct LoadedStep {
    const orchid_kernel_desc* kernel = nullptr;
    std::unique_ptr<LibraryStep> library;
  };

  Model() = default;
  void load_libraries();
  void load_steps(const std::string& source);

  std::string dir_;
  Plan plan_;
  std::vector<KernelLibrary> libraries_;
  AlignedBuffer weights_;
  std::vector<LoadedStep> steps_;
};

// The flags of `required` that `host` lacks, in the order of `required`.
std::vector<std::string> missing_isa(const std::vector<std::string>& required,
                                     const std::vector<std::string>& host);

}  // namespace orchid::runtime
