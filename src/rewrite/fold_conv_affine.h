// Folding a per-channel affine map into the convolution that feeds it: BatchNormalization in
// inference after a Conv, and Mul / Add by per-channel constants. After fission
//   y  = conv(X, W)                          y: [N, K, s..], W: [K, C/groups, k..] constant-valued
//   z1 = E1(y), z2 = E2(z1), ..., zk = Ek(z(k-1))
// where each link Ej is an elementwise primitive computing, per output channel c,
// zj = aj[c] · z(j-1) + bj[c] (Conv's bias add, BatchNormalization's (x - mean) · gain + B,
// a scale), becomes
//   y' = conv(X, W')     W'[o, ..] = W[o, ..] · A[o]
//   zk = y' + B[c]       (left out when B is 0 everywhere)
// with (A, B) the composition of the chain: starting from (1, 0), each link maps
// (A, B) to (aj·A, aj·B + bj), computed in f64, W' and B rounded once to the conv's dtype.
//
// A value is *constant-valued* when it depends on no graph input: a constant, or an output
// of a non-opaque node whose inputs are all constant-valued (fission leaves weights behind
// views, and BatchNormalization's gain as an elementwise primitive of its statistics). A link
// E reading the previous value z (y or the previous link's output) qualifies when:
//   - the conv's dtype is f32 or f64, W is constant-valued, and z is read by E alone (one
//     consuming node) and is not a graph output — zk alone may be a graph output or have
//     several readers, and it keeps its name;
//   - E is an elementwise primitive with one output of z's type (same dtype, same shape);
//   - E reads z through one input, every load of it unpredicated at the identity index
//     [i0, .., in-1]; each other input is constant-valued, every load of it unpredicated with
//     each index the channel variable i1 or always 0 (the constant 0, or a domain variable
//     over a dim of extent 1); no loop variable appears outside loads;
//   - in E's body, the subexpressions that depend on z are built only by add, sub, mul, neg,
//     div (z in the dividend) and casts between float types, so the body is a polynomial in
//     z for each channel (anything may be computed from the other inputs alone);
//   - it is affine per channel: E run by the interpreter in f64 on each channel at probe
//     points t (0, 1, then fixed and seeded random values in [-8, 8), all exact in f32;
//     constant-valued inputs computed by the interpreter and rounded to their dtype) gives
//     a = f(1) - f(0), b = f(0) finite and f(t) = a·t + b within 1e-12 relative.
// Slopes within 1e-12 of 1 are taken as 1. The chain is the longest run of qualifying links;
// it is folded unless it is a single link with slope 1 (a bias add already: the result of a
// fold, so the pass reaches a fixed point). Consecutive affine links are composed numerically
// rather than merged first into one elementwise primitive, which would need a second pass.
//
// The rewrite: the new conv (provenance of the old one, output named as y) and the add (same
// provenance, output named as zk) take the place of zk; the old conv and links are removed,
// and so are the nodes and constants that only removed nodes read (W's views, the links'
// parameters; W itself unless something else reads it). W' and the bias are new constants,
// named "<W>/folded" and "<y>/bias" (with ".1", ".2", ... when taken). Other values keep
// their names; the graph stays verified.
#pragma once

#include "ir/graph.h"

namespace orchid::rewrite {

// Folds every qualifying chain; returns whether the graph changed.
bool fold_conv_affine(ir::Graph& g);

}  // namespace orchid::rewrite
