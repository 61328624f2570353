#include "slim_weights.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/aligned_buffer.h"
#include "runtime/checksum.h"
#include "runtime/plan.h"
#include "runtime/weights.h"
#include "support/error.h"
#include "support/half.h"

namespace orchid::bench {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMinRegenerated = 256;

// The float dtypes whose constants are regenerated: f32, and f16 and bf16 (--precision).
bool regenerated_dtype(ir::DType t) { return t == ir::DType::F32 || t == ir::DType::F16 || t == ir::DType::BF16; }

float get(const std::byte* at, ir::DType t, int64_t i) {
  if (t == ir::DType::F32) {
    float v = 0;
    std::memcpy(&v, at + i * 4, 4);
    return v;
  }
  uint16_t bits = 0;
  std::memcpy(&bits, at + i * 2, 2);
  return t == ir::DType::F16 ? f16_bits_to_f32(bits) : bf16_bits_to_f32(bits);
}

void put(std::byte* at, ir::DType t, int64_t i, float v) {
  if (t == ir::DType::F32) {
    std::memcpy(at + i * 4, &v, 4);
    return;
  }
  uint16_t bits = t == ir::DType::F16 ? f32_to_f16_bits(v) : f32_to_bf16_bits(v);
  std::memcpy(at + i * 2, &bits, 2);
}

// Uniform values in [-rms·√3, rms·√3) (that root-mean-square), from splitmix64 of seed + i,
// stored in t.
void fill(std::byte* out, ir::DType t, int64_t count, double rms, uint64_t seed) {
  double half = rms * std::sqrt(3.0);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    put(out, t, i, static_cast<float>((2 * u - 1) * half));
  }
}

// The root-mean-square of values stored in t, or a negative number where one is not finite.
double rms_of(const std::byte* v, ir::DType t, int64_t count) {
  double s = 0;
  for (int64_t i = 0; i < count; ++i) {
    float x = get(v, t, i);
    if (!std::isfinite(x)) return -1;
    s += static_cast<double>(x) * x;
  }
  return count > 0 ? std::sqrt(s / static_cast<double>(count)) : 0;
}

std::vector<char> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  ORCHID_USER_CHECK(in) << p.string() << ": cannot open";
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& p, const void* data, size_t bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  ORCHID_USER_CHECK(out) << p.string() << ": cannot write";
}

}  // namespace

void slim_artifact(const std::string& dir, const std::string& out, const std::string& arch) {
  runtime::Plan plan = runtime::read_plan(dir);
  runtime::AlignedBuffer w =
      runtime::read_weights((fs::path(dir) / plan.weights.file).string(), plan.weights.bytes, plan.weights.checksum);
  nlohmann::json regions = nlohmann::json::array(), kept = nlohmann::json::array();
  std::vector<char> blob;
  for (const runtime::PlanBuffer& b : plan.buffers) {
    if (b.kind != runtime::BufferKind::Constant || b.weights_offset < 0) continue;
    int64_t count = b.type.numel(), bytes = b.type.bytes();
    auto* at = reinterpret_cast<std::byte*>(w.data() + b.weights_offset);
    ir::DType t = b.type.dtype;
    double rms = regenerated_dtype(t) && count >= kMinRegenerated ? rms_of(at, t, count) : -1;
    if (rms >= 0) {
      auto seed = static_cast<uint64_t>(b.weights_offset);
      fill(at, t, count, rms, seed);
      regions.push_back({{"offset", b.weights_offset}, {"count", count}, {"rms", rms}, {"seed", seed},
                         {"dtype", std::string(ir::dtype_name(t))}});
    } else {
      kept.push_back({{"offset", b.weights_offset}, {"bytes", bytes}, {"at", blob.size()}});
      const char* from = reinterpret_cast<const char*>(w.data() + b.weights_offset);
      blob.insert(blob.end(), from, from + bytes);
    }
  }
  plan.weights.checksum = runtime::checksum_bytes(w.data(), static_cast<size_t>(plan.weights.bytes));
  std::vector<runtime::PlanLibrary> libraries;
  for (const runtime::PlanLibrary& l : plan.libraries)
    if (l.arch == arch) libraries.push_back(l);
  ORCHID_USER_CHECK(!libraries.empty() || plan.libraries.empty()) << dir << ": no CUBIN for " << arch;
  plan.libraries = libraries;
  fs::create_directories(out);
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    bool cubin = name.ends_with(".cubin") && name != "kernels." + arch + ".cubin";
    if (e.is_regular_file() && name != plan.weights.file && name != "report.html" && name != "plan.json" && !cubin)
      fs::copy_file(e.path(), fs::path(out) / name, fs::copy_options::overwrite_existing);
  }
  runtime::write_plan(plan, out);
  nlohmann::json j{{"bytes", plan.weights.bytes}, {"file", plan.weights.file}, {"regenerated", regions}, {"kept", kept}};
  std::string text = j.dump();
  write_all(fs::path(out) / "weights.slim.json", text.data(), text.size());
  write_all(fs::path(out) / "weights.slim.bin", blob.data(), blob.size());
}

void expand_weights(const std::string& dir) {
  fs::path header = fs::path(dir) / "weights.slim.json";
  if (!fs::exists(header)) return;
  std::vector<char> text = read_all(header);
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end());
  fs::path file = fs::path(dir) / j.at("file").get<std::string>();
  if (fs::exists(file)) return;
  std::vector<char> blob = read_all(fs::path(dir) / "weights.slim.bin");
  auto bytes = j.at("bytes").get<int64_t>();
  std::vector<char> w(static_cast<size_t>(bytes), 0);
  for (const nlohmann::json& r : j.at("regenerated")) {
    auto offset = r.at("offset").get<int64_t>(), count = r.at("count").get<int64_t>();
    std::optional<ir::DType> t = ir::parse_dtype(r.value("dtype", std::string("f32")));
    ORCHID_USER_CHECK(t && regenerated_dtype(*t))
        << header.string() << ": region dtype '" << r.value("dtype", std::string("f32")) << "' is not f32, f16 or bf16";
    ORCHID_USER_CHECK(offset >= 0 && count >= 0 && offset + count * ir::dtype_bytes(*t) <= bytes)
        << header.string() << ": bad region";
    fill(reinterpret_cast<std::byte*>(w.data() + offset), *t, count, r.at("rms").get<double>(),
         r.at("seed").get<uint64_t>());
  }
  for (const nlohmann::json& k : j.at("kept")) {
    auto offset = k.at("offset").get<int64_t>(), n = k.at("bytes").get<int64_t>(), at = k.at("at").get<int64_t>();
    ORCHID_USER_CHECK(offset >= 0 && n >= 0 && offset + n <= bytes && at >= 0 && at + n <= static_cast<int64_t>(blob.size()))
        << header.string() << ": bad kept bytes";
    std::memcpy(w.data() + offset, blob.data() + at, static_cast<size_t>(n));
  }
  write_all(file, w.data(), w.size());
}

}  // namespace orchid::bench
