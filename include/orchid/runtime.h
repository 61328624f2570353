/* Orchid's runtime as a plain C API: load an artifact directory (plan.json, kernel libraries,
 * weights.bin) and run it. No C++ exception crosses this boundary.
 *
 * A model is immutable once loaded and may be shared by threads; each thread runs it through
 * its own session. Freeing a model while sessions of it live is allowed (they keep what they
 * need alive).
 *
 * Errors: functions that can fail return 0 on success and nonzero on failure, writing a
 * NUL-terminated message (truncated to err_len bytes) to `err` when err is not NULL and
 * err_len > 0. Accessors return NULL, -1 or 0 for an index out of range.
 *
 * Tensors are dense, row-major, little-endian, of the dtype and shape the accessors give.
 * Pointers aligned to 64 bytes are used in place; others cost a copy. Outputs must not overlap
 * each other or the inputs. */
#ifndef ORCHID_RUNTIME_H
#define ORCHID_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct orchid_model orchid_model;
typedef struct orchid_session orchid_session;

int orchid_model_load(const char* dir, orchid_model** out, char* err, size_t err_len);
void orchid_model_free(orchid_model* model); /* NULL is allowed */

size_t orchid_model_num_inputs(const orchid_model* model);
size_t orchid_model_num_outputs(const orchid_model* model);
/* Valid as long as the model. */
const char* orchid_model_input_name(const orchid_model* model, size_t i);
const char* orchid_model_output_name(const orchid_model* model, size_t i);
/* "f32", "f16", "bf16", "f64", "i8" ... "i64", "u8" ... "u64", "bool"; valid as long as the model. */
const char* orchid_model_input_dtype(const orchid_model* model, size_t i);
const char* orchid_model_output_dtype(const orchid_model* model, size_t i);
int64_t orchid_model_input_rank(const orchid_model* model, size_t i);
int64_t orchid_model_output_rank(const orchid_model* model, size_t i);
/* Writes rank() dims to `out`; returns 0, or -1 for an index out of range. */
int orchid_model_input_dims(const orchid_model* model, size_t i, int64_t* out);
int orchid_model_output_dims(const orchid_model* model, size_t i, int64_t* out);
/* Size of the tensor in bytes; -1 for an index out of range. */
int64_t orchid_model_input_bytes(const orchid_model* model, size_t i);
int64_t orchid_model_output_bytes(const orchid_model* model, size_t i);

/* A session with as many threads as OpenMP's default (omp_get_max_threads()). */
int orchid_session_create(const orchid_model* model, orchid_session** out, char* err,
                          size_t err_len);
/* num_threads <= 0: the default. */
int orchid_session_create_with_threads(const orchid_model* model, int num_threads,
                                       orchid_session** out, char* err, size_t err_len);
/* One pointer per input and per output, in the model's order. */
int orchid_session_run(orchid_session* session, const void* const* inputs, void* const* outputs,
                       char* err, size_t err_len);
void orchid_session_free(orchid_session* session); /* NULL is allowed */

#ifdef __cplusplus
}
#endif

#endif /* ORCHID_RUNTIME_H */
