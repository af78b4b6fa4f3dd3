// runtime/CallForms.h — how each primitive is called from TSL, as data.
//
// A primitive's row (runtime/Ops.h) names its call form: its arguments in order — each a
// tensor operand or an attribute of some kind (an integer, a shape, a dtype...),
// positional or a keyword option, with its default — and a builder that makes the
// operation's typed attributes from the attribute values read. The evaluator reads every
// primitive call through this one description (eval/OpArgs.cpp has one reader per
// argument kind and none per operation); the usage in error messages, `:doc` and
// docs/primitives.md print it. Aliases (`zeros`, `@`, `flatten`...) are call forms of the
// same rows (TSL_ALIASES in runtime/Ops.h).
//
// The layer knows nothing of TSL values: attribute values arrive already read, as the
// plain C++ types of ArgValue.
#pragma once

#include "runtime/Ops.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace tsl {

/// What one argument of a call is.
enum class ArgKind : uint8_t {
  Tensor,      ///< a tensor operand (a number is a rank-0 tensor); as a keyword option
               ///< (defaulting to nil), an operand after the positional ones when given
  Tensors,     ///< tensor operands: a vector of tensors, or a tensor's slices along axis 0
  MoreTensors, ///< every remaining positional argument, each a tensor operand
  ShapeOf,     ///< a tensor whose shape (and dtype, for a default) is what is read
  Int,         ///< an integer
  Ints,        ///< an integer or a vector of integers (a shape, axes)
  Pair,        ///< an integer or a pair [a b] (a stride, a padding, a kernel)
  Number,      ///< a number, integer or float
  Bool,        ///< true or false
  DType,       ///< a dtype keyword: :f32
  Layout,      ///< a layout keyword: :nhwc
  Choice,      ///< one of the keywords `choices` lists
  String,      ///< a string
  Ranges,      ///< slice ranges: per axis nil or [start stop] / [start stop step]
  Indices,     ///< every remaining positional argument: an integer index, or nil
  Widths,      ///< pad widths: [before after] for every axis, or one pair per axis
};

enum class ArgUse : uint8_t {
  Required,        ///< positional, must be given
  Optional,        ///< positional, may be left out (only after the required ones); may also
                   ///< be given as a keyword option
  Keyword,         ///< a keyword option (:name value), with its default
  RequiredKeyword, ///< a keyword option that must be given (pooling's :kernel)
};

/// One argument of a call form.
struct ArgSpec {
  const char* name;               ///< "x", "shape", "axis" (a keyword is written :axis)
  ArgKind kind;
  ArgUse use = ArgUse::Required;
  const char* fallback = nullptr; ///< the default as written: "-1", "false", ":f32"; nullptr:
                                  ///< none (required), or chosen by the builder
  const char* choices = nullptr;  ///< Choice: the keywords it takes ("none tanh")
  bool traced = false;            ///< may be known only when compiled code runs: its value
                                  ///< is not part of any shape (eval/OpArgs.cpp lowers it)
  bool isTensor() const { return kind == ArgKind::Tensor || kind == ArgKind::Tensors || kind == ArgKind::MoreTensors; }
};

/// An attribute argument as read (tensor arguments are operands, not values): absent, or
/// the value of its kind. ShapeOf gives the shape as Ints and its dtype beside it.
using ArgValue = std::variant<std::monostate, int64_t, std::vector<int64_t>, std::array<int64_t, 2>, Number, bool,
                              DType, Layout, std::string, std::vector<SliceRange>,
                              std::vector<std::optional<int64_t>>, std::vector<std::array<int64_t, 2>>>;

/// The attribute values of one call, one per ArgSpec (monostate for tensor arguments and
/// for optional ones left out without a default).
class ArgValues {
public:
  explicit ArgValues(std::vector<ArgValue> values, DType sourceDType = DType::F32)
      : values_(std::move(values)), sourceDType_(sourceDType) {}
  bool has(size_t i) const { return i < values_.size() && !std::holds_alternative<std::monostate>(values_[i]); }
  template <typename T>
  const T& get(size_t i) const { return std::get<T>(values_[i]); }
  template <typename T>
  T getOr(size_t i, T fallback) const { return has(i) ? std::get<T>(values_[i]) : fallback; }
  /// The dtype of the tensor a ShapeOf or Number argument was read from (a weak number's
  /// concrete dtype: i64 or f32): what full and zeros-like default to.
  DType sourceDType() const { return sourceDType_; }

private:
  std::vector<ArgValue> values_;
  DType sourceDType_;
};

/// What a call makes: the operation (a call form may choose among variants of its row, as
/// gelu's :approximate does) and its attributes.
struct BuiltCall {
  OpKind kind;
  OpAttrs attrs;
};

/// How the builtin of an elementwise row combines more than two operands.
enum class Variadic : uint8_t {
  None,        ///< exactly its operands
  Fold,        ///< (+ a b c) folds left; (+) is the identity, (+ a) is a
  FoldInverse, ///< as Fold, and (- a) negates, (/ a) inverts
  Chain,       ///< (< a b c): scalars compared pairwise
};

/// A call form: the arguments, how more operands combine, and the builder.
struct CallForm {
  std::span<const ArgSpec> args;
  BuiltCall (*build)(OpKind self, const ArgValues& values);
  Variadic variadic = Variadic::None;
  int64_t identity = 0;       ///< Fold's value for no operands
  const char* usage = nullptr; ///< a usage to print instead of the one the args give
  /// How many results a call gives: more than one are the parts of a row with a `part`
  /// attribute (top-k's values and indices), the builtin applying the row once per part,
  /// with the attributes `withPart` makes, and returning the vector of the results.
  int64_t parts = 1;
  OpAttrs (*withPart)(const OpAttrs& built, int64_t part) = nullptr;
  bool trees = false;          ///< a tree of tensors may stand for the first operand: the
                               ///< operation then applies to each leaf (the collectives)
};

/// "(sum x :axis nil :keepdims false)": how a call of `name` is written, from its form
/// (or the form's own usage).
std::string usageOf(std::string_view name, const CallForm& form);

// ---- The call forms rows use (runtime/CallForms.cpp) ----

extern const CallForm kUnaryCall;     ///< (op x)
extern const CallForm kBinaryCall;    ///< (op a b)
extern const CallForm kWhereCall;     ///< (where cond a b)
extern const CallForm kClipCall;      ///< (clip x lo hi)
extern const CallForm kCrossEntropyCall;
extern const CallForm kAddCall;       ///< (+ a b ...)
extern const CallForm kMulCall;       ///< (* a b ...)
extern const CallForm kSubCall;       ///< (- a b ...), (- a)
extern const CallForm kDivCall;       ///< (/ a b ...), (/ a)
extern const CallForm kChainCall;     ///< (< a b ...)
extern const CallForm kGeluCall;      ///< (gelu x :approximate :none)
extern const CallForm kCastCall;      ///< (astype x :f16)
extern const CallForm kLayoutCall;    ///< (to-layout x :nhwc)
extern const CallForm kReduceCall;    ///< (sum x :axis nil :keepdims false)
extern const CallForm kMomentCall;    ///< (var x :axis nil :ddof 0 :keepdims false)
extern const CallForm kReshapeCall;   ///< (reshape x shape)
extern const CallForm kFlattenCall;   ///< (flatten x)
extern const CallForm kTransposeCall; ///< (transpose x perm?)
extern const CallForm kBroadcastCall; ///< (broadcast-to x shape)
extern const CallForm kExpandDimsCall;
extern const CallForm kSqueezeCall;
extern const CallForm kSliceCall;
extern const CallForm kIndexCall; ///< (get x i ...)
extern const CallForm kJoinCall;  ///< (concat [a b] :axis 0)
extern const CallForm kPadCall;
extern const CallForm kTakeCall;
extern const CallForm kOneHotCall;
extern const CallForm kDiagonalCall; ///< (tril x k?)
extern const CallForm kEinsumCall;
extern const CallForm kConv2dCall;
extern const CallForm kPoolCall;
extern const CallForm kAlongAxisCall; ///< (softmax x :axis -1), (cumsum x :axis -1)
extern const CallForm kSortCall;      ///< (sort x :axis -1)
extern const CallForm kArgsortCall;   ///< (argsort x :axis -1)
extern const CallForm kTopKCall;      ///< (top-k x k): two parts, [values indices]
extern const CallForm kGatherCall;    ///< (gather x idx :axis -1)
extern const CallForm kScatterAddCall; ///< (scatter-add x idx src :axis -1)
extern const CallForm kLayerNormCall;
extern const CallForm kAttentionCall; ///< (attention q k v :mask nil :causal false)
extern const CallForm kFullCall;
extern const CallForm kZerosCall;
extern const CallForm kOnesCall;
extern const CallForm kZerosLikeCall;
extern const CallForm kOnesLikeCall;
extern const CallForm kArangeCall;
extern const CallForm kLinspaceCall;
extern const CallForm kEyeCall;
extern const CallForm kRngKeyCall;
extern const CallForm kRngSplitCall;
extern const CallForm kRandomCall; ///< (rand key shape :dtype :f32)
extern const CallForm kDropoutCall;
extern const CallForm kRandIntCall;     ///< (randint key shape lo hi)
extern const CallForm kCategoricalCall; ///< (categorical key logits)
extern const CallForm kPermutationCall; ///< (permutation key n)
extern const CallForm kShuffleCall;     ///< (shuffle key x)
extern const CallForm kBernoulliCall;   ///< (bernoulli key p shape)
extern const CallForm kAllReduceCall;       ///< (all-reduce x :op :sum)
extern const CallForm kBroadcastRootCall;   ///< (broadcast x :root 0)
extern const CallForm kCollectiveAxisCall;  ///< (all-gather x :axis 0), (reduce-scatter x :axis 0)
extern const CallForm kBarrierCall;         ///< (barrier)
/// Rows without a call form of their own: the compiler's adjoints and variants reached
/// through another form (gelu-tanh through gelu's :approximate).
extern const CallForm kInternal;

} // namespace tsl
