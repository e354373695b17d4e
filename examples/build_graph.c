/*
 * build_graph.c - builds a small CNN through the qairt C API, attaches
 * quantization encodings, validates it and prints a summary.
 *
 *   image[batch,3,32,32] -> Conv2d(3x3, 8 filters, pad 1) -> Relu
 *     -> PoolMax2d(2x2, stride 2) -> Reshape[batch, 2048] (shape [0, 2048])
 *     -> FullyConnected(10) -> Softmax -> probs[batch,10]
 *
 * The conv weight gets a per-channel symmetric int8 encoding and the Relu
 * output a per-tensor uint8 one. Every status is checked: on error the
 * message is printed and the program returns 1. Everything is freed.
 *
 * C99, only <qairt/qairt.h>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qairt/qairt.h"

/* Prints and frees a non-NULL status; evaluates to 1 on error. */
static int failed(qairt_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "error: %s failed (code %d): %s\n", what, (int)qairt_status_code(status),
          qairt_status_message(status));
  qairt_status_free(status);
  return 1;
}

#define CHECK(call)                     \
  do {                                  \
    if (failed((call), #call)) goto done; \
  } while (0)

enum { kBatchSym = -1, kIn = 3, kHw = 32, kFilters = 8, kKernel = 3, kPooled = 16, kClasses = 10 };
#define kFeatures (kFilters * kPooled * kPooled) /* 2048 */

/* Tensor helpers: fill a qairt_tensor_desc from a name, dtype and dims. */
static qairt_tensor_desc make_desc(const char* name, qairt_dtype_t dtype, size_t rank, const int64_t* dims,
                                   const char* const* symbols) {
  qairt_tensor_desc d;
  qairt_tensor_desc_init(&d);
  d.name = name;
  d.dtype = dtype;
  d.rank = rank;
  d.dims = dims;
  d.dim_symbols = symbols;
  return d;
}

/* Adds an op whose outputs are new activation tensors (shape inferred). */
static qairt_status_t* add_op(qairt_graph_t* g, const char* type, const char* name, const qairt_tensor_id* inputs,
                              size_t num_inputs, const char* output_name, const qairt_attr* attrs, size_t num_attrs,
                              const char* source_op_type, qairt_tensor_id* out_tensor) {
  qairt_tensor_desc out_desc;
  qairt_op_desc op;
  qairt_op_id op_id;
  qairt_status_t* status;

  qairt_tensor_desc_init(&out_desc);
  out_desc.name = output_name;
  out_desc.rank_known = 0; /* filled by shape inference */
  status = qairt_graph_add_tensor(g, &out_desc, out_tensor);
  if (status) return status;

  qairt_op_desc_init(&op);
  op.type = type;
  op.name = name;
  op.num_inputs = num_inputs;
  op.inputs = inputs;
  op.num_outputs = 1;
  op.outputs = out_tensor;
  op.num_attrs = num_attrs;
  op.attrs = attrs;
  op.source_name = name;
  op.source_op_type = source_op_type;
  return qairt_graph_add_op(g, &op, &op_id);
}

static qairt_attr ints_attr(const char* name, const int64_t* values, size_t count) {
  qairt_attr a;
  a.name = name;
  a.type = QAIRT_ATTR_INTS;
  a.reserved = 0;
  a.count = count;
  a.data = values;
  return a;
}

static qairt_attr int_attr(const char* name, const int64_t* value) {
  qairt_attr a = ints_attr(name, value, 1);
  a.type = QAIRT_ATTR_INT;
  return a;
}

/* Prints dims like [batch, 3, 32, 32] ("?" when unknown). */
static qairt_status_t* print_shape(const qairt_graph_t* g, qairt_tensor_id t, const qairt_tensor_info* info) {
  size_t i;
  if (!info->rank_known) {
    printf("[?]");
    return NULL;
  }
  printf("[");
  for (i = 0; i < info->rank; ++i) {
    if (i) printf(", ");
    if (info->dims[i] >= 0) {
      printf("%lld", (long long)info->dims[i]);
    } else {
      const char* symbol = NULL;
      qairt_status_t* status = qairt_graph_tensor_dim_symbol(g, t, i, &symbol);
      if (status) return status;
      printf("%s", symbol ? symbol : "?");
    }
  }
  printf("]");
  return NULL;
}

static qairt_status_t* print_tensor_line(const qairt_graph_t* g, qairt_tensor_id t) {
  qairt_tensor_info info;
  qairt_status_t* status;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  status = qairt_graph_tensor_info(g, t, &info);
  if (status) return status;
  printf("  %-10s %-16s ", info.name, qairt_dtype_name(info.dtype));
  status = print_shape(g, t, &info);
  printf("\n");
  return status;
}

int main(void) {
  int rc = 1;
  qairt_graph_t* graph = NULL;
  qairt_encoding_t* weight_enc = NULL;
  qairt_encoding_t* act_enc = NULL;
  qairt_diagnostics_t* diags = NULL;
  char* json = NULL;
  float* conv_w = NULL;
  float* fc_w = NULL;
  float conv_b[kFilters];
  float fc_b[kClasses];
  float channel_scales[kFilters];
  int32_t channel_offsets[kFilters];
  size_t i;

  /* ---- graph ------------------------------------------------------------ */
  {
    qairt_graph_options options;
    uint32_t abi = qairt_abi_version();
    if ((abi >> 16) != QAIRT_ABI_MAJOR) {
      fprintf(stderr, "error: libqairt ABI %u.%u, this program needs %d.x\n", (unsigned)(abi >> 16),
              (unsigned)(abi & 0xFFFFu), QAIRT_ABI_MAJOR);
      return 1;
    }
    printf("qairt %s (ABI %u.%u)\n", qairt_version_string(), (unsigned)(abi >> 16), (unsigned)(abi & 0xFFFFu));
    qairt_graph_options_init(&options);
    options.name = "small_cnn";
    CHECK(qairt_graph_create(&options, &graph));
  }

  /* ---- weights (deterministic values) ----------------------------------- */
  conv_w = (float*)malloc(sizeof(float) * kFilters * kIn * kKernel * kKernel);
  fc_w = (float*)malloc(sizeof(float) * kClasses * kFeatures);
  if (!conv_w || !fc_w) {
    fprintf(stderr, "error: out of memory\n");
    goto done;
  }
  for (i = 0; i < (size_t)kFilters * kIn * kKernel * kKernel; ++i) /* each filter gets its own range */
    conv_w[i] = (float)((int)(i % 17) - 8) / (64.0f * (float)(1 + i / (kIn * kKernel * kKernel)));
  for (i = 0; i < (size_t)kFilters; ++i) conv_b[i] = 0.01f * (float)i;
  for (i = 0; i < (size_t)kClasses * kFeatures; ++i) fc_w[i] = (float)((int)(i % 13) - 6) / 512.0f;
  for (i = 0; i < (size_t)kClasses; ++i) fc_b[i] = 0.0f;

  {
    /* Inputs and constants. The batch dim is symbolic. */
    static const int64_t image_dims[4] = {kBatchSym, kIn, kHw, kHw};
    static const char* const image_syms[4] = {"batch", NULL, NULL, NULL};
    static const int64_t conv_w_dims[4] = {kFilters, kIn, kKernel, kKernel};
    static const int64_t conv_b_dims[1] = {kFilters};
    static const int64_t fc_w_dims[2] = {kClasses, kFeatures};
    static const int64_t fc_b_dims[1] = {kClasses};
    static const int64_t shape_dims[1] = {2};
    static const int64_t new_shape[2] = {0, kFeatures}; /* Reshape shape: 0 copies the batch dim */
    static const int64_t strides1[2] = {1, 1}, pads1[4] = {1, 1, 1, 1};
    static const int64_t pool_kernel[2] = {2, 2}, pool_strides[2] = {2, 2};
    static const int64_t softmax_axis = -1;
    qairt_tensor_desc d;
    qairt_tensor_id image, w1, b1, w2, b2, shape, conv, relu, pool, flat, fc, probs;
    qairt_tensor_id ins[3];
    qairt_attr conv_attrs[2], pool_attrs[2], softmax_attrs[1];

    d = make_desc("image", QAIRT_DTYPE_FLOAT32, 4, image_dims, image_syms);
    CHECK(qairt_graph_add_input(graph, &d, &image));
    d = make_desc("conv1.weight", QAIRT_DTYPE_FLOAT32, 4, conv_w_dims, NULL);
    CHECK(qairt_graph_add_constant(graph, &d, conv_w, sizeof(float) * kFilters * kIn * kKernel * kKernel, 0, &w1));
    d = make_desc("conv1.bias", QAIRT_DTYPE_FLOAT32, 1, conv_b_dims, NULL);
    CHECK(qairt_graph_add_constant(graph, &d, conv_b, sizeof conv_b, 0, &b1));
    d = make_desc("fc.weight", QAIRT_DTYPE_FLOAT32, 2, fc_w_dims, NULL);
    CHECK(qairt_graph_add_constant(graph, &d, fc_w, sizeof(float) * kClasses * kFeatures, 0, &w2));
    d = make_desc("fc.bias", QAIRT_DTYPE_FLOAT32, 1, fc_b_dims, NULL);
    CHECK(qairt_graph_add_constant(graph, &d, fc_b, sizeof fc_b, 0, &b2));
    d = make_desc("flatten.shape", QAIRT_DTYPE_INT64, 1, shape_dims, NULL);
    CHECK(qairt_graph_add_constant(graph, &d, new_shape, sizeof new_shape, 0, &shape));

    /* Ops. Attribute names and layouts follow ONNX (NCHW, OIHW weights). */
    conv_attrs[0] = ints_attr("strides", strides1, 2);
    conv_attrs[1] = ints_attr("pads", pads1, 4);
    ins[0] = image, ins[1] = w1, ins[2] = b1;
    CHECK(add_op(graph, "Conv2d", "conv1", ins, 3, "conv1.out", conv_attrs, 2, "Conv", &conv));
    ins[0] = conv;
    CHECK(add_op(graph, "Relu", "relu1", ins, 1, "relu1.out", NULL, 0, "Relu", &relu));
    pool_attrs[0] = ints_attr("kernel_shape", pool_kernel, 2);
    pool_attrs[1] = ints_attr("strides", pool_strides, 2);
    ins[0] = relu;
    CHECK(add_op(graph, "PoolMax2d", "pool1", ins, 1, "pool1.out", pool_attrs, 2, "MaxPool", &pool));
    ins[0] = pool, ins[1] = shape;
    CHECK(add_op(graph, "Reshape", "flatten", ins, 2, "flatten.out", NULL, 0, "Flatten", &flat));
    ins[0] = flat, ins[1] = w2, ins[2] = b2;
    CHECK(add_op(graph, "FullyConnected", "fc", ins, 3, "fc.out", NULL, 0, "Gemm", &fc));
    softmax_attrs[0] = int_attr("axis", &softmax_axis);
    ins[0] = fc;
    CHECK(add_op(graph, "Softmax", "softmax", ins, 1, "probs", softmax_attrs, 1, "Softmax", &probs));
    CHECK(qairt_graph_mark_output(graph, probs));

    /* ---- encodings --------------------------------------------------------- */
    /* Conv weight: per output channel (axis 0 of OIHW), symmetric int8. */
    for (i = 0; i < (size_t)kFilters; ++i) {
      size_t j, n = (size_t)kIn * kKernel * kKernel;
      float max_abs = 0.0f;
      for (j = 0; j < n; ++j) {
        float v = conv_w[i * n + j] < 0.0f ? -conv_w[i * n + j] : conv_w[i * n + j];
        if (v > max_abs) max_abs = v;
      }
      channel_scales[i] = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
      channel_offsets[i] = 0;
    }
    CHECK(qairt_encoding_create(QAIRT_ENCODING_PER_CHANNEL, QAIRT_DTYPE_SFIXED_POINT_8, &weight_enc));
    CHECK(qairt_encoding_set_symmetry(weight_enc, QAIRT_SYMMETRY_SYMMETRIC));
    CHECK(qairt_encoding_set_axis(weight_enc, 0));
    CHECK(qairt_encoding_set_scales(weight_enc, channel_scales, kFilters));
    CHECK(qairt_encoding_set_offsets(weight_enc, channel_offsets, kFilters));
    CHECK(qairt_graph_set_encoding(graph, w1, weight_enc));

    /* Relu output: per-tensor asymmetric uint8 over [0, 6]. */
    {
      const float scale = 6.0f / 255.0f;
      const int32_t offset = 0;
      CHECK(qairt_encoding_create(QAIRT_ENCODING_PER_TENSOR, QAIRT_DTYPE_UFIXED_POINT_8, &act_enc));
      CHECK(qairt_encoding_set_scales(act_enc, &scale, 1));
      CHECK(qairt_encoding_set_offsets(act_enc, &offset, 1));
      CHECK(qairt_graph_set_encoding(graph, relu, act_enc));
    }
  }

  /* ---- validate ------------------------------------------------------------ */
  {
    qairt_status_t* status = qairt_graph_validate(graph, &diags);
    size_t n = diags ? qairt_diagnostics_count(diags) : 0;
    for (i = 0; i < n; ++i) {
      qairt_diagnostic diag;
      memset(&diag, 0, sizeof diag);
      diag.struct_size = sizeof diag;
      if (failed(qairt_diagnostics_get(diags, i, &diag), "qairt_diagnostics_get")) {
        qairt_status_free(status);
        goto done;
      }
      printf("%s: %s\n", diag.severity == QAIRT_SEVERITY_ERROR ? "error" : "warning", diag.message);
    }
    if (failed(status, "qairt_graph_validate")) goto done;
  }

  /* ---- summary: a few lines of text, then the library's JSON ------------- */
  {
    size_t n_inputs = qairt_graph_input_count(graph), n_outputs = qairt_graph_output_count(graph);
    size_t n_ops = qairt_graph_op_count(graph), n_tensors = qairt_graph_tensor_count(graph);
    size_t length = 0, count = 0;
    qairt_op_id order[16];

    printf("graph '%s': %zu tensors, %zu ops\n", qairt_graph_name(graph), n_tensors, n_ops);
    CHECK(qairt_graph_topological_order(graph, NULL, 0, &count));
    if (count > sizeof order / sizeof order[0]) {
      fprintf(stderr, "error: unexpected op count %zu\n", count);
      goto done;
    }
    CHECK(qairt_graph_topological_order(graph, order, count, &count));
    printf("ops in order:");
    for (i = 0; i < count; ++i) {
      qairt_op_info op;
      memset(&op, 0, sizeof op);
      op.struct_size = sizeof op;
      CHECK(qairt_graph_op_info(graph, order[i], &op));
      printf(" %s(%s)", op.name, op.type);
    }
    printf("\ninputs:\n");
    for (i = 0; i < n_inputs; ++i) CHECK(print_tensor_line(graph, qairt_graph_input(graph, i)));
    printf("outputs:\n");
    for (i = 0; i < n_outputs; ++i) CHECK(print_tensor_line(graph, qairt_graph_output(graph, i)));
    printf("encodings:\n");
    for (i = 0; i < n_tensors; ++i) {
      qairt_encoding_t* e = NULL;
      CHECK(qairt_graph_get_encoding(graph, (qairt_tensor_id)i, &e));
      if (e) {
        const float* scales = NULL;
        size_t n_scales = 0;
        qairt_tensor_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        qairt_encoding_scales(e, &scales, &n_scales);
        if (failed(qairt_graph_tensor_info(graph, (qairt_tensor_id)i, &info), "qairt_graph_tensor_info")) {
          qairt_encoding_destroy(e);
          goto done;
        }
        printf("  %-10s kind=%u dtype=%s bitwidth=%u scales=%zu\n", info.name, (unsigned)qairt_encoding_kind(e),
               qairt_dtype_name(qairt_encoding_dtype(e)), (unsigned)qairt_encoding_bitwidth(e), n_scales);
        qairt_encoding_destroy(e);
      }
    }

    /* Query-then-fill. */
    CHECK(qairt_graph_summary_json(graph, NULL, 0, &length));
    json = (char*)malloc(length + 1);
    if (!json) {
      fprintf(stderr, "error: out of memory\n");
      goto done;
    }
    CHECK(qairt_graph_summary_json(graph, json, length + 1, &length));
    printf("summary json (%zu bytes):\n%s\n", length, json);
  }
  rc = 0;

done:
  free(json);
  free(conv_w);
  free(fc_w);
  qairt_diagnostics_destroy(diags);
  qairt_encoding_destroy(act_enc);
  qairt_encoding_destroy(weight_enc);
  qairt_graph_destroy(graph);
  return rc;
}
