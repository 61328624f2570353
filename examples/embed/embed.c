/* Running an Orchid artifact from C.
 *
 *   orchid_embed_example ARTIFACT_DIR
 *
 * Loads the artifact, fills every input with a deterministic pattern, runs it once and prints
 * each output's name, dtype, shape and first values. Exit code 0 on success, 1 on an error
 * (printed to stderr). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchid/runtime.h"

enum { kAlign = 64, kShown = 8 };

/* Memory of at least `bytes` bytes, 64-byte aligned so that the runtime uses it in place. */
static void* alloc_tensor(int64_t bytes) {
  size_t n = (size_t)((bytes + kAlign - 1) / kAlign * kAlign);
  return aligned_alloc(kAlign, n > 0 ? n : kAlign);
}

/* Element i of the pattern: small values that every dtype holds exactly. */
static double pattern(int64_t i) { return (double)(i % 7) - 3.0; }

static void fill(void* data, const char* dtype, int64_t bytes) {
  int64_t i;
  if (strcmp(dtype, "f32") == 0) {
    for (i = 0; i < bytes / 4; ++i) ((float*)data)[i] = (float)(0.25 * pattern(i));
  } else if (strcmp(dtype, "f64") == 0) {
    for (i = 0; i < bytes / 8; ++i) ((double*)data)[i] = 0.25 * pattern(i);
  } else if (strcmp(dtype, "i32") == 0) {
    for (i = 0; i < bytes / 4; ++i) ((int32_t*)data)[i] = (int32_t)pattern(i);
  } else if (strcmp(dtype, "i64") == 0) {
    for (i = 0; i < bytes / 8; ++i) ((int64_t*)data)[i] = (int64_t)pattern(i);
  } else if (strcmp(dtype, "bool") == 0) {
    for (i = 0; i < bytes; ++i) ((uint8_t*)data)[i] = (uint8_t)(i % 2);
  } else { /* other dtypes: a byte pattern */
    for (i = 0; i < bytes; ++i) ((uint8_t*)data)[i] = (uint8_t)(i % 5);
  }
}

/* Bytes of an element of the dtypes printed as numbers; 0 for others (printed as bytes). */
static int64_t numeric_bytes(const char* dtype) {
  if (strcmp(dtype, "f32") == 0 || strcmp(dtype, "i32") == 0) return 4;
  if (strcmp(dtype, "f64") == 0 || strcmp(dtype, "i64") == 0) return 8;
  return 0;
}

static void print_value(const void* data, const char* dtype, int64_t i) {
  if (strcmp(dtype, "f32") == 0) printf(" %g", (double)((const float*)data)[i]);
  else if (strcmp(dtype, "f64") == 0) printf(" %g", ((const double*)data)[i]);
  else if (strcmp(dtype, "i32") == 0) printf(" %d", (int)((const int32_t*)data)[i]);
  else if (strcmp(dtype, "i64") == 0) printf(" %lld", (long long)((const int64_t*)data)[i]);
  else printf(" %02x", (unsigned)((const uint8_t*)data)[i]);
}

static void print_output(const orchid_model* model, size_t j, const void* data) {
  const char* dtype = orchid_model_output_dtype(model, j);
  int64_t rank = orchid_model_output_rank(model, j);
  int64_t bytes = orchid_model_output_bytes(model, j);
  int64_t dims[16];
  int64_t k, shown, count;
  printf("output %zu '%s': %s[", j, orchid_model_output_name(model, j), dtype);
  if (rank <= 16 && orchid_model_output_dims(model, j, dims) == 0)
    for (k = 0; k < rank; ++k) printf(k ? ",%lld" : "%lld", (long long)dims[k]);
  count = numeric_bytes(dtype) ? bytes / numeric_bytes(dtype) : bytes;
  shown = count < kShown ? count : kShown;
  printf("]%s:", numeric_bytes(dtype) ? "" : " bytes");
  for (k = 0; k < shown; ++k) print_value(data, dtype, k);
  printf("%s\n", count > shown ? " ..." : "");
}

int main(int argc, char** argv) {
  char err[1024];
  orchid_model* model = NULL;
  orchid_session* session = NULL;
  size_t ni, no, i;
  void** inputs;
  void** outputs;
  int status = 1;
  if (argc != 2) {
    fprintf(stderr, "usage: %s ARTIFACT_DIR\n", argv[0]);
    return 2;
  }
  if (orchid_model_load(argv[1], &model, err, sizeof err) != 0) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  ni = orchid_model_num_inputs(model);
  no = orchid_model_num_outputs(model);
  inputs = calloc(ni + 1, sizeof(void*));
  outputs = calloc(no + 1, sizeof(void*));
  for (i = 0; i < ni; ++i) {
    inputs[i] = alloc_tensor(orchid_model_input_bytes(model, i));
    fill(inputs[i], orchid_model_input_dtype(model, i), orchid_model_input_bytes(model, i));
  }
  for (i = 0; i < no; ++i) outputs[i] = alloc_tensor(orchid_model_output_bytes(model, i));
  if (orchid_session_create(model, &session, err, sizeof err) != 0 ||
      orchid_session_run(session, (const void* const*)inputs, outputs, err, sizeof err) != 0) {
    fprintf(stderr, "error: %s\n", err);
  } else {
    for (i = 0; i < no; ++i) print_output(model, i, outputs[i]);
    status = 0;
  }
  for (i = 0; i < ni; ++i) free(inputs[i]);
  for (i = 0; i < no; ++i) free(outputs[i]);
  free(inputs);
  free(outputs);
  orchid_session_free(session);
  orchid_model_free(model);
  return status;
}
