// plan.json: exact round trip, and one test per validation error, each checking its message.
#include <gtest/gtest.h>

#include <cstring>

#include <functional>

#include <nlohmann/json.hpp>

#include "runtime/checksum.h"
#include "runtime/plan.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"
#include "artifact_util.h"

namespace orchid::runtime {
namespace {

using nlohmann::json;
using testlib::error_of;
using namespace testutil;

constexpr const char* kStepIr = R"(graph @s {
  input %y : f32[2,3]
  %z : f32[2,3] = opaque cumsum(%y) {axis=1, exclusive=0, reverse=0}
  output %z
}
)";

// x, w -> t (generated) -> y (generated) -> z (reference); outputs: y, a view of y, the
// input, the constant, and y again.
Plan sample_plan() {
  Plan p;
  p.isa = {"avx2", "fma"};
  p.target = "cpu-0123456789abcdef";
  p.graph_name = "sample";
  ir::TensorType t23{ir::DType::F32, {2, 3}};
  p.buffers = {buffer("x", t23, BufferKind::Input),
               buffer("w", {ir::DType::F32, {3}}, BufferKind::Constant),
               buffer("t", t23, BufferKind::Intermediate),
               buffer("y", t23, BufferKind::Output),
               buffer("y_flat", {ir::DType::F32, {6}}, BufferKind::Output, 3),
               buffer("z", t23, BufferKind::Output)};
  p.buffers[1].weights_offset = 64;
  p.inputs = {0};
  p.outputs = {3, 4, 0, 1, 3, 5};
  p.libraries = {PlanLibrary{"kernels_0.so", 0x0123456789abcdefull}};
  p.steps = {generated_step("add_w", {0, 1, 2}, 2, 0, 0, 4, 128),
             generated_step("relu", {2, 3}, 1, 0, 1, 2),
             library_step("cumsum", StepImpl::Reference, {3, 5}, 1, kStepIr)};
  p.steps[0].source_ops = {"Add_1", "Mul_2"};
  p.steps[0].checks = {"node 'Gather_1' reads 'w' along dim 0"};
  p.steps[0].flops = 12;
  p.steps[0].bytes = 84;
  p.weights = PlanWeights{"weights.bin", 76, 0xfedcba9876543210ull};
  return p;
}

TEST(RuntimePlan, JsonRoundTripIsExact) {
  Plan p = sample_plan();
  std::string text = plan_to_json(p);
  Plan back = plan_from_json(text);
  EXPECT_EQ(back, p);
  EXPECT_EQ(plan_to_json(back), text);
  EXPECT_NE(text.find("\"checksum\": \"0123456789abcdef\""), std::string::npos) << text;
}

// "flush_denormals" is written only when set, read back the same, and must be a boolean.
TEST(RuntimePlan, FlushDenormalsRoundTripsAndIsABoolean) {
  Plan p = sample_plan();
  EXPECT_FALSE(json::parse(plan_to_json(p)).contains("flush_denormals"));
  p.flush_denormals = true;
  std::string text = plan_to_json(p);
  EXPECT_EQ(json::parse(text)["flush_denormals"], true);
  EXPECT_EQ(plan_from_json(text), p);
  json j = json::parse(text);
  j["flush_denormals"] = "yes";
  std::string e = error_of([&] { plan_from_json(j.dump()); });
  EXPECT_NE(e.find("plan.json: flush_denormals: expected true or false"), std::string::npos) << e;
}

