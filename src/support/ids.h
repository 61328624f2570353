// Strong integer ids (STYLE.md rule 4): a ValueId cannot be passed where a NodeId is meant.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace orchid {

template <class Tag>
struct StrongId {
  int32_t v = -1;
  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t x) : v(x) {}
  constexpr bool valid() const { return v >= 0; }
  constexpr auto operator<=>(const StrongId&) const = default;
};

}  // namespace orchid

template <class Tag>
struct std::hash<orchid::StrongId<Tag>> {
  size_t operator()(orchid::StrongId<Tag> id) const noexcept { return std::hash<int32_t>()(id.v); }
};
