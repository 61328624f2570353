// Recurrent layers (rules_rnn.cpp) against a direct reference on seeded random cases: RNN,
// GRU (both linear_before_reset forms) and LSTM (peepholes, input_forget), forward, reverse
// and bidirectional, both layouts, with and without bias, initial states and clip, default
// and other activations, every output.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "interp/interp.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;
using Fn = std::function<double(double)>;

struct Case {
  std::string op;
  int64_t seq, batch, input, hidden, dirs, gates;
  bool reverse, batchwise, bias, h0, c0, peep, lbr, input_forget;
  double clip;  // 0: none
  std::vector<std::string> acts;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Fn activation(const std::string& n) {
  if (n == "Sigmoid") return sigmoid;
  if (n == "Tanh") return [](double x) { return std::tanh(x); };
  if (n == "Relu") return [](double x) { return std::max(x, 0.0); };
  if (n == "HardSigmoid") return [](double x) { return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0); };
  return [](double x) { return x / (1 + std::fabs(x)); };  // Softsign
}

// The ONNX definitions, step by step in f64. Returns Y, Y_h (and Y_c) in the case's layout.
std::vector<Tensor> reference(const Case& c, const std::vector<Tensor>& in) {
  const Tensor &X = in[0], &W = in[1], &R = in[2];
  int64_t H = c.hidden, G = c.gates;
  auto x = [&](int64_t t, int64_t b, int64_t k) {
    return X.get_f64(c.batchwise ? (b * c.seq + t) * c.input + k : (t * c.batch + b) * c.input + k);
  };
  Dims ys = c.batchwise ? Dims{c.batch, c.seq, c.dirs, H} : Dims{c.seq, c.dirs, c.batch, H};
  Dims hs = c.batchwise ? Dims{c.batch, c.dirs, H} : Dims{c.dirs, c.batch, H};
  Tensor Y(TensorType{DType::F32, ys}), Yh(TensorType{DType::F32, hs}), Yc(TensorType{DType::F32, hs});
  auto hidx = [&](int64_t d, int64_t b, int64_t j) { return c.batchwise ? (b * c.dirs + d) * H + j : (d * c.batch + b) * H + j; };
  size_t per = c.acts.size() / static_cast<size_t>(c.dirs);
  for (int64_t d = 0; d < c.dirs; ++d) {
    std::vector<Fn> f;
    for (size_t k = 0; k < per; ++k) f.push_back(activation(c.acts[static_cast<size_t>(d) * per + k]));
    auto cl = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
    std::vector<double> h(static_cast<size_t>(c.batch * H), 0), cs(h.size(), 0);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < H; ++j) {
        if (c.h0) h[static_cast<size_t>(b * H + j)] = in[5].get_f64(hidx(d, b, j));
        if (c.c0) cs[static_cast<size_t>(b * H + j)] = in[6].get_f64(hidx(d, b, j));
      }
    auto wb = [&](int64_t row) { return c.bias ? in[3].get_f64(d * 2 * G * H + row) : 0.0; };
    auto rb = [&](int64_t row) { return c.bias ? in[3].get_f64(d * 2 * G * H + G * H + row) : 0.0; };
    for (int64_t k = 0; k < c.seq; ++k) {
      int64_t t = (c.reverse || d == 1) ? c.seq - 1 - k : k;
      std::vector<double> nh(h.size()), nc(h.size());
      for (int64_t b = 0; b < c.batch; ++b) {
        // xw(row) and hr(row, state) for gate rows of W and R
        auto xw = [&](int64_t row) {
          double s = 0;
          for (int64_t q = 0; q < c.input; ++q) s += x(t, b, q) * W.get_f64((d * G * H + row) * c.input + q);
          return s;
        };
        auto hr = [&](int64_t row, const std::vector<double>& st) {
          double s = 0;
          for (int64_t q = 0; q < H; ++q) s += st[static_cast<size_t>(b * H + q)] * R.get_f64((d * G * H + row) * H + q);
          return s;
        };
        for (int64_t j = 0; j < H; ++j) {
          auto pre = [&](int64_t g) { return xw(g * H + j) + hr(g * H + j, h) + wb(g * H + j) + rb(g * H + j); };
          size_t at = static_cast<size_t>(b * H + j);
          if (c.op == "RNN") {
            nh[at] = f[0](cl(pre(0)));
          } else if (c.op == "GRU") {
            double z = f[0](cl(pre(0))), r = f[0](cl(pre(1)));
            double cand;
            if (c.lbr) {
              cand = f[1](cl(xw(2 * H + j) + wb(2 * H + j) + r * (hr(2 * H + j, h) + rb(2 * H + j))));
            } else {
              std::vector<double> rh(h.size());
              for (int64_t q = 0; q < H; ++q) {
                double rq = f[0](cl(xw(H + q) + hr(H + q, h) + wb(H + q) + rb(H + q)));
                rh[static_cast<size_t>(b * H + q)] = rq * h[static_cast<size_t>(b * H + q)];
              }
              cand = f[1](cl(xw(2 * H + j) + hr(2 * H + j, rh) + rb(2 * H + j) + wb(2 * H + j)));
            }
            nh[at] = (1 - z) * cand + z * h[at];
          } else {
            auto p = [&](int64_t g) { return c.peep ? in[7].get_f64(d * 3 * H + g * H + j) : 0.0; };
            double i = f[0](cl(pre(0) + p(0) * cs[at]));
            double fg = c.input_forget ? 1 - i : f[0](cl(pre(2) + p(2) * cs[at]));
            double cc = f[1](cl(pre(3)));
            nc[at] = fg * cs[at] + i * cc;
            double o = f[0](cl(pre(1) + p(1) * nc[at]));
            nh[at] = o * f[2](cl(nc[at]));
          }
        }
      }
      h = nh;
      if (c.op == "LSTM") cs = nc;
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < H; ++j) {
          int64_t yi = c.batchwise ? ((b * c.seq + t) * c.dirs + d) * H + j : ((t * c.dirs + d) * c.batch + b) * H + j;
          Y.set_f64(yi, h[static_cast<size_t>(b * H + j)]);
        }
    }
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < H; ++j) {
        Yh.set_f64(hidx(d, b, j), h[static_cast<size_t>(b * H + j)]);
        Yc.set_f64(hidx(d, b, j), cs[static_cast<size_t>(b * H + j)]);
      }
  }
  if (c.op == "LSTM") return {Y, Yh, Yc};
  return {Y, Yh};
}

