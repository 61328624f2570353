// Schedules: canonical text and defaults (schedule.h).
#include "codegen/cpu/schedule.h"

#include <algorithm>
#include <sstream>

#include "support/error.h"

namespace orchid::codegen::cpu {

namespace {

bool one_of(int v, std::initializer_list<int> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

int64_t parse_int(const std::string& s, const std::string& text) {
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  ORCHID_USER_ERROR() << "schedule \"" << text << "\": \"" << s << "\" is not a non-negative integer";
  return 0;
}

}  // namespace

std::string schedule_str(const Schedule& s) {
  std::string tile;
  for (size_t d = 0; d < s.tile.size(); ++d) tile += (d ? "x" : "") + std::to_string(s.tile[d]);
  return "tile=" + (tile.empty() ? std::string("-") : tile) + " vec=" + std::to_string(s.vector_width) +
         " unroll=" + std::to_string(s.unroll) + " inline=" + (s.inline_single_use ? "1" : "0");
}

Schedule parse_schedule(const std::string& text) {
  Schedule s;
  std::istringstream in(text);
  std::string field;
  while (in >> field) {
    auto eq = field.find('=');
    ORCHID_USER_CHECK(eq != std::string::npos) << "schedule \"" << text << "\": expected key=value, got \"" << field << "\"";
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "tile") {
      s.tile.clear();
      if (value == "-") continue;
      std::istringstream dims(value);
      std::string d;
      while (std::getline(dims, d, 'x')) s.tile.push_back(parse_int(d, text));
    } else if (key == "vec") {
      s.vector_width = static_cast<int>(parse_int(value, text));
      ORCHID_USER_CHECK(one_of(s.vector_width, {1, 4, 8, 16})) << "schedule \"" << text << "\": vec must be 1, 4, 8 or 16";
    } else if (key == "unroll") {
      s.unroll = static_cast<int>(parse_int(value, text));
      ORCHID_USER_CHECK(one_of(s.unroll, {1, 2, 4, 8})) << "schedule \"" << text << "\": unroll must be 1, 2, 4 or 8";
    } else if (key == "inline") {
      ORCHID_USER_CHECK(value == "0" || value == "1") << "schedule \"" << text << "\": inline must be 0 or 1";
      s.inline_single_use = value == "1";
    } else {
      ORCHID_USER_ERROR() << "schedule \"" << text << "\": unknown key \"" << key << "\"";
    }
  }
  return s;
}

Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int cores) {
  ORCHID_CHECK(!k.outputs.empty()) << "a kernel without outputs";
  // The anchor, as lowering picks it: the largest output.
  ir::Dims shape = g.type(k.outputs[0]).shape;
  for (ir::ValueId v : k.outputs)
    if (g.type(v).numel() > ir::numel(shape)) shape = g.type(v).shape;
  Schedule s;
  s.tile = shape;
  const int64_t min_task = 16 * 1024;
  const int64_t want_tasks = 4 * std::max(1, cores);
  // Split outer dims first (whole rows stay in one task) while tasks stay big enough.
  int64_t total = ir::numel(shape), tasks = 1;
  for (size_t d = 0; d < shape.size() && tasks < want_tasks; ++d) {
    int64_t inner = total / std::max<int64_t>(1, shape[d]) / tasks;  // elements per task below d
    int64_t split = std::min<int64_t>(shape[d], want_tasks / tasks);
    while (split > 1 && inner * ((shape[d] + split - 1) / split) < min_task) --split;
    if (split <= 1) break;
    s.tile[d] = (shape[d] + split - 1) / split;
    tasks *= split;
  }
  return s;
}

}  // namespace orchid::codegen::cpu
