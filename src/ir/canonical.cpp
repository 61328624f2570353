#include "ir/canonical.h"

#include "ir/text_internal.h"
#include "support/hash.h"

namespace orchid::ir {

Signature canonical_signature(const Graph& g) {
  detail::TextStyle style;
  style.rename = true;
  style.provenance = false;
  style.graph_name = false;
  style.hash_constants = true;
  Signature sig;
  sig.text = detail::print_graph_styled(g, style);
  sig.hash = fnv1a64(sig.text);
  return sig;
}

}  // namespace orchid::ir
