// Benchmark artifacts without their weights, to carry large models to a GPU machine whose
// uploads are limited: each f32, f16 or bf16 constant of weights.bin (of 256 values or more,
// all finite)
// is replaced by seeded uniform values of the same root-mean-square, every other constant
// kept as it is; the plan's weights checksum is updated to the new file, which
// weights.slim.json and weights.slim.bin regenerate exactly on the other machine. The model
// computes the same function of other weights of the same scale: its steps, shapes and
// timings are the artifact's, and it is checked against the interpreter with these weights.
#pragma once

#include <string>

namespace orchid::bench {

// Writes `out`: a copy of artifact `dir` without weights.bin, report.html and the CUBINs of
// other architectures than `arch` (the plan listing only that one), with the files that
// regenerate its weights.
void slim_artifact(const std::string& dir, const std::string& out, const std::string& arch);

// Writes the weights.bin of a slim artifact; nothing where the directory already has one.
void expand_weights(const std::string& dir);

}  // namespace orchid::bench