// A buffer between two oneDNN steps in nChw8c, nhwc or nChw16c: written as "layout", read back the same; plain
// buffers have no "layout" key.
TEST(RuntimePlan, LayoutsRoundTrip) {
  Plan p = sample_plan();
  p.buffers[2].type = {ir::DType::F32, {1, 8, 1, 1}};
  p.buffers[2].layout = BufferLayout::NChw8c;
  p.steps[0] = library_step("conv0", StepImpl::OneDnn, {0, 1, 2}, 2, kStepIr);
  p.steps[1] = library_step("conv1", StepImpl::OneDnn, {2, 3}, 1, kStepIr);
  std::string text = plan_to_json(p);
  EXPECT_EQ(plan_from_json(text), p);
  json j = json::parse(text);
  EXPECT_EQ(j["buffers"][2]["layout"], "nChw8c");
  EXPECT_FALSE(j["buffers"][3].contains("layout"));
  p.buffers[2].type = {ir::DType::F32, {1, 3, 1, 1}};
  p.buffers[2].layout = BufferLayout::Nhwc;
  text = plan_to_json(p);
  EXPECT_EQ(plan_from_json(text), p);
  EXPECT_EQ(json::parse(text)["buffers"][2]["layout"], "nhwc");
  // A Winograd step reads a buffer in nChw16c.
  p.buffers[2].type = {ir::DType::F32, {1, 16, 1, 1}};
  p.buffers[2].layout = BufferLayout::NChw16c;
  p.steps[1].impl = StepImpl::OneDnnWinograd;
  text = plan_to_json(p);
  EXPECT_EQ(plan_from_json(text), p);
  EXPECT_EQ(json::parse(text)["buffers"][2]["layout"], "nChw16c");
  EXPECT_EQ(json::parse(text)["steps"][1]["impl"], "onednn_winograd");
}

// Element positions in each layout, and the way back.
TEST(RuntimePlan, LayoutConversions) {
  auto iota = [](ir::Dims shape) {
    ir::Tensor t({ir::DType::F32, std::move(shape)});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(i));
    return t;
  };
  // [K=3, N=32] as [N/16=2, K, 16]: element (k, n) at (n/16)*48 + k*16 + n%16.
  ir::Tensor w = iota({3, 32});
  ir::Tensor panels = to_layout(w, BufferLayout::Panels16);
  EXPECT_EQ(panels.get_f64(0 * 48 + 2 * 16 + 5), w.get_f64(2 * 32 + 5));
  EXPECT_EQ(panels.get_f64(1 * 48 + 1 * 16 + 15), w.get_f64(1 * 32 + 31));
  EXPECT_EQ(from_layout(panels, BufferLayout::Panels16), w);
  // Its transpose [N=32, K=3] as panels16t: the same bytes as w's panels16.
  ir::Tensor wt = iota({32, 3});
  for (int64_t n = 0; n < 32; ++n)
    for (int64_t k = 0; k < 3; ++k) wt.set_f64(n * 3 + k, w.get_f64(k * 32 + n));
  ir::Tensor panels_t = to_layout(wt, BufferLayout::Panels16T);
  EXPECT_EQ(std::memcmp(panels_t.data(), panels.data(), static_cast<size_t>(panels.numel()) * 4), 0);
  EXPECT_EQ(from_layout(panels_t, BufferLayout::Panels16T), wt);
  EXPECT_TRUE(layout_fits(BufferLayout::Panels16T, {ir::DType::F32, {32, 3}}));
  EXPECT_FALSE(layout_fits(BufferLayout::Panels16T, {ir::DType::F32, {3, 32}}));
  // [N=2, C=16, H=1, W=3] as [N, C/8, H, W, 8]: element (n, c, 0, w) at ((n*2 + c/8)*3 + w)*8 + c%8.
  ir::Tensor x = iota({2, 16, 1, 3});
  ir::Tensor blocked = to_layout(x, BufferLayout::NChw8c);
  EXPECT_EQ(blocked.get_f64(((1 * 2 + 1) * 3 + 2) * 8 + 3), x.get_f64((1 * 16 + 11) * 3 + 2));
  EXPECT_EQ(from_layout(blocked, BufferLayout::NChw8c), x);
  // [N=2, C=32, H=1, W=3] as [N, C/16, H, W, 16]: element (n, c, 0, w) at ((n*2 + c/16)*3 + w)*16 + c%16.
  ir::Tensor x16 = iota({2, 32, 1, 3});
  ir::Tensor blocked16 = to_layout(x16, BufferLayout::NChw16c);
  EXPECT_EQ(blocked16.get_f64(((1 * 2 + 1) * 3 + 2) * 16 + 13), x16.get_f64((1 * 32 + 29) * 3 + 2));
  EXPECT_EQ(from_layout(blocked16, BufferLayout::NChw16c), x16);
  EXPECT_FALSE(layout_fits(BufferLayout::NChw16c, {ir::DType::F32, {1, 24, 2, 2}}));
  // [N=2, C=5, H=2, W=3] as [N, H, W, C]: element (n, c, h, w) at ((n*2 + h)*3 + w)*5 + c.
  ir::Tensor y = iota({2, 5, 2, 3});
  ir::Tensor nhwc = to_layout(y, BufferLayout::Nhwc);
  EXPECT_EQ(nhwc.get_f64(((1 * 2 + 1) * 3 + 2) * 5 + 4), y.get_f64(((1 * 5 + 4) * 2 + 1) * 3 + 2));
  EXPECT_EQ(from_layout(nhwc, BufferLayout::Nhwc), y);
  EXPECT_TRUE(layout_fits(BufferLayout::Nhwc, {ir::DType::F32, {1, 3, 2, 2}}));
  EXPECT_FALSE(layout_fits(BufferLayout::Nhwc, {ir::DType::F32, {3, 2, 2}}));
  EXPECT_FALSE(layout_fits(BufferLayout::Nhwc, {ir::DType::I32, {1, 3, 2, 2}}));
  EXPECT_FALSE(layout_fits(BufferLayout::Panels16, {ir::DType::F32, {3, 24}}));
  EXPECT_FALSE(layout_fits(BufferLayout::NChw8c, {ir::DType::F32, {1, 12, 2, 2}}));
}

