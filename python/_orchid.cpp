// The extension module behind the `orchid` Python package (python/orchid/__init__.py): the
// compiler (driver::compile_onnx with this machine's options) and CPU artifacts run on NumPy
// arrays. Orchid's errors arrive as orchid.OrchidError with the same message; the GIL is
// released while Orchid compiles or runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "driver/host_options.h"
#include "driver/pipeline.h"
#include "orchid/kernel_abi.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "support/cache_paths.h"
#include "support/error.h"

namespace py = pybind11;

namespace {

using namespace orchid;

// NumPy's name of an Orchid element type; none for bf16, which NumPy lacks.
std::optional<std::string> numpy_name(ir::DType t) {
  switch (t) {
    case ir::DType::F32: return "float32";
    case ir::DType::F16: return "float16";
    case ir::DType::F64: return "float64";
    case ir::DType::I8: return "int8";
    case ir::DType::I16: return "int16";
    case ir::DType::I32: return "int32";
    case ir::DType::I64: return "int64";
    case ir::DType::U8: return "uint8";
    case ir::DType::U16: return "uint16";
    case ir::DType::U32: return "uint32";
    case ir::DType::U64: return "uint64";
    case ir::DType::Bool: return "bool";
    case ir::DType::BF16: return std::nullopt;
  }
  return std::nullopt;
}

std::filesystem::path cache_root(const std::string& given) {
  if (!given.empty()) return given;
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  return orchid_cache_root({home ? home : "", xdg ? xdg : ""}, "cache_dir");
}

// orchid_exe: the `orchid` program, which runs candidate artifacts when implementations are
// chosen by timing them (empty: nothing is measured); db: the tuning database ("" : the
// cache's tuning.db). shapes: the dims of inputs with dynamic ones, by name. gpu: a CUDA
// preset for target cuda ("": the GPU present, else h100). precision: fp32, or for target
// cuda tf32, fp16 or bf16 (`orchid compile --precision`); the tolerance defaults by it.
py::dict compile(const std::string& model, const std::string& out, const std::string& target,
                 const std::string& strategy, bool rewrite, const std::string& cache, uint64_t seed,
                 std::optional<double> tolerance, const std::map<std::string, std::vector<int64_t>>& shapes,
                 const std::string& orchid_exe, const std::string& db, const std::string& gpu,
                 const std::string& precision) {
  ORCHID_USER_CHECK(target == "cpu" || target == "cuda") << "target: '" << target << "' (expected cpu or cuda)";
  ORCHID_USER_CHECK(gpu.empty() || target == "cuda") << "gpu: '" << gpu << "' is for target cuda";
  std::optional<runtime::PlanPrecision> p = runtime::parse_plan_precision(precision);
  ORCHID_USER_CHECK(p) << "precision: '" << precision << "' (expected " << runtime::plan_precision_names() << ")";
  std::optional<orchestrate::Strategy> s =
      strategy.empty() ? orchestrate::default_strategy(target == "cuda", !orchid_exe.empty())
                       : orchestrate::parse_strategy(strategy);
  ORCHID_USER_CHECK(s) << "orchestrate: '" << strategy << "' (expected primitive, per-op, greedy or optimal)";
  driver::CompileResult r;
  std::vector<std::string> notes;
  {
    py::gil_scoped_release unlocked;
    std::filesystem::path root = cache_root(cache);
    driver::CompileOptions o = driver::host_compile_options(model, out, target == "cuda", *s, rewrite, root, gpu);
    for (const auto& [name, dims] : shapes) o.import.shapes[name] = ir::Dims(dims.begin(), dims.end());
    o.verify_seed = seed;
    o.build.precision = *p;
    o.tolerance = tolerance;
    r = driver::compile_measured(o, orchid_exe, db.empty() ? root / "tuning.db" : std::filesystem::path(db),
                                 [&](const std::string& note) { notes.push_back(note); });
  }
  for (const std::string& note : notes)
    if (PyErr_WarnEx(PyExc_UserWarning, ("orchid: " + note).c_str(), 1) < 0) throw py::error_already_set();
  py::dict d;
  d["path"] = r.out_dir;
  d["verified"] = r.verified;
  d["not_verified"] = r.not_verified;
  d["summary"] = r.report_summary;
  d["verification"] = r.verified ? r.verify.summary() : std::string();
  return d;
}

// A CPU artifact loaded once, with one session; runs are serialized (a session runs on one
// thread at a time).
class Artifact {
 public:
  // threads: the kernels' OpenMP threads (<= 0: OpenMP's default).
  Artifact(const std::string& dir, int threads) {
    py::gil_scoped_release unlocked;
    model_ = runtime::Model::load(dir);
    session_ = std::make_unique<runtime::Session>(model_, runtime::SessionOptions{threads});
  }
  int threads() const { return session_->threads(); }

