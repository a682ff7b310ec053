#include "codegen/gpu_printer.h"

#include <map>

#include "codegen/prelude.h"
#include "core/error.h"

namespace lockstep::codegen {

using namespace kir;

std::vector<int> kernel_params(const Kernel& k) {
  std::vector<int> ps = {k.out};
  for (int b : kernel_inputs(k)) ps.push_back(b);
  return ps;
}

namespace {

// `text` with every `key` replaced by `value`.
std::string filled(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

}  // namespace

// v0..v{r-1} from the flat index i (row-major) over `dims`; size-1 dims are 0. Dims in
// `renamed` are declared under the name given instead. Where the work items number under
// 2^32 (`narrow`: known when printing; else the kernel's `n32`), the divisions are 32-bit:
// by a constant a multiply there, a long sequence in 64 bits. The values are the same.
std::string GpuPrinter::unflatten(const std::vector<ExprP>& dims, Narrow narrow,
                                  const std::map<size_t, std::string>& renamed) const {
  std::vector<ExprP> strides(dims.size());
  ExprP at = icst(1);
  for (size_t d = dims.size(); d-- > 0;) strides[d] = at, at = mul(at, dims[d]);
  std::string src, u32 = storage_type(DType::u32);
  auto split = [](const std::string& idx, const std::string& stride, const std::string& dim) {
    std::string e = stride.empty() ? idx : "(" + idx + " / " + stride + ")";
    return dim.empty() ? e : e + " % " + dim;
  };
  for (size_t d = 0; d < dims.size(); ++d) {
    auto it = renamed.find(d);
    std::string v = it != renamed.end() ? it->second : "v" + std::to_string(d), e;
    bool unit = strides[d]->op == Op::Const && strides[d]->i == 1;
    std::string stride = unit ? "" : size(strides[d]), dim = d == 0 ? "" : size(dims[d]);
    std::string wide = split("i", stride, dim);
    std::string thin = "(int64_t)(" + split("(" + u32 + ")i", stride.empty() ? "" : "(" + u32 + ")" + stride,
                                            dim.empty() ? "" : "(" + u32 + ")" + dim) + ")";
    if (dims[d]->op == Op::Const && dims[d]->i == 1) e = "0";
    else if (unit && dim.empty()) e = "i";
    else e = narrow == Narrow::Yes ? thin : narrow == Narrow::No ? wide : "(n32 ? " + thin + " : " + wide + ")";
    src += "    const int64_t " + v + " = " + e + "; (void)" + v + ";\n";
  }
  return src;
}

std::vector<ExprP> GpuPrinter::dims(const Plan& p, int b) {
  std::vector<ExprP> d;
  for (size_t k = 0; k < p.buffers[b].shape.size(); ++k) d.push_back(dim_expr(p, b, k));
  return d;
}

std::string GpuPrinter::prelude() const { return g_.header + helper_functions(g_); }

std::string GpuPrinter::signature(const Plan& p, const Kernel& k) const {
  std::string bounds = filled(g_.launch_bounds, "{group}", std::to_string(k.schedule.group));
  std::string src = comment(k) + g_.kernel_qualifier + " " + (bounds.empty() ? "" : bounds + " ") + k.name + "(";
  std::string based;  // with offset parameters: "bN = base + at" for each buffer
  std::vector<int> params = kernel_params(k);
  for (size_t a = 0; a < params.size(); ++a) {
    std::string type = (a ? g_.read_space : g_.written_space) + storage_type(p.buffers[params[a]].dtype) + "*";
    std::string name = buf_name(params[a]);
    src += std::string(a ? ", " : "") + type + " " + g_.restrict_kw + " " + name + (g_.offset_params ? "_base" : "") +
           filled(g_.param_suffix, "{n}", std::to_string(a));
    if (!g_.offset_params) continue;
    src += ", const uint64_t " + name + "_at";
    std::string bytes = (a ? g_.read_space : g_.written_space) + "char*";
    based += "  " + type + " " + g_.restrict_kw + " " + name + " = (" + type + ")((" + bytes + ")" + name + "_base + " +
             name + "_at);\n";
  }
  return src + (g_.extra_params.empty() ? "" : ", " + g_.extra_params) + ") {\n" + based;
}

std::string GpuPrinter::kernel(const Plan& p, const Kernel& k) const {
  if (k.schedule.loops != Schedule::Loops::Gpu) throw InternalError("internal: " + k.name + " has no GPU schedule");
  std::string src = signature(p, k) + read_symbols(p, k);
  bool fixed = p.buffers[k.out].dims.empty();
  if (fixed && k.schedule.threads == 0) return src + "}\n";
  std::string first = "(int64_t)" + g_.group_index + " * " + g_.group_size + " + " + g_.thread_index;
  std::string stride = "(int64_t)" + g_.group_count + " * " + g_.group_size;
  const Schedule& sc = k.schedule;
  const Expr* red = find_reduce(k.body);
  bool pick = !fixed && sc.fill > 0 && red;  // a symbolic length's tile, or one output per item
  std::string tile = std::to_string(sc.rows * sc.cols);
  if (pick) {
    src += "  const int64_t outputs = " + size(numel_expr(p, k.out)) + ";\n";
    src += "  const bool one = outputs / " + tile + " < " + std::to_string(sc.fill) + ";  // too few work items\n";
  }
  std::string n = fixed ? std::to_string(sc.threads)
                 : pick ? "one ? outputs : outputs / " + tile
                        : size(kir::binary(Fn::Div, numel_expr(p, k.out), icst(sc.rows * sc.cols)));
  src += "  const int64_t n = " + n + ";\n";
  Narrow narrow = !fixed ? Narrow::AtRunTime : sc.threads <= kMax32 ? Narrow::Yes : Narrow::No;
  if (narrow == Narrow::AtRunTime) src += "  const bool n32 = n <= " + std::to_string(kMax32) + g_.int_suffix + ";\n";
  src += "  for (int64_t i = " + first + "; i < n; i += " + stride + ") {\n";
  if (!red) return src + unflatten(dims(p, k.out), narrow) + "    " + store(p, k, "i", expr(k.body)) + "\n  }\n}\n";
  if (!pick) return src + reduction(p, k, sc, *red, narrow) + "  }\n}\n";
  Schedule single = sc;
  single.rows = single.cols = 1;
  single.unroll = 0;
  return src + "    if (one) {\n" + reduction(p, k, single, *red, narrow) + "    } else {\n" +
         reduction(p, k, sc, *red, narrow) + "    }\n  }\n}\n";
}

// The work item's rows x cols outputs: row c and column l of its block, each with its own
// accumulator, the innermost reduction loop unrolled where the schedule says.
std::string GpuPrinter::reduction(const Plan& p, const Kernel& k, const Schedule& sc, const Expr& red,
                                  Narrow narrow) const {
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size();
  bool block = sc.rows * sc.cols > 1;
  if (block && (r < 2 || s[r - 2] % sc.rows || s[r - 1] % sc.cols))
    throw InternalError("internal: " + k.name + "'s schedule of " + std::to_string(sc.rows) + " x " +
                        std::to_string(sc.cols) + " outputs per work item does not tile " + shape_str(s));
  std::string at = compute_type(red.type), src;
  std::string acc = "acc[c * " + std::to_string(sc.cols) + " + l]";
  std::string each = "{ const int c = 0; const int l = 0; ";
  if (block) {
    // Rows block a dim that is the same at every length; columns may block one that is a
    // multiple of them at every length (8*T).
    std::vector<ExprP> items = dims(p, k.out);
    if (sc.rows > 1) items[r - 2] = icst(s[r - 2] / sc.rows);
    if (sc.cols > 1)
      items[r - 1] = items[r - 1]->op == Op::Const ? icst(s[r - 1] / sc.cols)
                                                   : kir::binary(Fn::Div, items[r - 1], icst(sc.cols));
    src += unflatten(items, narrow, {{r - 2, "vb"}, {r - 1, "vl"}});
    std::string rv = "v" + std::to_string(r - 2), cv = "v" + std::to_string(r - 1);
    if (sc.rows > 1) set_tile_row({static_cast<int>(r) - 2, sc.rows, "vb", "c"});
    each = g_.unroll_pragma + "\n    for (int c = 0; c < " + std::to_string(sc.rows) + "; ++c) { const int64_t " + rv +
           " = vb * " + std::to_string(sc.rows) + " + c; (void)" + rv + ";\n    " + g_.unroll_pragma +
           "\n    for (int l = 0; l < " + std::to_string(sc.cols) + "; ++l) { const int64_t " + cv + " = vl * " +
           std::to_string(sc.cols) + " + l; (void)" + cv + "; ";
  } else {
    src += unflatten(dims(p, k.out), narrow);
  }
  std::string close = block ? " } }" : " }", n = std::to_string(sc.rows * sc.cols);
  src += "    " + at + " acc[" + n + "];\n";
  src += "    for (int j = 0; j < " + n + "; ++j) acc[j] = (" + at + ")" + reduce_init(red) + ";\n";
  for (size_t d = 0; d < red.shape.size(); ++d) {
    bool unrolled = d + 1 == red.shape.size() && sc.unroll > 0 && red.shape[d] <= sc.unroll;
    src += (unrolled ? "    " + g_.unroll_pragma + "\n" : "") + "    " + loop("v" + std::to_string(red.i + d), red.shape[d]);
  }
  src += "    {\n    " + each + reduce_step(red, acc) + close + "\n    }\n";
  std::string flat = block ? out_index(p, k.out) : "i";
  src += "    " + each + store(p, k, flat, expr(k.body, acc)) + close + "\n";
  set_tile_row({});
  return src;
}

std::string GpuPrinter::epilogue(const Plan& p) const {
  size_t n = p.buffers.empty() ? 1 : p.buffers.size();
  std::string count = std::to_string(p.buffers.size());
  std::string head = "// Buffer sizes the kernels were built for: the runtime refuses a module built for another plan.\n";
  if (!g_.device_global.empty())
    return head + g_.device_global + " long long ls_buffer_bytes[" + std::to_string(n) + "] = " + buffer_bytes_init(p) +
           ";\n" + g_.device_global + " int ls_buffer_count = " + count + ";\n";
  // No program-scope globals the host can read: one work item copies them out, count first,
  // never past the `room` the runtime gives (a stale program may list more buffers).
  std::string params =
      g_.plan_info_params.empty() ? g_.written_space + "int64_t* out, const int64_t room" : g_.plan_info_params;
  return head + g_.constant_space + " int64_t ls_buffer_bytes[" + std::to_string(n) + "] = " + buffer_bytes_init(p) +
         ";\n" + g_.kernel_qualifier + " ls_plan_info(" + params + ") {\n  out[0] = " + count +
         ";\n  for (int64_t i = 0; i < " + count + " && 1 + i < room; ++i) out[1 + i] = ls_buffer_bytes[i];\n}\n";
}

std::string GpuPrinter::program(const Plan& p) const {
  std::string src = prelude();
  for (const Kernel& k : p.kernels) src += "\n" + kernel(p, k);
  return src + "\n" + epilogue(p);
}

}  // namespace lockstep::codegen
