// ISA flags and the model string: cpuid on x86-64, /proc/cpuinfo elsewhere.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "target/detect.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ORCHID_TARGET_X86 1
#endif

namespace orchid::target {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

#ifdef ORCHID_TARGET_X86

enum class Reg { Eax, Ebx, Ecx, Edx };
// Register state the OS must save (XCR0) for an extension to be usable.
enum class State { None, Avx, Avx512, Amx };

struct CpuidFlag {
  const char* name;  // as /proc/cpuinfo spells it (but sse3, which it calls pni)
  unsigned leaf, subleaf;
  Reg reg;
  int bit;
  State state;
};

// The extensions code generation may use. Bits: Intel SDM vol. 2A, CPUID, tables 3-8 and 3-10.
constexpr CpuidFlag kFlags[] = {
    {"sse", 1, 0, Reg::Edx, 25, State::None},          {"sse2", 1, 0, Reg::Edx, 26, State::None},
    {"sse3", 1, 0, Reg::Ecx, 0, State::None},          {"ssse3", 1, 0, Reg::Ecx, 9, State::None},
    {"fma", 1, 0, Reg::Ecx, 12, State::Avx},           {"sse4_1", 1, 0, Reg::Ecx, 19, State::None},
    {"sse4_2", 1, 0, Reg::Ecx, 20, State::None},       {"movbe", 1, 0, Reg::Ecx, 22, State::None},
    {"popcnt", 1, 0, Reg::Ecx, 23, State::None},       {"avx", 1, 0, Reg::Ecx, 28, State::Avx},
    {"f16c", 1, 0, Reg::Ecx, 29, State::Avx},          {"bmi1", 7, 0, Reg::Ebx, 3, State::None},
    {"avx2", 7, 0, Reg::Ebx, 5, State::Avx},           {"bmi2", 7, 0, Reg::Ebx, 8, State::None},
    {"avx512f", 7, 0, Reg::Ebx, 16, State::Avx512},    {"avx512dq", 7, 0, Reg::Ebx, 17, State::Avx512},
    {"avx512ifma", 7, 0, Reg::Ebx, 21, State::Avx512}, {"avx512cd", 7, 0, Reg::Ebx, 28, State::Avx512},
    {"avx512bw", 7, 0, Reg::Ebx, 30, State::Avx512},   {"avx512vl", 7, 0, Reg::Ebx, 31, State::Avx512},
    {"avx512vbmi", 7, 0, Reg::Ecx, 1, State::Avx512},  {"avx512_vbmi2", 7, 0, Reg::Ecx, 6, State::Avx512},
    {"gfni", 7, 0, Reg::Ecx, 8, State::None},          {"vaes", 7, 0, Reg::Ecx, 9, State::Avx},
    {"vpclmulqdq", 7, 0, Reg::Ecx, 10, State::Avx},    {"avx512_vnni", 7, 0, Reg::Ecx, 11, State::Avx512},
    {"avx512_bitalg", 7, 0, Reg::Ecx, 12, State::Avx512},
    {"avx512_vpopcntdq", 7, 0, Reg::Ecx, 14, State::Avx512},
    {"amx_bf16", 7, 0, Reg::Edx, 22, State::Amx},      {"avx512_fp16", 7, 0, Reg::Edx, 23, State::Avx512},
    {"amx_tile", 7, 0, Reg::Edx, 24, State::Amx},      {"amx_int8", 7, 0, Reg::Edx, 25, State::Amx},
    {"avx_vnni", 7, 1, Reg::Eax, 4, State::Avx},       {"avx512_bf16", 7, 1, Reg::Eax, 5, State::Avx512},
};

uint64_t xcr0() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;  // no OSXSAVE
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool state_enabled(State s, uint64_t xcr) {
  switch (s) {
    case State::None:
      return true;
    case State::Avx:  // SSE and AVX (YMM) state
      return (xcr & 0x6) == 0x6;
    case State::Avx512:  // plus opmask, ZMM_Hi256, Hi16_ZMM
      return (xcr & 0xe6) == 0xe6;
    case State::Amx:  // XTILECFG and XTILEDATA
      return (xcr & 0x60000) == 0x60000;
  }
  return false;
}

bool has_flag(const CpuidFlag& f, uint64_t xcr) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return ((r[static_cast<int>(f.reg)] >> f.bit) & 1u) && state_enabled(f.state, xcr);
}

std::string cpuid_brand() {
  unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext < 0x80000004u) return "";
  std::string s;
  for (unsigned leaf = 0x80000002u; leaf <= 0x80000004u; ++leaf) {
    unsigned r[4];
    __get_cpuid(leaf, &r[0], &r[1], &r[2], &r[3]);
    s.append(reinterpret_cast<const char*>(r), sizeof r);
  }
  return s.substr(0, s.find('\0'));
}

#endif  // ORCHID_TARGET_X86

std::string collapse_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool space = c == ' ' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The value of the first line "key<spaces>: value" of /proc/cpuinfo text.
std::string cpuinfo_value(std::string_view text, std::string_view key) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos || collapse_spaces(line.substr(0, colon)) != key) continue;
    return collapse_spaces(line.substr(colon + 1));
  }
  return "";
}

}  // namespace

std::vector<std::string> cpuinfo_flags(std::string_view cpuinfo_text) {
  std::string line = cpuinfo_value(cpuinfo_text, "flags");
  if (line.empty()) line = cpuinfo_value(cpuinfo_text, "Features");
  std::vector<std::string> flags;
  std::istringstream in(line);
  for (std::string f; in >> f;) flags.push_back(f == "pni" ? "sse3" : f);
  sort_unique(flags);
  return flags;
}

std::vector<std::string> host_isa() {
  std::vector<std::string> isa;
#ifdef ORCHID_TARGET_X86
  uint64_t xcr = xcr0();
  for (const CpuidFlag& f : kFlags)
    if (has_flag(f, xcr)) isa.push_back(f.name);
#else
  isa = cpuinfo_flags(read_file("/proc/cpuinfo"));
#endif
  sort_unique(isa);
  return isa;
}

std::string host_cpu_model() {
  std::string model;
#ifdef ORCHID_TARGET_X86
  model = collapse_spaces(cpuid_brand());
#endif
  if (model.empty()) model = cpuinfo_value(read_file("/proc/cpuinfo"), "model name");
  return model.empty() ? "unknown CPU" : model;
}

int simd_bits_for(const std::vector<std::string>& isa) {
  auto has = [&](const char* f) { return std::binary_search(isa.begin(), isa.end(), std::string(f)); };
  if (has("avx512f")) return 512;
  if (has("avx")) return 256;
  return 128;
}

}  // namespace orchid::target