TEST(RuntimePlan, WriteAndReadAFile) {
  testlib::TempDir dir;
  Plan p = sample_plan();
  write_plan(p, dir.str());
  EXPECT_EQ(read_plan(dir.str()), p);
}

TEST(RuntimePlan, MissingFileIsNamed) {
  testlib::TempDir dir;
  EXPECT_TRUE(contains(error_of([&] { read_plan(dir.str() + "/nothing"); }),
                       "nothing/plan.json: cannot open"));
}

TEST(RuntimePlan, ChecksumText) {
  EXPECT_EQ(checksum_hex(0x00ab), "00000000000000ab");
  EXPECT_EQ(parse_checksum_hex("00000000000000AB"), 0xabu);
  EXPECT_FALSE(parse_checksum_hex("ab"));
  EXPECT_FALSE(parse_checksum_hex("00000000000000ag"));
  EXPECT_EQ(checksum_bytes("", 0), 0xcbf29ce484222325ull);
}

TEST(RuntimePlan, SafeFileNames) {
  EXPECT_TRUE(is_safe_file_name("kernels_0.so"));
  EXPECT_TRUE(is_safe_file_name("a-b.C9"));
  for (const char* bad : {"", ".", "..", "../x.so", "a/b", "/abs", "sp ace", "é"})
    EXPECT_FALSE(is_safe_file_name(bad)) << bad;
}

struct Case {
  const char* name;
  std::function<void(json&)> edit;
  const char* message;
};

