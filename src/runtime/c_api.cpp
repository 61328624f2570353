// The C API (include/orchid/runtime.h) over Model and Session. Every entry point catches
// everything: a C caller cannot unwind a C++ exception.
#include "orchid/runtime.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "runtime/session.h"
#include "support/error.h"

// Names and dtypes as NUL-terminated strings that live as long as the model.
struct orchid_model {
  std::shared_ptr<const orchid::runtime::Model> model;
  std::vector<std::string> input_dtypes, output_dtypes;
};

struct orchid_session {
  std::unique_ptr<orchid::runtime::Session> session;
};

namespace {

using orchid::runtime::Plan;
using orchid::runtime::PlanBuffer;

void set_error(char* err, size_t len, const char* msg) {
  if (err == nullptr || len == 0) return;
  size_t n = std::min(len - 1, std::strlen(msg));
  std::memcpy(err, msg, n);
  err[n] = '\0';
}

// Runs `fn`, turning any exception into a nonzero return and a message.
template <class F>
int guarded(char* err, size_t len, F&& fn) {
  try {
    fn();
    set_error(err, len, "");
    return 0;
  } catch (const std::exception& e) {
    set_error(err, len, e.what());
  } catch (...) {
    set_error(err, len, "unknown error");
  }
  return 1;
}

const PlanBuffer* input_buffer(const orchid_model* m, size_t i) {
  if (m == nullptr) return nullptr;
  const Plan& p = m->model->plan();
  return i < p.inputs.size() ? &p.buffers[static_cast<size_t>(p.inputs[i])] : nullptr;
}

const PlanBuffer* output_buffer(const orchid_model* m, size_t i) {
  if (m == nullptr) return nullptr;
  const Plan& p = m->model->plan();
  return i < p.outputs.size() ? &p.buffers[static_cast<size_t>(p.outputs[i])] : nullptr;
}

int write_dims(const PlanBuffer* b, int64_t* out) {
  if (b == nullptr || out == nullptr) return -1;
  std::copy(b->type.shape.begin(), b->type.shape.end(), out);
  return 0;
}

std::vector<std::string> dtype_texts(const Plan& p, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t b : ids)
    out.emplace_back(orchid::ir::dtype_name(p.buffers[static_cast<size_t>(b)].type.dtype));
  return out;
}

}  // namespace

extern "C" {

int orchid_model_load(const char* dir, orchid_model** out, char* err, size_t err_len) {
  if (out != nullptr) *out = nullptr;
  return guarded(err, err_len, [&] {
    if (dir == nullptr || out == nullptr)
      throw orchid::UserError("orchid_model_load: null argument");
    auto m = std::make_unique<orchid_model>();
    m->model = orchid::runtime::Model::load(dir);
    m->input_dtypes = dtype_texts(m->model->plan(), m->model->plan().inputs);
    m->output_dtypes = dtype_texts(m->model->plan(), m->model->plan().outputs);
    *out = m.release();
  });
}

void orchid_model_free(orchid_model* model) { delete model; }

size_t orchid_model_num_inputs(const orchid_model* m) {
  return m ? m->model->plan().inputs.size() : 0;
}
size_t orchid_model_num_outputs(const orchid_model* m) {
  return m ? m->model->plan().outputs.size() : 0;
}

const char* orchid_model_input_name(const orchid_model* m, size_t i) {
  const PlanBuffer* b = input_buffer(m, i);
  return b ? b->name.c_str() : nullptr;
}
const char* orchid_model_output_name(const orchid_model* m, size_t i) {
  const PlanBuffer* b = output_buffer(m, i);
  return b ? b->name.c_str() : nullptr;
}

const char* orchid_model_input_dtype(const orchid_model* m, size_t i) {
  return input_buffer(m, i) ? m->input_dtypes[i].c_str() : nullptr;
}
const char* orchid_model_output_dtype(const orchid_model* m, size_t i) {
  return output_buffer(m, i) ? m->output_dtypes[i].c_str() : nullptr;
}

int64_t orchid_model_input_rank(const orchid_model* m, size_t i) {
  const PlanBuffer* b = input_buffer(m, i);
  return b ? b->type.rank() : -1;
}
int64_t orchid_model_output_rank(const orchid_model* m, size_t i) {
  const PlanBuffer* b = output_buffer(m, i);
  return b ? b->type.rank() : -1;
}

int orchid_model_input_dims(const orchid_model* m, size_t i, int64_t* out) {
  return write_dims(input_buffer(m, i), out);
}
int orchid_model_output_dims(const orchid_model* m, size_t i, int64_t* out) {
  return write_dims(output_buffer(m, i), out);
}

int64_t orchid_model_input_bytes(const orchid_model* m, size_t i) {
  const PlanBuffer* b = input_buffer(m, i);
  return b ? b->type.bytes() : -1;
}
int64_t orchid_model_output_bytes(const orchid_model* m, size_t i) {
  const PlanBuffer* b = output_buffer(m, i);
  return b ? b->type.bytes() : -1;
}

int orchid_session_create_with_threads(const orchid_model* model, int num_threads,
                                       orchid_session** out, char* err, size_t err_len) {
  if (out != nullptr) *out = nullptr;
  return guarded(err, err_len, [&] {
    if (model == nullptr || out == nullptr)
      throw orchid::UserError("orchid_session_create: null argument");
    auto s = std::make_unique<orchid_session>();
    s->session = std::make_unique<orchid::runtime::Session>(
        model->model, orchid::runtime::SessionOptions{num_threads});
    *out = s.release();
  });
}

int orchid_session_create(const orchid_model* model, orchid_session** out, char* err,
                          size_t err_len) {
  return orchid_session_create_with_threads(model, 0, out, err, err_len);
}

int orchid_session_run(orchid_session* session, const void* const* inputs, void* const* outputs,
                       char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (session == nullptr) throw orchid::UserError("orchid_session_run: null session");
    const Plan& p = session->session->model().plan();
    if ((inputs == nullptr && !p.inputs.empty()) || (outputs == nullptr && !p.outputs.empty()))
      throw orchid::UserError("orchid_session_run: null input or output array");
    session->session->run(std::span<const void* const>(inputs, p.inputs.size()),
                          std::span<void* const>(outputs, p.outputs.size()));
  });
}

void orchid_session_free(orchid_session* session) { delete session; }

}  // extern "C"