  // (name, Orchid dtype, shape, NumPy dtype or None) per buffer.
  py::list specs(const std::vector<int32_t>& ids) const {
    py::list out;
    for (int32_t id : ids) {
      const runtime::PlanBuffer& b = model_->plan().buffers[static_cast<size_t>(id)];
      py::tuple shape(b.type.shape.size());
      for (size_t i = 0; i < b.type.shape.size(); ++i) shape[i] = b.type.shape[i];
      std::optional<std::string> numpy = numpy_name(b.type.dtype);
      out.append(py::make_tuple(b.name, std::string(ir::dtype_name(b.type.dtype)), shape,
                                numpy ? py::object(py::dtype(*numpy)) : py::object(py::none())));
    }
    return out;
  }
  py::list inputs() const { return specs(model_->plan().inputs); }
  py::list outputs() const { return specs(model_->plan().outputs); }

  // Arrays in input order, each C-contiguous of its input's dtype and shape (the package
  // converts what it can); the outputs as new arrays.
  py::list run(const std::vector<py::array>& arrays) {
    const runtime::Plan& plan = model_->plan();
    ORCHID_USER_CHECK(arrays.size() == plan.inputs.size())
        << plan.graph_name << ": " << plan.inputs.size() << " inputs expected, got " << arrays.size();
    std::vector<const void*> in;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const runtime::PlanBuffer& b = plan.buffers[static_cast<size_t>(plan.inputs[i])];
      check_array(arrays[i], b);
      in.push_back(arrays[i].data());
    }
    std::vector<py::array> outs;
    std::vector<void*> out;
    for (int32_t id : plan.outputs) {
      outs.push_back(aligned_array(plan.buffers[static_cast<size_t>(id)]));
      out.push_back(outs.back().mutable_data());
    }
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(running_);
      session_->run(in, out);
    }
    py::list result;
    for (py::array& a : outs) result.append(a);
    return result;
  }

 private:
  // A new array for buffer b whose data is ORCHID_ALIGN-aligned, so that the session writes
  // the output in place rather than through a copy (runtime/session.h).
  // Sizes and strides come from Orchid's type, not from py::dtype::itemsize, whose field
  // moved in NumPy 2 (an older pybind11, such as Debian 12's, reads it wrongly there).
  static py::array aligned_array(const runtime::PlanBuffer& b) {
    py::dtype t = dtype_of(b);
    auto bytes = static_cast<py::ssize_t>(b.type.bytes());
    py::array_t<uint8_t> owner(bytes + ORCHID_ALIGN);
    auto at = reinterpret_cast<uintptr_t>(owner.mutable_data());
    py::ssize_t skip = static_cast<py::ssize_t>((ORCHID_ALIGN - at % ORCHID_ALIGN) % ORCHID_ALIGN);
    std::vector<py::ssize_t> shape(b.type.shape.begin(), b.type.shape.end()), strides;
    for (int64_t elements : ir::row_major_strides(b.type.shape)) strides.push_back(elements * ir::dtype_bytes(b.type.dtype));
    return py::array(t, shape, strides, owner.mutable_data() + skip, owner);
  }

  static py::dtype dtype_of(const runtime::PlanBuffer& b) {
    std::optional<std::string> name = numpy_name(b.type.dtype);
    ORCHID_USER_CHECK(name) << "'" << b.name << "' is " << ir::dtype_name(b.type.dtype) << ", which NumPy has no type for";
    return py::dtype(*name);
  }

  static void check_array(const py::array& a, const runtime::PlanBuffer& b) {
    std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
    ORCHID_USER_CHECK(a.dtype().is(dtype_of(b)) && shape == b.type.shape)
        << "input '" << b.name << "' must be " << ir::type_str(b.type) << ", got a "
        << py::str(a.dtype()).cast<std::string>() << " array of shape " << ir::dims_str(shape);
    ORCHID_USER_CHECK(a.flags() & py::array::c_style) << "input '" << b.name << "' must be C-contiguous";
  }

  std::shared_ptr<const runtime::Model> model_;
  std::unique_ptr<runtime::Session> session_;
  std::mutex running_;
};

}  // namespace

PYBIND11_MODULE(_orchid, m) {
  m.doc() = "Orchid's compiler and CPU runtime (use the orchid package).";
  static py::exception<orchid::UserError> error(m, "OrchidError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const orchid::UserError& e) {
      error(e.what());
    } catch (const orchid::InternalError& e) {
      error((std::string("internal error: ") + e.what()).c_str());
    }
  });
  m.def("compile", &compile, py::arg("model"), py::arg("out"), py::arg("target"), py::arg("orchestrate"),
        py::arg("rewrite"), py::arg("cache_dir"), py::arg("seed"), py::arg("tolerance"), py::arg("shapes"),
        py::arg("orchid_exe"), py::arg("db"), py::arg("gpu"), py::arg("precision"));
  py::class_<Artifact>(m, "Artifact")
      .def(py::init<const std::string&, int>())
      .def("threads", &Artifact::threads)
      .def("inputs", &Artifact::inputs)
      .def("outputs", &Artifact::outputs)
      .def("run", &Artifact::run);
}
