#include "report.h"

#include <cstdio>
#include <fstream>
#include <set>

#include "fission/fission.h"
#include "support/error.h"

namespace orchid::conformance {

namespace {

// Whether an unsupported test of `op` refused for `reason` lies outside Orchid's scope (the
// header of docs/ops.md): training, random operators, sequence, map, optional and string
// types, control flow with subgraphs, and data-dependent output shapes.
bool out_of_scope(const std::string& op, const std::string& reason) {
  static const std::set<std::string> kOps = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
                                             "RandomUniformLike", "Multinomial", "Loop", "Scan",
                                             "NonMaxSuppression", "Unique", "NonZero"};
  for (const char* r : {"ai.onnx.preview.training", "STRING", "only tensor inputs", "training_mode", "training-mode",
                        "operator Loop", "operator Scan", "operator Sequence", "operator SplitToSequence",
                        "operator Optional"})
    if (reason.find(r) != std::string::npos) return true;
  return kOps.count(op) > 0;
}

struct Totals {
  int passed = 0, failed = 0, unsupported = 0, bound = 0, out_of_scope = 0;
};

Totals totals(const Results& r) {
  Totals t;
  for (const auto& [op, x] : r.tally) {
    t.passed += x.passed, t.failed += x.failed, t.unsupported += x.unsupported, t.bound += x.bound;
    for (const auto& [reason, n] : x.reasons) t.out_of_scope += out_of_scope(op, reason) ? n : 0;
  }
  return t;
}

std::string summary_line(const Results& r) {
  Totals t = totals(r);
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "node tests: %zu; supported %d: %d passed (%d with shape inputs bound at compile time), "
                "%d failed; %zu documented deviations; unsupported %d (%d out of scope, %d in scope)",
                r.tests, t.passed + t.failed, t.passed, t.bound, t.failed, r.deviations.size(), t.unsupported,
                t.out_of_scope, t.unsupported - t.out_of_scope);
  return buf;
}

// Per operator: its table rows as "1-12, 13", the dtype class of the checked input and its
// decomposition.
struct OpRow {
  std::string versions, types, decomposition;
};
std::map<std::string, OpRow> op_rows() {
  std::map<std::string, OpRow> rows;
  for (const auto& s : fission::supported_ops()) {
    OpRow& row = rows[s.op_type];
    std::string range = s.from_version == s.to_version ? std::to_string(s.from_version)
                                                       : std::to_string(s.from_version) + "–" + std::to_string(s.to_version);
    row.versions += (row.versions.empty() ? "" : ", ") + range;
    if (row.types.empty()) row.types = s.types;
    row.decomposition = s.decomposition;
  }
  return rows;
}

void markdown_operators(std::ofstream& out, const Results& r) {
  out << "## Supported operators\n\n"
         "| operator | schema versions | dtypes of the main input | decomposition | node tests passed |\n"
         "|---|---|---|---|---|\n";
  for (const auto& [op, row] : op_rows()) {
    auto it = r.tally.find(op);
    std::string tests = "—";
    if (it != r.tally.end() && it->second.passed + it->second.failed > 0)
      tests = std::to_string(it->second.passed) + "/" + std::to_string(it->second.passed + it->second.failed);
    out << "| " << op << " | " << row.versions << " | " << row.types << " | " << row.decomposition << " | " << tests << " |\n";
  }
}

void markdown_refusals(std::ofstream& out, const Results& r) {
  auto rows = op_rows();
  auto table = [&](const char* title, const char* text, auto keep) {
    out << "\n## " << title << "\n\n" << text << "| operator | node tests | reason |\n|---|---|---|\n";
    for (const auto& [op, t] : r.tally)
      for (const auto& [reason, n] : t.reasons)
        if (keep(op, reason)) out << "| " << op << " | " << n << " | " << reason << " |\n";
  };
  table("Refused cases of supported operators",
        "Node tests of supported operators that Orchid refuses, with the reason it gives.\n\n",
        [&](const std::string& op, const std::string&) { return rows.count(op) > 0; });
  table("Out of scope", "Node tests of the operators and types outside the scope stated above.\n\n",
        [&](const std::string& op, const std::string& reason) { return !rows.count(op) && out_of_scope(op, reason); });
  table("Operators not supported yet", "",
        [&](const std::string& op, const std::string& reason) { return !rows.count(op) && !out_of_scope(op, reason); });
  out << "\n## Documented deviations\n\nThe test data disagrees with the specification Orchid follows.\n\n";
  for (const auto& d : r.deviations) out << "- " << d << "\n";
}

}  // namespace

void print_report(const Results& r) {
  std::printf("%-28s %9s %6s %11s\n", "op", "passed", "failed", "unsupported");
  for (const auto& [op, t] : r.tally) {
    if (t.passed + t.failed == 0) continue;
    std::printf("%-28s %4d/%-4d %6d %11d\n", op.c_str(), t.passed, t.passed + t.failed, t.failed, t.unsupported);
  }
  std::printf("\nunsupported (tests: reason):\n");
  for (const auto& [op, t] : r.tally)
    for (const auto& [reason, n] : t.reasons) std::printf("  %-26s %3d: %s\n", op.c_str(), n, reason.c_str());
  if (!r.deviations.empty()) {
    std::printf("\ndocumented deviations (the test data disagrees with the specification):\n");
    for (const auto& d : r.deviations) std::printf("  %s\n", d.c_str());
  }
  if (!r.failures.empty()) {
    std::printf("\nfailures:\n");
    for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  }
  std::printf("\n%s\n", summary_line(r).c_str());
}

void write_markdown(const Results& r, const std::string& path) {
  std::ofstream out(path);
  ORCHID_USER_CHECK(out.good()) << path << ": cannot open for writing";
  out << "# ONNX operators\n\n"
         "Generated by `make ops-doc` from the fission op table (`src/fission/ops*.def`) and a run of\n"
         "the ONNX backend node tests shipped by libonnx-testdata 1.12; do not edit by hand.\n\n"
         "Orchid's scope is inference with static shapes, opsets 1–17 of the default domain.\n"
         "Out of scope: training operators (the `ai.onnx.preview.training` domain, training-mode\n"
         "Dropout and BatchNormalization), random operators, sequence, map, optional and string\n"
         "types, control flow with subgraphs (Loop, Scan; an If whose condition is a constant, or an\n"
         "input bound at compile time, is folded to its branch), and operators whose output shape\n"
         "depends on data (NonZero, Unique, NonMaxSuppression) unless it folds to a constant.\n"
         "Node tests are counted in scope or out of it by the reason Orchid gives. Inputs that decide a\n"
         "shape (a Reshape's shape, a Resize's scales) must be constants; a model that feeds them\n"
         "as inputs is compiled with them bound (`--bind name=file.npy`), as the conformance run\n"
         "does.\n\n"
      << summary_line(r) << ".\n\n";
  markdown_operators(out, r);
  markdown_refusals(out, r);
}

}  // namespace orchid::conformance