Case random_case(const std::string& op, Rng& rng) {
  Case c{op, rng.range(1, 5), rng.range(1, 4), rng.range(1, 5), rng.range(1, 5), 1, op == "RNN" ? 1 : op == "GRU" ? 3 : 4,
         false, rng.coin(), rng.coin(), rng.coin(), false, false, false, false, 0, {}};
  int dir = static_cast<int>(rng.range(0, 3));
  c.dirs = dir == 2 ? 2 : 1;
  c.reverse = dir == 1;
  c.c0 = op == "LSTM" && rng.coin();
  c.peep = op == "LSTM" && rng.coin();
  c.input_forget = op == "LSTM" && rng.coin(0.3);
  c.lbr = op == "GRU" && rng.coin();
  c.clip = rng.coin(0.3) ? 0.5 : 0;
  size_t per = op == "RNN" ? 1 : op == "GRU" ? 2 : 3;
  const char* names[] = {"Sigmoid", "Tanh", "Relu", "HardSigmoid", "Softsign"};
  if (rng.coin(0.5))
    for (size_t k = 0; k < per * static_cast<size_t>(c.dirs); ++k) c.acts.push_back(names[rng.range(0, 5)]);
  return c;
}

void check(const std::string& op, uint64_t seed) {
  Rng rng(seed * 7727 + op.size());
  Case c = random_case(op, rng);
  bool explicit_acts = !c.acts.empty();
  if (!explicit_acts) {
    std::vector<std::string> d = op == "RNN" ? std::vector<std::string>{"Tanh"}
                                 : op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                               : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t k = 0; k < c.dirs; ++k) c.acts.insert(c.acts.end(), d.begin(), d.end());
  }
  int64_t G = c.gates, H = c.hidden;
  auto rand = [&](const Dims& shape) { return testlib::random_tensor({DType::F32, shape}, rng, -0.8, 0.8); };
  Dims state = c.batchwise ? Dims{c.batch, c.dirs, H} : Dims{c.dirs, c.batch, H};
  std::vector<Tensor> in = {rand(c.batchwise ? Dims{c.batch, c.seq, c.input} : Dims{c.seq, c.batch, c.input}),
                            rand({c.dirs, G * H, c.input}), rand({c.dirs, G * H, H}), rand({c.dirs, 2 * G * H}),
                            Tensor(TensorType{DType::I32, {c.batch}}), rand(state), rand(state), rand({c.dirs, 3 * H})};
  for (int64_t b = 0; b < c.batch; ++b) in[4].set_i64(b, c.seq);
  std::vector<bool> given = {true, true, true, c.bias, rng.coin(), c.h0, c.c0, c.peep};
  testlib::OnnxModel m;
  m.opset = 14;
  testlib::OnnxNode n{op, {}, {}, {}, "", "node"};
  const char* names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  size_t count = op == "LSTM" ? 8 : 6;
  std::vector<Tensor> feed;
  for (size_t k = 0; k < count; ++k) {
    if (!given[k]) {
      n.inputs.push_back("");
      continue;
    }
    n.inputs.push_back(names[k]);
    if (k == 4) {
      m.initializers.push_back({names[k], in[k]});  // constant lengths
    } else {
      m.inputs.push_back({names[k], in[k].type()});
      feed.push_back(in[k]);
    }
  }
  n.outputs = op == "LSTM" ? std::vector<std::string>{"Y", "Y_h", "Y_c"} : std::vector<std::string>{"Y", "Y_h"};
  m.outputs = n.outputs;
  n.attrs.emplace_back("hidden_size", H);
  if (c.batchwise) n.attrs.emplace_back("layout", int64_t{1});
  if (c.dirs == 2 || c.reverse) n.attrs.emplace_back("direction", std::string(c.dirs == 2 ? "bidirectional" : "reverse"));
  if (c.clip > 0) n.attrs.emplace_back("clip", c.clip);
  if (c.lbr) n.attrs.emplace_back("linear_before_reset", int64_t{1});
  if (c.input_forget) n.attrs.emplace_back("input_forget", int64_t{1});
  if (explicit_acts) n.attrs.emplace_back("activations", c.acts);
  m.nodes.push_back(n);
  std::vector<Tensor> got = interp::run(testlib::import_model(m), feed);
  std::vector<Tensor> want = reference(c, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(testlib::compare_tensors(got[k], want[k], 1e-5, 1e-5), "") << "output " << k;
}

TEST(CoverageRnn, RandomCasesMatchTheDefinitions) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    for (uint64_t seed = 1; seed <= 16; ++seed) {
      SCOPED_TRACE(std::string(op) + " seed " + std::to_string(seed));
      check(op, seed);
    }
}

TEST(CoverageRnn, PeepholesOfAnotherDtypeAreAUserError) {
  testlib::OnnxModel m;
  m.opset = 14;
  m.inputs = {{"X", {DType::F32, {2, 1, 3}}}, {"W", {DType::F32, {1, 8, 3}}}, {"R", {DType::F32, {1, 8, 2}}},
              {"P", {DType::F64, {1, 6}}}};
  testlib::OnnxNode n{"LSTM", {"X", "W", "R", "", "", "", "", "P"}, {"Y"}, {{"hidden_size", int64_t{2}}}, "", "node"};
  m.nodes.push_back(n);
  m.outputs = {"Y"};
  std::string msg = testlib::error_of([&] { testlib::import_model(m); });
  EXPECT_NE(msg.find("node 'node' (LSTM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f64"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid
