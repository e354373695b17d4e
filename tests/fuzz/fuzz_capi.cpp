// libFuzzer target: random sequences of C API calls. The input is a byte
// program (FuzzedDataProvider) over a few handle slots: create / import /
// clone / destroy graphs, load / apply / write encodings, load targets,
// process, export ONNX, write and reload containers, calibrate from buffers,
// set encodings, validate, with random arguments including NULL handles,
// NULL out parameters, wrong struct_size and out-of-range ids. Only the
// public C API is used (what a host process can do). Every call must return
// (NULL or a status with a message): a crash, a sanitizer report, a leak or
// QAIRT_INTERNAL is a finding.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

#include "fuzz_models.h"
#include "fuzz_util.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_export.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_process.h"
#include "qairt/qairt_target.h"

namespace {

using qairt_fuzz::Check;

constexpr size_t kSlots = 3;

struct State {
  qairt_graph_t* graphs[kSlots] = {};
  qairt_encodings_t* encodings[kSlots] = {};
  qairt_target_t* targets[kSlots] = {};
  qairt_container_t* containers[kSlots] = {};
  ~State() {
    for (size_t i = 0; i < kSlots; ++i) {
      qairt_graph_destroy(graphs[i]);
      qairt_encodings_destroy(encodings[i]);
      qairt_target_destroy(targets[i]);
      qairt_container_destroy(containers[i]);
    }
  }
};

const std::string& Model(size_t i) {
  static const std::string models[2] = {qairt_fuzz::SmallConvModel(), qairt_fuzz::SmallConvModel(2, 2, 1)};
  return models[i % 2];
}

const char* kEncodings =
    R"({"version":"2.0.0","encodings":[{"name":"relu_out","output_dtype":"uint8","y_scale":0.05,"y_zero_point":0},)"
    R"({"name":"conv.w","output_dtype":"int8","y_scale":0.01,"y_zero_point":0}]})";

// A struct_size that is right, zero, short or too large.
uint32_t StructSize(FuzzedDataProvider& in, uint32_t right) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return 0;
    case 1: return 4;
    case 2: return right + 64;
    default: return right;
  }
}

template <typename T>
T* Pick(FuzzedDataProvider& in, T* const* slots) {
  const size_t i = in.ConsumeIntegralInRange<size_t>(0, kSlots);
  return i == kSlots ? nullptr : slots[i];
}

template <typename T>
T** Slot(FuzzedDataProvider& in, T** slots) {
  return &slots[in.ConsumeIntegralInRange<size_t>(0, kSlots - 1)];
}

std::string Name(FuzzedDataProvider& in) {
  static const char* names[] = {"x", "conv_out", "relu_out", "logits", "conv.w", "fc.b", "", "nope", "htp_v73",
                                "cpu", "lpai_v6", "fold_relu", "quantize_static"};
  if (in.ConsumeBool()) return names[in.ConsumeIntegralInRange<size_t>(0, std::size(names) - 1)];
  return in.ConsumeRandomLengthString(32);
}

void Step(FuzzedDataProvider& in, State& st) {
  switch (in.ConsumeIntegralInRange<int>(0, 19)) {
    case 0: {  // create
      qairt_graph_t** slot = Slot(in, st.graphs);
      qairt_graph_destroy(*slot);
      *slot = nullptr;
      qairt_graph_options o;
      qairt_graph_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.flags = in.ConsumeBool() ? 0 : in.ConsumeIntegral<uint32_t>();
      Check(qairt_graph_create(in.ConsumeBool() ? &o : nullptr, in.ConsumeIntegralInRange<int>(0, 9) ? slot : nullptr));
      break;
    }
    case 1: {  // import a model (a valid one or fuzz bytes)
      qairt_graph_t** slot = Slot(in, st.graphs);
      qairt_graph_destroy(*slot);
      *slot = nullptr;
      qairt_import_options o;
      qairt_import_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 7);
      const char* sym_names[1] = {"d0"};
      const int64_t sym_values[1] = {in.ConsumeIntegral<int64_t>()};
      if (in.ConsumeBool()) {
        o.num_define_symbols = 1;
        o.define_symbol_names = sym_names;
        o.define_symbol_values = sym_values;
      }
      std::string bytes = Model(in.ConsumeIntegral<uint8_t>());
      if (in.ConsumeBool() && !bytes.empty()) bytes[in.ConsumeIntegralInRange<size_t>(0, bytes.size() - 1)] ^= in.ConsumeIntegral<uint8_t>();
      qairt_import_report_t* report = nullptr;
      Check(qairt_import_onnx_bytes(in.ConsumeIntegralInRange<int>(0, 15) ? bytes.data() : nullptr, bytes.size(),
                                    in.ConsumeBool() ? &o : nullptr, in.ConsumeIntegralInRange<int>(0, 15) ? slot : nullptr,
                                    in.ConsumeBool() ? &report : nullptr));
      if (report) qairt_import_report_ok(report);
      qairt_import_report_destroy(report);
      break;
    }
    case 2: {  // destroy
      qairt_graph_t** slot = Slot(in, st.graphs);
      qairt_graph_destroy(*slot);
      *slot = nullptr;
      break;
    }
    case 3: {  // clone
      qairt_graph_t** dst = Slot(in, st.graphs);
      qairt_graph_t* src = Pick(in, st.graphs);
      if (src == *dst) break;
      qairt_graph_destroy(*dst);
      *dst = nullptr;
      Check(qairt_graph_clone(src, dst));
      break;
    }
    case 4: {  // load encodings
      qairt_encodings_t** slot = Slot(in, st.encodings);
      qairt_encodings_destroy(*slot);
      *slot = nullptr;
      const std::string text = in.ConsumeBool() ? std::string(kEncodings) : in.ConsumeRandomLengthString(512);
      qairt_encodings_load_options o;
      qairt_encodings_load_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 3);
      o.max_depth = in.ConsumeIntegralInRange<uint32_t>(0, 70);
      Check(qairt_encodings_load_bytes(text.data(), text.size(), in.ConsumeBool() ? "enc.json" : nullptr,
                                       in.ConsumeBool() ? &o : nullptr, nullptr, slot));
      break;
    }
    case 5: {  // apply encodings
      qairt_encodings_apply_options o;
      qairt_encodings_apply_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 15);
      qairt_encodings_diagnostics_t* d = nullptr;
      if (in.ConsumeBool()) Check(qairt_encodings_diagnostics_create(&d));
      Check(qairt_encodings_apply(Pick(in, st.encodings), Pick(in, st.graphs), in.ConsumeBool() ? &o : nullptr, d));
      if (d) {
        size_t len = 0;
        Check(qairt_encodings_diagnostics_render(d, in.ConsumeIntegralInRange<uint32_t>(0, 4), nullptr, 0, &len));
      }
      qairt_encodings_diagnostics_destroy(d);
      break;
    }
    case 6: {  // load a target
      qairt_target_t** slot = Slot(in, st.targets);
      qairt_target_destroy(*slot);
      *slot = nullptr;
      const std::string name = Name(in);
      Check(qairt_target_load_builtin(in.ConsumeIntegralInRange<int>(0, 15) ? name.c_str() : nullptr, slot));
      break;
    }
    case 7: {  // process
      qairt_graph_t* g = Pick(in, st.graphs);
      qairt_process_options o;
      qairt_process_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.target = Pick(in, st.targets);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 2);
      static const uint32_t widths[] = {0, 4, 8, 16, 32, 7};
      o.float_bitwidth = widths[in.ConsumeIntegralInRange<size_t>(0, 5)];
      o.act_bitwidth = widths[in.ConsumeIntegralInRange<size_t>(0, 5)];
      o.weights_bitwidth = widths[in.ConsumeIntegralInRange<size_t>(0, 5)];
      o.bias_bitwidth = widths[in.ConsumeIntegralInRange<size_t>(0, 5)];
      o.log_level = in.ConsumeIntegralInRange<uint32_t>(0, 3);
      const std::string stop = Name(in);
      if (in.ConsumeBool()) o.stop_after = stop.c_str();
      qairt_process_result_t* r = nullptr;
      if (Check(qairt_process(g, in.ConsumeBool() ? &o : nullptr, in.ConsumeIntegralInRange<int>(0, 15) ? &r : nullptr))) {
        for (size_t i = 0; i < qairt_process_result_error_count(r); ++i)
          if (!qairt_process_result_error(r, i)) std::abort();
        qairt_process_result_log(r);
        qairt_process_result_stats(r);
      }
      qairt_process_result_destroy(r);
      break;
    }
    case 8: {  // export ONNX (query then fill)
      qairt_onnx_export_options o;
      qairt_onnx_export_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.opset = in.ConsumeIntegralInRange<int64_t>(0, 25);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 2);
      const qairt_graph_t* g = Pick(in, st.graphs);
      size_t n = 0;
      if (Check(qairt_export_onnx_bytes(g, in.ConsumeBool() ? &o : nullptr, nullptr, 0, &n))) {
        std::vector<uint8_t> buf(n);
        const size_t cap = in.ConsumeBool() ? n : n / 2;
        Check(qairt_export_onnx_bytes(g, &o, buf.data(), cap, &n));
      }
      break;
    }
    case 9: {  // container round trip
      const qairt_graph_t* g = Pick(in, st.graphs);
      qairt_container_write_options o;
      qairt_container_write_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      const std::string key = Name(in), value = Name(in);
      qairt_container_option opt{key.c_str(), value.c_str(), in.ConsumeIntegralInRange<uint32_t>(0, 3), 0};
      if (in.ConsumeBool()) {
        o.num_options = 1;
        o.options = in.ConsumeIntegralInRange<int>(0, 7) ? &opt : nullptr;
      }
      const std::string note_tensor = Name(in);
      qairt_container_tensor_note note{note_tensor.c_str(), in.ConsumeBool() ? nullptr : "fuzz"};
      if (in.ConsumeBool()) {
        o.num_tensor_notes = 1;
        o.tensor_notes = &note;
      }
      size_t n = 0;
      if (Check(qairt_container_write_bytes(g, in.ConsumeBool() ? &o : nullptr, nullptr, 0, &n))) {
        std::vector<uint8_t> buf(n);
        if (Check(qairt_container_write_bytes(g, &o, buf.data(), buf.size(), &n))) {
          if (!buf.empty() && in.ConsumeBool()) buf[in.ConsumeIntegralInRange<size_t>(0, buf.size() - 1)] ^= in.ConsumeIntegral<uint8_t>();
          qairt_container_t** slot = Slot(in, st.containers);
          qairt_container_destroy(*slot);
          *slot = nullptr;
          if (Check(qairt_container_load_bytes(buf.data(), buf.size(), slot))) {
            qairt_graph_t** gs = Slot(in, st.graphs);
            if (*gs != g) {
              qairt_graph_destroy(*gs);
              *gs = nullptr;
              Check(qairt_container_get_graph(*slot, gs));
            }
          }
        }
      }
      break;
    }
    case 10: {  // validate / summary / lookups
      const qairt_graph_t* g = Pick(in, st.graphs);
      qairt_diagnostics_t* d = nullptr;
      if (Check(qairt_graph_validate(g, in.ConsumeIntegralInRange<int>(0, 15) ? &d : nullptr))) {
        for (size_t i = 0; i < qairt_diagnostics_count(d) + 1; ++i) {
          qairt_diagnostic diag{};
          diag.struct_size = StructSize(in, sizeof diag);
          Check(qairt_diagnostics_get(d, i, &diag));
        }
      }
      qairt_diagnostics_destroy(d);
      size_t len = 0;
      std::vector<char> buf(in.ConsumeIntegralInRange<size_t>(0, 64));
      Check(qairt_graph_summary_json(g, buf.empty() ? nullptr : buf.data(), buf.size(), &len));
      const std::string name = Name(in);
      qairt_tensor_id t = 0;
      Check(qairt_graph_find_tensor(g, in.ConsumeIntegralInRange<int>(0, 15) ? name.c_str() : nullptr, &t));
      break;
    }
    case 11: {  // calibrate from buffers
      qairt_graph_t* g = Pick(in, st.graphs);
      const size_t samples = in.ConsumeIntegralInRange<size_t>(0, 2);
      const size_t inputs = g ? qairt_graph_input_count(g) : 1;
      if (inputs > 4) break;
      std::vector<std::vector<float>> data(samples * inputs);
      std::vector<const void*> ptrs;
      std::vector<size_t> sizes;
      for (auto& d : data) {
        d.assign(in.ConsumeIntegralInRange<size_t>(0, 300), in.ConsumeFloatingPoint<float>());
        ptrs.push_back(in.ConsumeIntegralInRange<int>(0, 15) ? d.data() : nullptr);
        sizes.push_back(d.size() * sizeof(float));
      }
      qairt_calibration_options o;
      qairt_calibration_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.flags = in.ConsumeIntegralInRange<uint32_t>(0, 63);  // every flag
      o.act_method = in.ConsumeIntegralInRange<uint32_t>(0, 5);
      o.param_method = in.ConsumeIntegralInRange<uint32_t>(0, 5);
      o.act_bitwidth = in.ConsumeIntegralInRange<uint32_t>(0, 17);
      o.weights_bitwidth = in.ConsumeIntegralInRange<uint32_t>(0, 17);
      o.block_size = in.ConsumeIntegralInRange<uint32_t>(0, 9);
      o.histogram_bins = in.ConsumeIntegralInRange<uint32_t>(0, 4096);
      o.num_threads = in.ConsumeIntegralInRange<uint32_t>(0, 2);
      o.percentile = in.ConsumeFloatingPoint<double>();
      qairt_calibration_report_t* r = nullptr;
      Check(qairt_calibrate_buffers(g, samples, ptrs.empty() ? nullptr : ptrs.data(),
                                    sizes.empty() ? nullptr : sizes.data(), in.ConsumeBool() ? &o : nullptr,
                                    in.ConsumeBool() ? &r : nullptr));
      qairt_calibration_report_destroy(r);
      break;
    }
    case 12: {  // write encodings
      qairt_encodings_write_options o;
      qairt_encodings_write_options_init(&o);
      o.struct_size = StructSize(in, sizeof o);
      o.version = in.ConsumeIntegralInRange<uint32_t>(0, 4);
      size_t len = 0;
      Check(qairt_encodings_write_bytes(Pick(in, st.encodings), Pick(in, st.graphs), in.ConsumeBool() ? &o : nullptr,
                                        nullptr, nullptr, 0, in.ConsumeIntegralInRange<int>(0, 15) ? &len : nullptr));
      break;
    }
    case 13: {  // set an encoding on a random tensor
      qairt_graph_t* g = Pick(in, st.graphs);
      qairt_encoding_t* e = nullptr;
      if (!Check(qairt_encoding_create(in.ConsumeIntegralInRange<uint32_t>(0, 7), in.ConsumeIntegralInRange<uint32_t>(0, 28), &e))) break;
      std::vector<float> scales(in.ConsumeIntegralInRange<size_t>(0, 20), in.ConsumeFloatingPoint<float>());
      std::vector<int32_t> offsets(in.ConsumeIntegralInRange<size_t>(0, 20), in.ConsumeIntegral<int32_t>());
      Check(qairt_encoding_set_scales(e, scales.data(), scales.size()));
      Check(qairt_encoding_set_offsets(e, offsets.data(), offsets.size()));
      Check(qairt_encoding_set_axis(e, in.ConsumeIntegralInRange<int32_t>(-6, 6)));
      Check(qairt_encoding_set_bitwidth(e, in.ConsumeIntegralInRange<uint32_t>(0, 40)));
      Check(qairt_encoding_set_symmetry(e, in.ConsumeIntegralInRange<uint32_t>(0, 5)));
      const qairt_tensor_id t = in.ConsumeIntegralInRange<uint32_t>(0, 20);
      Check(qairt_graph_set_encoding(g, in.ConsumeBool() ? t : QAIRT_INVALID_ID, in.ConsumeIntegralInRange<int>(0, 15) ? e : nullptr));
      qairt_encoding_t* back = nullptr;
      if (Check(qairt_graph_get_encoding(g, t, &back))) qairt_encoding_destroy(back);
      qairt_encoding_destroy(e);
      break;
    }
    case 14: {  // destroy encodings / targets / containers
      qairt_encodings_t** e = Slot(in, st.encodings);
      qairt_encodings_destroy(*e);
      *e = nullptr;
      qairt_target_t** t = Slot(in, st.targets);
      if (in.ConsumeBool()) {
        qairt_target_destroy(*t);
        *t = nullptr;
      }
      qairt_container_t** c = Slot(in, st.containers);
      qairt_container_destroy(*c);
      *c = nullptr;
      break;
    }
    case 15: {  // infer shapes / topological order
      qairt_graph_t* g = Pick(in, st.graphs);
      Check(qairt_graph_infer_shapes(g));
      std::vector<qairt_op_id> ops(in.ConsumeIntegralInRange<size_t>(0, 16));
      size_t n = 0;
      Check(qairt_graph_topological_order(g, ops.empty() ? nullptr : ops.data(), ops.size(), &n));
      break;
    }
    case 16: {  // container info
      const qairt_container_t* c = Pick(in, st.containers);
      qairt_container_info info{};
      info.struct_size = StructSize(in, sizeof info);
      Check(qairt_container_get_info(c, &info));
      qairt_container_option o{};
      Check(qairt_container_option_at(c, in.ConsumeIntegralInRange<size_t>(0, 3), &o));
      const std::string key = Name(in);
      Check(qairt_container_find_option(c, in.ConsumeBool() ? key.c_str() : nullptr, &o));
      break;
    }
    case 17: {  // target queries
      const qairt_target_t* t = Pick(in, st.targets);
      const std::string op = in.ConsumeBool() ? "Conv2d" : Name(in);
      size_t n = 0;
      Check(qairt_target_kernel_count(t, op.c_str(), &n));
      qairt_kernel_info ki{};
      ki.struct_size = StructSize(in, sizeof ki);
      Check(qairt_target_kernel_info(t, in.ConsumeBool() ? op.c_str() : nullptr, in.ConsumeIntegralInRange<size_t>(0, 20), &ki));
      const qairt_dtype_t dts[3] = {in.ConsumeIntegralInRange<uint32_t>(0, 30), in.ConsumeIntegralInRange<uint32_t>(0, 30),
                                    in.ConsumeIntegralInRange<uint32_t>(0, 30)};
      int32_t found = 0;
      size_t k = 0;
      Check(qairt_target_find_kernel(t, op.c_str(), dts, in.ConsumeIntegralInRange<size_t>(0, 3), dts, 1, &found, &k));
      Check(qairt_target_to_json(t, in.ConsumeBool() ? op.c_str() : nullptr, nullptr, 0, &n));
      break;
    }
    case 18: {  // add ops/tensors by hand
      qairt_graph_t* g = Pick(in, st.graphs);
      qairt_tensor_desc d;
      qairt_tensor_desc_init(&d);
      d.struct_size = StructSize(in, sizeof d);
      const std::string name = Name(in);
      d.name = in.ConsumeIntegralInRange<int>(0, 15) ? name.c_str() : nullptr;
      d.dtype = in.ConsumeIntegralInRange<uint32_t>(0, 30);
      int64_t dims[4] = {in.ConsumeIntegralInRange<int64_t>(-2, 5), in.ConsumeIntegralInRange<int64_t>(-2, 5),
                         in.ConsumeIntegralInRange<int64_t>(-2, 5), in.ConsumeIntegralInRange<int64_t>(-2, 5)};
      d.rank = in.ConsumeIntegralInRange<size_t>(0, 5);
      d.dims = d.rank <= 4 && in.ConsumeIntegralInRange<int>(0, 15) ? dims : nullptr;
      if (d.rank > 4) d.rank = 4 + (d.dims == nullptr);
      qairt_tensor_id in_id = QAIRT_INVALID_ID, out_id = QAIRT_INVALID_ID;
      Check(qairt_graph_add_input(g, &d, &in_id));
      const std::string out_name = name + "_out";
      d.name = out_name.c_str();
      d.dtype = QAIRT_DTYPE_UNDEFINED;
      d.rank_known = 0;
      Check(qairt_graph_add_tensor(g, &d, &out_id));
      static const char* types[] = {"Relu", "Conv2d", "Softmax", "Reshape", "Concat", "Bogus", "FullyConnected"};
      qairt_op_desc op;
      qairt_op_desc_init(&op);
      op.type = types[in.ConsumeIntegralInRange<size_t>(0, std::size(types) - 1)];
      const std::string op_name = name + "_op";
      op.name = op_name.c_str();
      const qairt_tensor_id ins[2] = {in_id, in.ConsumeIntegralInRange<uint32_t>(0, 30)};
      op.inputs = ins;
      op.num_inputs = in.ConsumeIntegralInRange<size_t>(0, 2);
      op.outputs = &out_id;
      op.num_outputs = in.ConsumeIntegralInRange<size_t>(0, 1);
      // Random type, count and value, but `data` always what the type says
      // (the C API cannot check what a pointer points to; a mismatch there
      // is a caller bug, not an input the library must survive).
      const int64_t ints[2] = {in.ConsumeIntegral<int64_t>(), in.ConsumeIntegral<int64_t>()};
      const double floats[2] = {in.ConsumeFloatingPoint<double>(), in.ConsumeFloatingPoint<double>()};
      const std::string text = in.ConsumeRandomLengthString(16);
      const char* strings[2] = {text.c_str(), "axis"};
      const uint32_t type = in.ConsumeIntegralInRange<uint32_t>(0, 7);
      const void* data = type == QAIRT_ATTR_FLOAT || type == QAIRT_ATTR_FLOATS ? static_cast<const void*>(floats)
                         : type == QAIRT_ATTR_STRING                          ? static_cast<const void*>(text.c_str())
                         : type == QAIRT_ATTR_STRINGS                         ? static_cast<const void*>(strings)
                                                                              : static_cast<const void*>(ints);
      const qairt_attr attr{"axis", type, 0, in.ConsumeIntegralInRange<size_t>(0, 2), in.ConsumeIntegralInRange<int>(0, 15) ? data : nullptr};
      if (in.ConsumeBool()) {
        op.attrs = &attr;
        op.num_attrs = 1;
      }
      qairt_op_id id = 0;
      Check(qairt_graph_add_op(g, &op, &id));
      if (in.ConsumeBool()) Check(qairt_graph_mark_output(g, out_id));
      break;
    }
    default: {  // status and free-function queries with odd arguments
      qairt_status_free(nullptr);
      qairt_status_message(nullptr);
      qairt_dtype_name(in.ConsumeIntegral<uint32_t>());
      qairt_op_type_name(in.ConsumeIntegral<size_t>());
      qairt_dtype_t dt = 0;
      const std::string name = Name(in);
      Check(qairt_dtype_from_name(in.ConsumeBool() ? name.c_str() : nullptr, &dt));
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  State st;
  for (int steps = 0; steps < 24 && in.remaining_bytes() > 0; ++steps) Step(in, st);
  return 0;
}
