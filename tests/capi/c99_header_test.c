/* Compiled as strict C99 (-std=c99 -pedantic -Werror): proves the public
 * header is C-clean, and exercises the C-only calling conventions: NULL
 * handling, struct_size, query-then-fill and error statuses. */
#include <qairt/qairt.h>
#include <qairt/qairt_import.h>
#include <qairt/qairt_export.h>
#include <qairt/qairt_exec.h>
#include <qairt/qairt_container.h>
#include <qairt/qairt_process.h>
#include <qairt/qairt_calib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                            \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                               \
    }                                                           \
  } while (0)

static int ok(qairt_status_t* s) {
  if (s) {
    fprintf(stderr, "unexpected error %d: %s\n", (int)qairt_status_code(s), qairt_status_message(s));
    qairt_status_free(s);
    return 0;
  }
  return 1;
}

int main(void) {
  qairt_graph_t* g = NULL;
  qairt_tensor_desc desc;
  qairt_op_desc op;
  qairt_tensor_id x = QAIRT_INVALID_ID, y = QAIRT_INVALID_ID, t = QAIRT_INVALID_ID;
  qairt_op_id relu = QAIRT_INVALID_ID;
  const int64_t dims[2] = {-1, 8};
  const char* symbols[2] = {"batch", NULL};
  qairt_tensor_info info;
  qairt_status_t* s;
  size_t length = 0;
  char* json;
  qairt_encoding_t* e = NULL;
  float scale = 0.0f;

  EXPECT((qairt_abi_version() >> 16) == QAIRT_ABI_MAJOR);
  EXPECT(strlen(qairt_version_string()) > 0);
  EXPECT(qairt_op_type_count() > 50);
  EXPECT(qairt_op_type_name(qairt_op_type_count()) == NULL);

  /* NULL handles are harmless. */
  qairt_graph_destroy(NULL);
  qairt_status_free(NULL);
  {
    qairt_executor_options xo;
    qairt_executor_t* ex = NULL;
    qairt_status_t* xs;
    qairt_executor_options_init(&xo);
    EXPECT(xo.struct_size == sizeof(xo) && xo.num_threads == 1);
    qairt_executor_destroy(NULL);
    EXPECT(qairt_executor_input_count(NULL) == 0);
    xs = qairt_executor_create(NULL, &xo, &ex);
    EXPECT(xs != NULL && qairt_status_code(xs) == QAIRT_INVALID_ARGUMENT && ex == NULL);
    qairt_status_free(xs);
  }
  qairt_encoding_destroy(NULL);
  qairt_diagnostics_destroy(NULL);
  qairt_container_destroy(NULL);
  EXPECT(strcmp(qairt_option_source_name(QAIRT_OPTION_SOURCE_USER), "user") == 0);
  EXPECT(qairt_status_code(NULL) == QAIRT_OK);
  EXPECT(qairt_graph_tensor_count(NULL) == 0);

  s = qairt_graph_create(NULL, NULL);
  EXPECT(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);

  if (!ok(qairt_graph_create(NULL, &g))) return 1;
  EXPECT(strcmp(qairt_graph_name(g), "graph") == 0);

  qairt_tensor_desc_init(&desc);
  desc.name = "x";
  desc.dtype = QAIRT_DTYPE_FLOAT32;
  desc.rank = 2;
  desc.dims = dims;
  desc.dim_symbols = symbols;
  EXPECT(ok(qairt_graph_add_input(g, &desc, &x)));

  /* A struct_size from the future-past (too small) is rejected, out untouched. */
  desc.struct_size = 4;
  s = qairt_graph_add_input(g, &desc, &t);
  EXPECT(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  EXPECT(strstr(qairt_status_message(s), "struct_size") != NULL);
  EXPECT(t == QAIRT_INVALID_ID);
  qairt_status_free(s);

  qairt_tensor_desc_init(&desc);
  desc.name = "y";
  desc.rank_known = 0;
  EXPECT(ok(qairt_graph_add_tensor(g, &desc, &y)));

  qairt_op_desc_init(&op);
  op.type = "Relu";
  op.name = "relu";
  op.num_inputs = 1;
  op.inputs = &x;
  op.num_outputs = 1;
  op.outputs = &y;
  EXPECT(ok(qairt_graph_add_op(g, &op, &relu)));
  EXPECT(ok(qairt_graph_mark_output(g, y)));
  EXPECT(ok(qairt_graph_validate(g, NULL)));

  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT(ok(qairt_graph_tensor_info(g, y, &info)));
  EXPECT(info.rank == 2 && info.dims[0] == -1 && info.dims[1] == 8);
  EXPECT(info.role == QAIRT_TENSOR_ROLE_OUTPUT);
  EXPECT(info.producer == relu);
  {
    const char* sym = NULL;
    EXPECT(ok(qairt_graph_tensor_dim_symbol(g, y, 0, &sym)));
    EXPECT(sym != NULL && strcmp(sym, "batch") == 0);
  }

  /* Query-then-fill: length first, then a too-small buffer fails, then fill. */
  EXPECT(ok(qairt_graph_summary_json(g, NULL, 0, &length)));
  EXPECT(length > 10);
  json = (char*)malloc(length + 1);
  s = qairt_graph_summary_json(g, json, length, &length);
  EXPECT(qairt_status_code(s) == QAIRT_BUFFER_TOO_SMALL);
  qairt_status_free(s);
  EXPECT(ok(qairt_graph_summary_json(g, json, length + 1, &length)));
  EXPECT(json[length] == '\0' && strstr(json, "\"Relu\":1") != NULL);
  free(json);

  /* An invalid encoding is rejected with the tensor and field in the message. */
  EXPECT(ok(qairt_encoding_create(QAIRT_ENCODING_PER_TENSOR, QAIRT_DTYPE_UFIXED_POINT_8, &e)));
  EXPECT(ok(qairt_encoding_set_scales(e, &scale, 1)));
  s = qairt_graph_set_encoding(g, x, e);
  EXPECT(qairt_status_code(s) == QAIRT_VALIDATION_FAILED);
  EXPECT(strstr(qairt_status_message(s), "'x'") != NULL);
  EXPECT(strstr(qairt_status_message(s), "scales[0]") != NULL);
  qairt_status_free(s);
  qairt_encoding_destroy(e);

  /* Unknown ids are errors, not crashes. */
  s = qairt_graph_tensor_info(g, 12345, &info);
  EXPECT(qairt_status_code(s) == QAIRT_NOT_FOUND);
  qairt_status_free(s);

  /* Export: query-then-fill of the ONNX bytes (re-imported), a bad opset
   * and an unwritable path fail cleanly. */
  {
    qairt_onnx_export_options eo;
    size_t size = 0, size2 = 0;
    unsigned char* bytes;
    qairt_graph_t* back = NULL;
    qairt_onnx_export_options_init(&eo);
    EXPECT(eo.opset == QAIRT_ONNX_EXPORT_AUTO_OPSET && eo.num_metadata_props == 0);
    EXPECT(ok(qairt_export_onnx_bytes(g, &eo, NULL, 0, &size)));
    EXPECT(size > 20);
    bytes = (unsigned char*)malloc(size);
    s = qairt_export_onnx_bytes(g, &eo, bytes, size - 1, &size2);
    EXPECT(qairt_status_code(s) == QAIRT_BUFFER_TOO_SMALL);
    qairt_status_free(s);
    EXPECT(ok(qairt_export_onnx_bytes(g, &eo, bytes, size, &size2)) && size2 == size);
    EXPECT(ok(qairt_import_onnx_bytes(bytes, size, NULL, &back, NULL)));
    EXPECT(back != NULL && qairt_graph_op_count(back) == 1);
    qairt_graph_destroy(back);
    free(bytes);
    eo.opset = 7;
    s = qairt_export_onnx_bytes(g, &eo, NULL, 0, &size);
    EXPECT(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
    qairt_status_free(s);
    s = qairt_export_onnx_file(g, "/nonexistent/dir/model.onnx", NULL);
    EXPECT(qairt_status_code(s) == QAIRT_IO_ERROR);
    EXPECT(s != NULL && strstr(qairt_status_message(s), "/nonexistent/dir/model.onnx") != NULL);
    qairt_status_free(s);
  }

  qairt_graph_destroy(g);

  /* Import: garbage bytes are a parse error, with no graph and no crash. */
  {
    const char junk[] = "\x08\x07\xff\xff\xff this is not an onnx model";
    qairt_import_options io;
    qairt_graph_t* imported = NULL;
    qairt_import_report_t* report = NULL;
    qairt_import_options_init(&io);
    s = qairt_import_onnx_bytes(junk, sizeof junk, &io, &imported, &report);
    EXPECT(qairt_status_code(s) == QAIRT_PARSE_ERROR);
    EXPECT(imported == NULL);
    qairt_status_free(s);
    qairt_import_report_destroy(report);
    s = qairt_import_onnx_file("/nonexistent/model.onnx", NULL, &imported, NULL);
    EXPECT(qairt_status_code(s) == QAIRT_IO_ERROR);
    EXPECT(strstr(qairt_status_message(s), "/nonexistent/model.onnx") != NULL);
    qairt_status_free(s);
  }
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("c99 header test: OK\n");
  return 0;
}
