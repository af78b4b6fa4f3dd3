// runtime/OpDocs.cpp — one entry per operation of the table (runtime/Ops.h).
#include "runtime/OpDocs.h"

#include <array>

namespace tsl {

namespace {

struct Entry {
  OpKind kind;
  OpDoc doc;
};

constexpr Entry kDocs[] = {
    {OpKind::Add, {"(+ a b ...)", "Sum, elementwise, broadcasting; variadic. Between two trees of one structure, leaf by leaf."}},
    {OpKind::Sub, {"(- a b ...)", "Difference, elementwise, broadcasting; (- a) negates."}},
    {OpKind::Mul, {"(* a b ...)", "Product, elementwise, broadcasting; variadic."}},
    {OpKind::Div, {"(/ a b ...)", "Quotient, elementwise, broadcasting; integers are promoted to floats."}},
    {OpKind::FloorDiv, {"(floordiv a b)", "Quotient rounded toward -inf; integer division by zero gives 0."}},
    {OpKind::Mod, {"(mod a b)", "Remainder with the sign of b (a - b·floordiv(a, b)); by zero gives 0."}},
    {OpKind::Pow, {"(pow a b)", "a raised to the power b, elementwise."}},
    {OpKind::Maximum, {"(maximum a b)", "The larger of a and b, elementwise (NaN propagates)."}},
    {OpKind::Minimum, {"(minimum a b)", "The smaller of a and b, elementwise (NaN propagates)."}},
    {OpKind::Less, {"(< a b)", "a < b elementwise: a :bool tensor."}},
    {OpKind::LessEqual, {"(<= a b)", "a <= b elementwise: a :bool tensor."}},
    {OpKind::Greater, {"(> a b)", "a > b elementwise: a :bool tensor."}},
    {OpKind::GreaterEqual, {"(>= a b)", "a >= b elementwise: a :bool tensor."}},
    {OpKind::Equal, {"(== a b)", "Elementwise equality: a :bool tensor (= compares whole values)."}},
    {OpKind::NotEqual, {"(!= a b)", "Elementwise inequality: a :bool tensor."}},
    {OpKind::LogicalAnd, {"(logical-and a b)", "Elementwise and of truth values: a :bool tensor."}},
    {OpKind::LogicalOr, {"(logical-or a b)", "Elementwise or of truth values: a :bool tensor."}},
    {OpKind::Neg, {"(neg x)", "-x, elementwise."}},
    {OpKind::Abs, {"(abs x)", "|x|, elementwise."}},
    {OpKind::Sign, {"(sign x)", "-1, 0 or 1 by the sign of x, elementwise."}},
    {OpKind::Exp, {"(exp x)", "e^x, elementwise (floats)."}},
    {OpKind::Log, {"(log x)", "Natural logarithm, elementwise (floats)."}},
    {OpKind::Log1p, {"(log1p x)", "log(1 + x), accurate near 0 (floats)."}},
    {OpKind::Sqrt, {"(sqrt x)", "Square root, elementwise (floats)."}},
    {OpKind::Rsqrt, {"(rsqrt x)", "1 / sqrt(x), elementwise (floats)."}},
    {OpKind::Square, {"(square x)", "x·x, elementwise."}},
    {OpKind::Sin, {"(sin x)", "Sine, elementwise (floats)."}},
    {OpKind::Cos, {"(cos x)", "Cosine, elementwise (floats)."}},
    {OpKind::Tanh, {"(tanh x)", "Hyperbolic tangent, elementwise (floats)."}},
    {OpKind::Sigmoid, {"(sigmoid x)", "1 / (1 + e^-x), elementwise (floats)."}},
    {OpKind::Relu, {"(relu x)", "max(x, 0), elementwise; its derivative at 0 is 0."}},
    {OpKind::Gelu, {"(gelu x :approximate :tanh)", "x·Φ(x) with the exact normal CDF (erf), or its tanh approximation."}},
    {OpKind::GeluTanh, {"(gelu-tanh x)", "GELU by its tanh approximation; (gelu x :approximate :tanh) calls it."}},
    {OpKind::LogicalNot, {"(logical-not x)", "Elementwise negation of truth values: a :bool tensor."}},
    {OpKind::Where, {"(where c a b)", "a where c is true, else b, elementwise, broadcasting."}},
    {OpKind::Clip, {"(clip x lo hi)", "x limited to [lo, hi], elementwise."}},
    {OpKind::Cast, {"(astype x :dtype)", "x converted to another dtype (:bool :i32 :i64 :f16 :bf16 :f32 :f64)."}},
    {OpKind::Sum, {"(sum x :axis a :keepdims k)", "Sum over the axes a (an integer or a vector; all when absent)."}},
    {OpKind::Mean, {"(mean x :axis a :keepdims k)", "Mean over the axes a (all when absent)."}},
    {OpKind::Prod, {"(prod x :axis a :keepdims k)", "Product over the axes a (all when absent)."}},
    {OpKind::Max, {"(max x :axis a :keepdims k)", "Largest element over the axes a; ties share the gradient evenly."}},
    {OpKind::Min, {"(min x :axis a :keepdims k)", "Smallest element over the axes a; ties share the gradient evenly."}},
    {OpKind::ArgMax, {"(argmax x :axis a :keepdims k)", "Index (i64) of the first largest element along the axis."}},
    {OpKind::ArgMin, {"(argmin x :axis a :keepdims k)", "Index (i64) of the first smallest element along the axis."}},
    {OpKind::LogSumExp, {"(logsumexp x :axis a :keepdims k)", "log Σ e^x over the axes a, computed without overflow."}},
    {OpKind::Reshape, {"(reshape x shape)", "The elements of x in another shape of the same size; one -1 is inferred."}},
    {OpKind::Transpose, {"(transpose x perm)", "Axes permuted by perm (reversed when absent); a view."}},
    {OpKind::BroadcastTo, {"(broadcast-to x shape)", "x repeated along axes of size 1 (or new leading axes) to shape; a view."}},
    {OpKind::ExpandDims, {"(expand-dims x axis)", "x with a new axis of size 1 at axis; a view."}},
    {OpKind::Squeeze, {"(squeeze x :axis a)", "x without its axes of size 1 (those of a, or all); a view."}},
    {OpKind::Slice, {"(slice x [[start stop] ...])", "A range per axis (nil: open); a view."}},
    {OpKind::Index, {"(get x i j ...)", "The element or sub-tensor at the indices (nil selects a whole axis); a view."}},
    {OpKind::Concat, {"(concat [a b ...] :axis n)", "Tensors joined along an existing axis."}},
    {OpKind::Stack, {"(stack [a b ...] :axis n)", "Tensors of one shape joined along a new axis."}},
    {OpKind::Pad, {"(pad x [[before after] ...] :value v)", "x surrounded by v (0 by default) on each axis."}},
    {OpKind::Take, {"(take x indices :axis n)", "The slices of x at integer indices along an axis (negative from the end)."}},
    {OpKind::OneHot, {"(one-hot labels n)", "Integer labels as rows of n zeros with a one at the label (f32)."}},
    {OpKind::MatMul, {"(matmul a b)", "Matrix product, batched over leading axes (broadcasting); 1-D operands as in NumPy. Alias @."}},
    {OpKind::Dot, {"(dot a b)", "Sum of products over a's last axis and b's second-to-last (NumPy's dot)."}},
    {OpKind::Einsum, {"(einsum \"ij,jk->ik\" a b ...)", "Sums of products over the indices the spec contracts."}},
    {OpKind::Conv2d, {"(conv2d x w :stride s :padding p)", "2-D convolution of NCHW x by OIHW w (cross-correlation, as PyTorch)."}},
    {OpKind::MaxPool2d, {"(max-pool2d x :kernel k :stride s :padding p)", "Largest value of each window of NCHW x; stride defaults to the kernel."}},
    {OpKind::AvgPool2d, {"(avg-pool2d x :kernel k :stride s :padding p)", "Mean of each window of NCHW x; stride defaults to the kernel."}},
    {OpKind::Softmax, {"(softmax x :axis a)", "e^x / Σ e^x along an axis (the last by default)."}},
    {OpKind::LogSoftmax, {"(log-softmax x :axis a)", "x - logsumexp(x) along an axis (the last by default)."}},
    {OpKind::LayerNorm, {"(layer-norm x :axis a :eps e)", "(x - mean) / sqrt(var + eps) along an axis; no affine parameters."}},
    {OpKind::CrossEntropy, {"(cross-entropy logits labels)", "Mean over the batch of -log softmax(logits)[label] (integer labels)."}},
    {OpKind::Mse, {"(mse a b)", "Mean of (a - b)², a scalar."}},
    {OpKind::Full, {"(full shape value :dtype d)", "A tensor of shape filled with value (zeros, ones call it)."}},
    {OpKind::Arange, {"(arange n) (arange start stop step)", "Evenly spaced values in [start, stop)."}},
    {OpKind::Linspace, {"(linspace start stop num)", "num evenly spaced values from start to stop inclusive."}},
    {OpKind::Eye, {"(eye n)", "The n×n identity matrix."}},
    {OpKind::RngKey, {"(rng-key seed)", "A key of the functional random generator: the same key, the same numbers."}},
    {OpKind::RngSplit, {"(rng-split key n)", "n independent keys derived from key."}},
    {OpKind::RandUniform, {"(rand key shape)", "Uniform values in [0, 1) from key."}},
    {OpKind::RandNormal, {"(randn key shape)", "Standard normal values from key."}},
    {OpKind::Dropout, {"(dropout key x rate)", "Each element zeroed with probability rate, the rest scaled by 1/(1 - rate)."}},
    {OpKind::StopGradient, {"(stop-gradient x)", "x, through which no derivative flows."}},
    {OpKind::SliceGrad, {"(slice-grad g x-shape [[start stop] ...])", "The cotangent of slice: g placed in zeros of x's shape (derivative programs)."}},
    {OpKind::TakeGrad, {"(take-grad g indices size :axis n)", "The cotangent of take: g summed into zeros at the indices (derivative programs)."}},
    {OpKind::Conv2dGradInput, {"(conv2d-grad-input g w ...)", "The cotangent of conv2d's input (derivative programs)."}},
    {OpKind::Conv2dGradWeight, {"(conv2d-grad-weight x g ...)", "The cotangent of conv2d's weights (derivative programs)."}},
    {OpKind::MaxPool2dGrad, {"(max-pool2d-grad x g ...)", "The cotangent of max-pool2d: g to each window's largest element."}},
    {OpKind::AvgPool2dGrad, {"(avg-pool2d-grad g ...)", "The cotangent of avg-pool2d: g spread evenly over each window."}},
    {OpKind::Transdata, {"(to-layout x :layout)", "The same logical tensor stored in another physical layout (:nhwc, :nc1hwc0, ...); in the IR a transdata, as the conversions the compiler places."}},
};

} // namespace

const OpDoc* opDoc(OpKind kind) {
  for (const Entry& e : kDocs)
    if (e.kind == kind) return &e.doc;
  return nullptr;
}

} // namespace tsl
