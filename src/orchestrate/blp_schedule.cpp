// Schedules of chosen items and the items that can ever run (blp.h).
#include <algorithm>

#include "orchestrate/blp.h"
#include "support/error.h"

namespace orchid::orchestrate {

Schedule schedule_items(const BlpProblem& p, const std::vector<int32_t>& chosen) {
  std::vector<bool> present(static_cast<size_t>(p.num_values), false);
  std::vector<bool> done(chosen.size(), false);
  Schedule s;
  auto ready = [&](int32_t item) {
    for (int32_t v : p.items[static_cast<size_t>(item)].reads)
      if (!present[static_cast<size_t>(v)]) return false;
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t k = 0; k < chosen.size(); ++k) {
      if (done[k] || !ready(chosen[k])) continue;
      done[k] = true;
      s.order.push_back(chosen[k]);
      for (int32_t v : p.items[static_cast<size_t>(chosen[k])].writes) present[static_cast<size_t>(v)] = true;
      progress = true;
      break;  // restart: the first ready item runs next
    }
  }
  for (size_t k = 0; k < chosen.size(); ++k)
    if (!done[k]) s.blocked.push_back(chosen[k]);
  return s;
}

std::vector<int32_t> runnable_items(const BlpProblem& p) {
  // Counting reads still missing per item; a value's first writer to run releases its readers.
  size_t n = p.items.size();
  std::vector<std::vector<int32_t>> readers(static_cast<size_t>(p.num_values));
  std::vector<int32_t> missing(n, 0);
  std::vector<int32_t> stack;
  for (size_t i = 0; i < n; ++i) {
    for (int32_t v : p.items[i].reads) {
      ORCHID_CHECK(v >= 0 && v < p.num_values) << "item " << i << " reads value " << v << " of " << p.num_values;
      readers[static_cast<size_t>(v)].push_back(static_cast<int32_t>(i));
    }
    missing[i] = static_cast<int32_t>(p.items[i].reads.size());
    if (missing[i] == 0) stack.push_back(static_cast<int32_t>(i));
  }
  std::vector<bool> present(static_cast<size_t>(p.num_values), false), runnable(n, false);
  while (!stack.empty()) {
    int32_t i = stack.back();
    stack.pop_back();
    runnable[static_cast<size_t>(i)] = true;
    for (int32_t v : p.items[static_cast<size_t>(i)].writes) {
      ORCHID_CHECK(v >= 0 && v < p.num_values) << "item " << i << " writes value " << v << " of " << p.num_values;
      if (present[static_cast<size_t>(v)]) continue;
      present[static_cast<size_t>(v)] = true;
      for (int32_t r : readers[static_cast<size_t>(v)])
        if (--missing[static_cast<size_t>(r)] == 0) stack.push_back(r);
    }
  }
  std::vector<int32_t> out;
  for (size_t i = 0; i < n; ++i)
    if (runnable[i]) out.push_back(static_cast<int32_t>(i));
  return out;
}

}  // namespace orchid::orchestrate
