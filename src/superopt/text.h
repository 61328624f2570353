// The text form of μGraphs (docs/superopt.md, "Text form"):
//
//   ugraph @gqa {
//     input %Q : f32[4,2,8]
//     block(%Q, %K, %V) grid=[2,2] loop=2 {
//       %q : f32[1,2,8] = in_iter(%Q) imap=[0,rep] fmap=rep
//       …
//       %d : f32[1,2,1] = sum(%e) dim=2 k=4
//       thread(%a, %b) store=[%o] {
//         %t : f32[1,2,4] = exp(%a)
//         %o : f32[1,2,4] = div(%t, %b)
//       }
//       %A : f32[2,4,8] = out_accum(%n) omap=[0,1] fmap=rep
//     }
//     %O : f32[4,2,8] = div(%x, %y)
//     output %O
//   }
//
// `rep` is the replica dim φ. A block operator's outputs are its out_accum results, in order;
// a thread graph's results other than those it stores stay in registers.
#pragma once

#include <string>
#include <string_view>

#include "superopt/ugraph.h"

namespace orchid::superopt {

std::string print_ugraph(const UGraph& g);
// Errors are UserErrors naming the file, line and column; the result is verified.
UGraph parse_ugraph(std::string_view text, const std::string& source_name = "<string>");
UGraph parse_ugraph_file(const std::string& path);

}  // namespace orchid::superopt
