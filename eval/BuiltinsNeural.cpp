// eval/BuiltinsNeural.cpp — conv-transpose2d: a call form of the conv2d-grad-input row.
//
// A transposed convolution is exactly the derivative of conv2d with respect to its input,
// with the weights read as conv2d's (w's [C_in, C_out, kH, kW] is conv2d's [O, I, kH, kW]
// seen from the other side). So it runs on that row's kernel, lowers as that row does on
// every target and differentiates by its rules; this builtin only reads PyTorch's
// arguments and works out the output's shape, which the row takes as an attribute.
#include "eval/Builtins.h"
#include "eval/OpArgs.h"
#include "eval/Staging.h"
#include "eval/Tracer.h"
#include "runtime/NeuralNet.h"

namespace tsl::builtins {

namespace {

std::array<int64_t, 2> pairOf(const CallContext& cx, const Value* v, int64_t fallback, std::string_view what) {
  if (!v) return {fallback, fallback};
  const std::vector<int64_t> n = readInts(cx, *v, what);
  if (n.size() == 1) return {n[0], n[0]};
  if (n.size() != 2) fail(ErrorKind::Value, cx.self.name(), ": ", what, " takes one number or two, got ", n.size());
  return {n[0], n[1]};
}

std::vector<int64_t> shapeOfArg(const CallContext& cx, const Value& v, size_t i) {
  std::vector<int64_t> s;
  if (isTraced(v)) {
    for (const ir::Dim& d : tracedType(v).dims) s.push_back(d.size);
    return s;
  }
  if (!v.isTensor()) badArgument(cx, i, "a tensor", v);
  const Tensor& t = v.tensor();
  for (int a = 0; a < t.rank(); ++a) s.push_back(t.shape()[a]);
  return s;
}

} // namespace

void registerNeuralBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("conv-transpose2d", 2, 8, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"stride", "padding", "output-padding"});
    if (kw.positional().size() != 2) fail(ErrorKind::Type, "conv-transpose2d: expected (conv-transpose2d x w :stride 1 :padding 0 :output-padding 0)");
    const std::vector<int64_t> x = shapeOfArg(cx, args[0], 0), w = shapeOfArg(cx, args[1], 1);
    if (x.size() != 4 || w.size() != 4)
      fail(ErrorKind::Shape, "conv-transpose2d: x must be [N, C_in, H, W] and w [C_in, C_out, kH, kW], got ranks ",
           x.size(), " and ", w.size());
    if (x[1] != w[0])
      fail(ErrorKind::Shape, "conv-transpose2d: x has ", x[1], " channels but w is for ", w[0], " (w is [C_in, C_out, kH, kW])");
    const auto stride = pairOf(cx, kw.find("stride"), 1, ":stride");
    const auto padding = pairOf(cx, kw.find("padding"), 0, ":padding");
    const auto extra = pairOf(cx, kw.find("output-padding"), 0, ":output-padding");
    std::vector<int64_t> out{x[0], w[1], 0, 0};
    for (int a = 0; a < 2; ++a) {
      constexpr int64_t kMaxStep = int64_t{1} << 20; // keeps the output size's arithmetic exact
      if (stride[a] < 1 || stride[a] > kMaxStep)
        fail(ErrorKind::Value, "conv-transpose2d: :stride must be from 1 to ", kMaxStep, ", got ", stride[a]);
      if (padding[a] < 0 || padding[a] > kMaxStep)
        fail(ErrorKind::Value, "conv-transpose2d: :padding must be from 0 to ", kMaxStep, ", got ", padding[a]);
      if (extra[a] < 0 || extra[a] >= stride[a])
        fail(ErrorKind::Value, "conv-transpose2d: :output-padding must be >= 0 and smaller than the stride (",
             stride[a], "), got ", extra[a]);
      out[2 + a] = (x[2 + a] - 1) * stride[a] - 2 * padding[a] + w[2 + a] + extra[a];
      if (out[2 + a] < 1)
        fail(ErrorKind::Shape, "conv-transpose2d: the output would have ", out[2 + a], " rows along axis ", 2 + a,
             " (padding too large for the input and kernel)");
    }
    const Conv2dGradAttrs attrs{stride, padding, out};
    const Value* operands[] = {&args[0], &args[1]};
    if (std::optional<Value> staged = staging::primitive(cx.evaluator, OpKind::Conv2dGradInput, attrs, operands, cx.span))
      return *staged;
    const Tensor inputs[] = {tensorArg(cx, args, 0), tensorArg(cx, args, 1)};
    return Value(runOp(OpKind::Conv2dGradInput, attrs, inputs));
  });
  document(evaluator, "conv-transpose2d",
           "(conv-transpose2d x w :stride 1 :padding 0 :output-padding 0): the transposed 2-D convolution of NCHW "
           "x by w [C_in, C_out, kH, kW], as PyTorch's conv_transpose2d (the derivative of conv2d with respect to its "
           "input); each option is one number or a pair.\n  e.g. (shape (conv-transpose2d (ones [1 2 4 4]) (ones [2 3 3 3]) "
           ":stride 2 :padding 1 :output-padding 1))  ; [1 3 8 8]");
}

} // namespace tsl::builtins