// Gives buffer b a shape and a layout that fits it.
void set_layout(json& j, int b, const json& shape, const char* layout) {
  j["buffers"][b]["shape"] = shape;
  j["buffers"][b]["layout"] = layout;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RuntimePlanError : public ::testing::TestWithParam<Case> {};

TEST_P(RuntimePlanError, MessageNamesTheField) {
  json j = json::parse(plan_to_json(sample_plan()));
  GetParam().edit(j);
  EXPECT_TRUE(contains(error_of([&] { plan_from_json(j.dump(), "art/plan.json"); }),
                       std::string("art/plan.json: ") + GetParam().message));
}

const Case kCases[] = {
    {"format", [](json& j) { j["format"] = "onnx"; }, "format: 'onnx' is not an Orchid plan"},
    {"version", [](json& j) { j["version"] = 2; }, "version: 2 is not supported"},
    {"missing_key", [](json& j) { j.erase("steps"); }, "steps: missing"},
    {"unknown_key", [](json& j) { j["buffers"][0]["colour"] = 1; },
     "buffers[0].colour: unknown key"},
    {"checks_of_a_library_step", [](json& j) { j["steps"][2]["checks"] = {"a check"}; },
     "steps[2].checks: not allowed for impl reference"},
    {"checks_not_strings", [](json& j) { j["steps"][0]["checks"] = {1}; }, "steps[0].checks"},
    {"wrong_type_int", [](json& j) { j["steps"][0]["tasks"] = "4"; },
     "steps[0].tasks: expected an integer"},
    {"wrong_type_string", [](json& j) { j["graph"] = 3; }, "graph: expected a string"},
    {"not_an_array", [](json& j) { j["inputs"] = 0; }, "inputs: expected an array"},
    {"not_an_object", [](json& j) { j["weights"] = 0; }, "weights: expected a JSON object"},
    {"negative", [](json& j) { j["steps"][0]["tasks"] = -1; },
     "steps[0].tasks: -1 is out of range"},
    {"buffer_id", [](json& j) { j["buffers"][1]["id"] = 7; },
     "buffers[1].id: must equal the buffer's position 1"},
    {"dtype", [](json& j) { j["buffers"][0]["dtype"] = "f33"; },
     "buffers[0].dtype: unknown dtype 'f33'"},
    {"shape_negative", [](json& j) { j["buffers"][0]["shape"][1] = -3; },
     "buffers[0].shape[1]: -3 is out of range"},
    {"shape_huge", [](json& j) { j["buffers"][0]["shape"] = {1ll << 40, 1ll << 40}; },
     "buffers[0].shape: [1099511627776,1099511627776] is too large"},
    {"kind", [](json& j) { j["buffers"][0]["kind"] = "temp"; },
     "buffers[0].kind: unknown kind 'temp'"},
    {"constant_without_offset", [](json& j) { j["buffers"][1].erase("weights_offset"); },
     "buffers[1].weights_offset: required for constants and only for them"},
    {"offset_on_intermediate", [](json& j) { j["buffers"][2]["weights_offset"] = 0; },
     "buffers[2].weights_offset: required for constants and only for them"},
    {"offset_unaligned", [](json& j) { j["buffers"][1]["weights_offset"] = 4; },
     "buffers[1] ('w').weights_offset: 4 is not a multiple of 64"},
    {"offset_outside", [](json& j) { j["weights"]["bytes"] = 70; },
     "buffers[1] ('w').weights_offset: 64 + 12 bytes lies outside the weights (70 bytes)"},
    {"alias_range", [](json& j) { j["buffers"][4]["alias"] = 99; },
     "buffers[4] ('y_flat').alias: 99 is not another buffer's id"},
    {"alias_self", [](json& j) { j["buffers"][4]["alias"] = 4; },
     "buffers[4] ('y_flat').alias: 4 is not another buffer's id"},
    {"alias_size", [](json& j) { j["buffers"][4]["shape"] = {5}; },
     "buffers[4] ('y_flat').alias: f32[5] (20 bytes) cannot view buffer 3 ('y') of f32[2,3] (24 bytes)"},
    {"alias_kind", [](json& j) { j["buffers"][0]["alias"] = 2; },
     "buffers[0] ('x').alias: a view must be of kind intermediate or output, not input"},
    {"alias_cycle",
     [](json& j) { j["buffers"][3]["alias"] = 4; }, "buffers[3].alias: the aliases form a cycle"},
    {"input_range", [](json& j) { j["inputs"] = {17}; }, "inputs[0]: 17 is not a buffer id"},
    {"input_kind", [](json& j) { j["inputs"] = {0, 2}; },
     "inputs[1]: buffer 2 ('t') has kind intermediate, not input"},
    {"input_twice", [](json& j) { j["inputs"] = {0, 0}; },
     "inputs[1]: buffer 0 ('x') is listed twice"},
    {"input_unlisted", [](json& j) { j["inputs"] = json::array(); },
     "inputs: buffer 0 ('x') has kind input but is not listed"},
    {"input_names",
     [](json& j) {
       j["buffers"][2]["kind"] = "input";
       j["buffers"][2]["name"] = "x";
       j["inputs"] = {0, 2};
     },
     "inputs[1]: two inputs are named 'x'"},
    {"output_range", [](json& j) { j["outputs"][0] = -1; }, "outputs[0]: -1 is out of range"},
    {"output_intermediate", [](json& j) { j["outputs"].push_back(2); },
     "outputs[6]: buffer 2 ('t') has kind intermediate (expected output, input or constant)"},
    {"output_unlisted", [](json& j) { j["outputs"] = {3, 4}; },
     "outputs: buffer 5 ('z') has kind output but is not listed"},
    {"library_file", [](json& j) { j["libraries"][0]["file"] = "../x.so"; },
     "libraries[0].file: '../x.so' is not a plain file name"},
    {"weights_file", [](json& j) { j["weights"]["file"] = "/etc/passwd"; },
     "weights.file: '/etc/passwd' is not a plain file name"},
    {"checksum", [](json& j) { j["libraries"][0]["checksum"] = "xyz"; },
     "libraries[0].checksum: 'xyz' is not a checksum (16 hex digits)"},
    {"isa_flag", [](json& j) { j["isa"] = {""}; }, "isa: an empty flag"},
    {"impl", [](json& j) { j["steps"][0]["impl"] = "metal"; },
     "steps[0].impl: unknown impl 'metal' (expected generated, onednn, onednn_winograd, reference, cuda, cublaslt or cudnn)"},
    {"cuda_step_in_cpu_plan", [](json& j) {
       j["steps"][0] = {{"name", "k"}, {"impl", "cuda"}, {"args", j["steps"][0]["args"]},
                        {"num_inputs", j["steps"][0]["num_inputs"]}, {"kernel", 0}, {"tasks", 1}, {"threads", 32},
                        {"shared_bytes", 0}, {"scratch_bytes", 0}, {"source_ops", json::array()}, {"flops", 0},
                        {"bytes", 0}};
     },
     "steps[0] ('k'): a cuda step in a cpu plan"},
    {"device", [](json& j) { j["device"] = "tpu"; }, "device: unknown device 'tpu' (expected cpu or cuda)"},
    {"precision", [](json& j) { j["precision"] = "fp8"; }, "precision: unknown precision 'fp8' (expected fp32, tf32, fp16 or bf16)"},
    {"tf32_cpu_plan", [](json& j) { j["precision"] = "tf32"; }, "precision: tf32 is for cuda plans only"},
    {"cudnn_step_in_cpu_plan", [](json& j) {
       j["steps"][0] = {{"name", "c"}, {"impl", "cudnn"}, {"args", j["steps"][0]["args"]},
                        {"num_inputs", j["steps"][0]["num_inputs"]}, {"ir", "graph"}, {"source_ops", json::array()},
                        {"flops", 0}, {"bytes", 0}};
     },
     "steps[0] ('c'): a cudnn step in a cpu plan"},
    {"num_inputs", [](json& j) { j["steps"][0]["num_inputs"] = 3; },
     "steps[0] ('add_w'): num_inputs: 3 leaves no output among 3 args"},
    {"arg_range", [](json& j) { j["steps"][1]["args"][1] = 42; },
     "steps[1] ('relu'): args[1]: 42 is not a buffer id"},
    {"library_index", [](json& j) { j["steps"][1]["library"] = 3; },
     "steps[1] ('relu'): library: 3 is not a library index (the plan has 1)"},
    {"generated_with_ir", [](json& j) { j["steps"][0]["ir"] = "graph"; },
     "steps[0].ir: not allowed for impl generated"},
    {"generated_without_tasks", [](json& j) { j["steps"][0].erase("tasks"); },
     "steps[0].tasks: missing"},
    {"library_with_tasks", [](json& j) { j["steps"][2]["tasks"] = 1; },
     "steps[2].tasks: not allowed for impl reference"},
    {"library_without_ir", [](json& j) { j["steps"][2]["ir"] = ""; },
     "steps[2] ('cumsum'): ir: missing"},
    {"read_before_write", [](json& j) { std::swap(j["steps"][0], j["steps"][1]); },
     "steps[0] ('relu'): reads buffer 2 ('t') before any step writes it"},
    {"writes_input", [](json& j) { j["steps"][1]["args"][1] = 0; },
     "steps[1] ('relu'): writes buffer 0 ('x'), whose memory is the caller's input"},
    {"writes_constant", [](json& j) { j["steps"][1]["args"][1] = 1; },
     "steps[1] ('relu'): writes buffer 1 ('w'), whose memory is a constant's"},
    {"in_place",
     [](json& j) { j["steps"][2]["args"] = {3, 4}; },
     "steps[2] ('cumsum'): writes buffer 4 ('y_flat'), whose memory it also reads"},
    {"writes_twice",
     [](json& j) { j["steps"][1]["args"] = {2, 3, 4}; },
     "steps[1] ('relu'): writes the memory of buffer 4 ('y_flat') twice"},
    {"never_written", [](json& j) { j["steps"].erase(2); },
     "buffer 5 ('z') is never written by any step"},
    {"layout_name", [](json& j) { j["buffers"][2]["layout"] = "chwn"; },
     "buffers[2].layout: unknown layout 'chwn' (expected plain, nChw8c, nChw16c, nhwc, panels16 or panels16t)"},
    {"layout_fit", [](json& j) { j["buffers"][2]["layout"] = "nChw8c"; },
     "buffers[2] ('t').layout: nChw8c does not fit f32[2,3]"},
    {"layout_kind",
     [](json& j) { set_layout(j, 0, {1, 8, 1, 1}, "nChw8c"); },
     "buffers[0] ('x').layout: nChw8c is only for intermediates that are not views"},
    {"layout_viewed",
     [](json& j) {
       set_layout(j, 2, {1, 8, 1, 1}, "nChw8c");
       j["buffers"][4]["alias"] = 2;
     },
     "buffers[2] ('t').layout: nChw8c, yet buffer 4 ('y_flat') is a view of it"},
    {"layout_generated_step",
     [](json& j) { set_layout(j, 2, {1, 8, 1, 1}, "nChw8c"); },
     "buffers[2] ('t').layout: nChw8c, yet steps[0] ('add_w'), a generated step, uses it (only onednn and onednn_winograd steps may)"},
    {"layout_panels_fit", [](json& j) { j["buffers"][1]["layout"] = "panels16"; },
     "buffers[1] ('w').layout: panels16 does not fit f32[3]"},
    {"layout_panels_kind",
     [](json& j) { set_layout(j, 2, {2, 16}, "panels16"); },
     "buffers[2] ('t').layout: panels16 is only for constants that are not views"},
    {"layout_panels_output",
     [](json& j) {
       set_layout(j, 1, {2, 16}, "panels16");
       j["weights"]["bytes"] = 1024;
     },
     "buffers[1] ('w').layout: panels16, yet it is listed in outputs (callers get plain bytes)"},
    {"not_an_object_at_top", [](json& j) { j = json("{"); }, "top level: expected a JSON object"},
};

INSTANTIATE_TEST_SUITE_P(All, RuntimePlanError, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RuntimePlan, NotJson) {
  EXPECT_EQ(error_of([] { plan_from_json("{", "a/plan.json"); }), "a/plan.json: not valid JSON");
}

TEST(RuntimePlan, AliasRootFollowsChains) {
  Plan p = sample_plan();
  p.buffers.push_back(buffer("y_flat2", {ir::DType::F32, {3, 2}}, BufferKind::Intermediate, 4));
  EXPECT_EQ(alias_root(p, 6), 3);
  EXPECT_EQ(alias_root(p, 3), 3);
  validate_plan(p);
}

}  // namespace
}  // namespace orchid::runtime
