// compiler/cpu/FunctionCodegen.h — generating one IR function (internal to compiler/cpu).
//
// Codegen.cpp holds the module (functions, constants, the host ABI) and the function's
// skeleton: values, control flow and calls; Scalars.cpp the arithmetic of one element
// (the kernel library's scalar functions, conversions between storage types); Loops.cpp
// the loop nests of elementwise operations, copies, fused groups and reductions, and the
// outlining that runs them in parallel; Operations.cpp the lowering table: how each
// primitive and each fused group is emitted, from loops, kernel-library calls or, failing
// a native lowering, the eager kernel.
#pragma once

#include "compiler/cpu/Codegen.h"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace tsl::compiler::cpu {

/// A concrete type's dimensions, their product over [from, to), row-major strides.
inline std::vector<int64_t> dimsOf(const ir::Type& t) {
  std::vector<int64_t> d;
  for (const ir::Dim& dim : t.dims) d.push_back(dim.size);
  return d;
}
inline int64_t product(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, v.size()); ++i) n *= v[i];
  return n;
}
inline std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

/// The kernel library (compiler/cpu/kernels/Library.cpp, embedded as bitcode) for one
/// module being generated: declares its functions in the module as they are asked for,
/// then links the ones used into it: the scalar functions internal and always-inline, the
/// kernels over whole tensors (tsl_k_*) internal functions — or, for the JIT
/// (`linkKernels` false), left as declarations of the kernels compiled into the compiler.
class KernelLibrary {
public:
  KernelLibrary(llvm::Module& out, bool linkKernels);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;
  /// The declaration of library function `name` in the module (an internal error if the
  /// library has no such function).
  llvm::Function* get(const std::string& name);
  /// Links what the module uses; call once, after generation.
  void link();
  /// Whether library function `f` (a declaration get() made) computes with math that x86
  /// has no vector instructions for — sine, cosine, powers, libm calls: a loop of it
  /// vectorised calls it lane by lane, no faster, in code many times longer.
  bool scalarMath(const llvm::Function& f);

private:
  std::unordered_map<std::string, bool> scalarMath_;
  llvm::Module& out_;
  std::unique_ptr<llvm::Module> library_;
  bool linkKernels_;
};

/// A module being generated: its functions, constants and the host functions it calls.
class ModuleCodegen {
public:
  ModuleCodegen(const ir::Module& module, llvm::Module& out, const CodegenOptions& options);
  /// The LLVM function of `f`, generated the first time it is asked for.
  llvm::Function* function(const ir::Function& f);
  /// The declaration of a host function of tsl_abi.h ("tsl_parallel_for").
  llvm::Function* abi(const char* name);
  /// A private global holding the elements of a constant tensor (64-byte aligned).
  /// A constant's bytes as compiled code reads them: stored in `layout`, the layout its IR
  /// type names (a folded to-layout leaves a constant of a blocked type).
  llvm::Constant* constantData(const Tensor& t, Layout layout);
  /// The arena `f` needs: its own, then the largest frame of what it calls.
  int64_t frameBytes(const ir::Function& f);

  const ir::Module& ir;
  llvm::Module& out;
  const CodegenOptions& options;
  KernelLibrary library;
  Program program;

private:
  std::unordered_map<const ir::Function*, llvm::Function*> functions_;
  std::unordered_map<const ir::Function*, int64_t> frames_;
  std::unordered_set<const ir::Function*> sizing_; ///< frames being computed (recursion)
};

/// How a tensor operand of a loop nest is read (or its result written): a base pointer
/// and a stride (in elements) per axis of the value's own shape, or a scalar register.
struct Access {
  llvm::Value* base = nullptr;  ///< pointer, or the scalar's value when `scalar`
  DType dtype = DType::F32;
  std::vector<int64_t> strides; ///< over the value's own shape
  int64_t offset = 0;           ///< in elements
  bool scalar = false;
};

/// One loop nest: the elementwise operations `ops` (in order) evaluated at every index of
/// `space`, reading `leaves`, yielding `result` (a value computed by `ops` or a leaf) —
/// or, without a result, the constant `fill` (storage bits of the output's dtype).
struct LoopNest {
  std::vector<int64_t> space;
  std::vector<std::pair<const ir::Value*, Access>> leaves;
  std::vector<const ir::Operation*> ops;
  const ir::Value* result = nullptr;
  llvm::Constant* fill = nullptr;
};

class FunctionCodegen {
public:
  FunctionCodegen(ModuleCodegen& module, const ir::Function& f, llvm::Function* fn);
  void run();

  // ---- Types and conversions (Scalars.cpp) ----
  llvm::Type* storageType(DType dtype);
  llvm::Type* computeType(DType dtype);
  /// A storage value of `from` as storage of `to`, as the runtime converts elements.
  llvm::Value* convert(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to);
  /// A storage value in its compute type (halves in float, bool as i1), and back.
  llvm::Value* toCompute(llvm::IRBuilder<>& b, llvm::Value* v, DType dtype);
  llvm::Value* fromCompute(llvm::IRBuilder<>& b, llvm::Value* v, DType dtype);
  /// One element of an elementwise operation: operands and result in their storage types.
  llvm::Value* elementwise(llvm::IRBuilder<>& b, const ir::Operation& op, const std::vector<llvm::Value*>& operands);
  /// The storage bits of a scalar constant.
  llvm::Constant* constantScalar(const Tensor& value);

  // ---- Loops (Loops.cpp) ----
  /// Emits `nest`, storing each element through `out` (strides over nest.space).
  void emitLoop(const LoopNest& nest, const Access& out);
  /// A reduction: `nest` computes the reduced operand over `nest.space`; `reduce` is the
  /// sum, mean, prod, max, min, argmax or argmin of it over its axes, stored at `out`.
  void emitReduction(const LoopNest& nest, const ir::Operation& reduce, llvm::Value* out);
  /// The access to a value read through a view operation (transpose, broadcast-to,
  /// expand-dims, squeeze, reshape, slice, index) of a value read by `operand`.
  Access viewAccess(const ir::Operation& view, const Access& operand);
  /// Runs body(builder, begin, end, captures) over [0, n) in chunks, in parallel when the
  /// work is large: the body is outlined into a function that reads `captures` back.
  /// `perThread`: one chunk per thread (of at least `grain`), for bodies that pack data.
  void parallel(int64_t n, int64_t grain, const std::vector<llvm::Value*>& captures,
                const std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*,
                                          const std::vector<llvm::Value*>&)>& body,
                bool perThread = false);
  /// A loop nest for a single elementwise or view operation, or a fused region
  /// (`special` is then its reduction or contraction, if any, and the nest computes what
  /// the special operation reads — or, for a contraction, its epilogue).
  LoopNest nestFor(const ir::Operation& op);
  LoopNest nestForRegion(const ir::Operation& fusedOp, const ir::Operation*& special);

  // ---- Operations (Operations.cpp) ----
  /// Emits a primitive through the lowering table: loops for elementwise operations,
  /// views and loop reductions, a kernel-library call, or the eager kernel.
  void primitive(const ir::Operation& op);
  /// Emits `op` (its operands already have values) with its result written at `out`.
  void emitInto(const ir::Operation& op, llvm::Value* out);
  /// Runs `op` on its eager kernel through tsl_run_kernel, writing its result at `out`;
  /// `why` is for --print-fallbacks. An error ahead of time.
  void fallback(const ir::Operation& op, llvm::Value* out, const std::string& why);
  /// An output access to `v`'s memory, contiguous over its shape.
  Access outputAccess(const ir::Value* v);

  // ---- Shared services (Codegen.cpp) ----
  llvm::IRBuilder<>& builder() { return b_; }
  llvm::LLVMContext& context() { return fn_->getContext(); }
  ModuleCodegen& moduleCodegen() { return m_; }
  KernelLibrary& library() { return m_.library; }
  llvm::Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  llvm::Value* i32(int32_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  /// The tensor value's buffer (a scalar is spilled to a stack slot first).
  llvm::Value* pointer(const ir::Value* v);
  /// The scalar value's register.
  llvm::Value* scalar(const ir::Value* v);
  /// Where tensor `v` is to be written: its home's memory. For a scalar, a stack slot
  /// (finishScalar then loads it into the value's register).
  llvm::Value* destination(const ir::Value* v);
  void finishScalar(const ir::Value* v);
  void setValue(const ir::Value* v, llvm::Value* x) { values_[v] = x; }
  /// Reads value `v` as a loop operand (its buffer, or its scalar).
  Access access(const ir::Value* v);
  /// If `failed` (i1), stores the details in the context and returns TSL_ERROR_CHECK.
  void check(llvm::Value* failed, int site, llvm::Value* detail0, llvm::Value* detail1);
  /// A check site: its kind, message ({0}, {1} for the details) and span.
  int checkSite(ErrorKind kind, std::string message, const Span& span);
  /// If the status `code` (i32) is not TSL_OK, returns it from the function.
  void propagate(llvm::Value* code);
  /// Returns TSL_ERROR_INTERRUPTED if the interrupt flag is set.
  void pollInterrupt();
  /// The context's pointer to the interrupt flag (may be null), for loops in outlined
  /// bodies to poll; the caller polls again after them (pollInterrupt).
  llvm::Value* interruptFlag();
  void copyBytes(llvm::Value* dst, llvm::Value* src, int64_t bytes);
  /// A stack array holding `values` (all of type `type`), for arguments passed by array.
  llvm::Value* array(const std::vector<llvm::Value*>& values, llvm::Type* type);
  /// A stack slot in the entry block.
  llvm::AllocaInst* slot(llvm::Type* type, const char* name = "");
  llvm::Value* contextPointer() const { return context_; }
  const ir::MemoryPlan& plan() const { return plan_; }

private:
  /// Emits a long function body as `pieces` (consecutive top-level operations), each an
  /// LLVM function of its own that the function calls in order (see run()).
  void emitPieces(const std::vector<std::vector<const ir::Operation*>>& pieces, const ir::Operation& ret);
  /// A value of an earlier piece, made again in this one: a scalar from its spill slot or
  /// the parameters, a tensor's memory from the memory plan. Null outside pieces.
  llvm::Value* recover(const ir::Value* v);
  void block(const ir::Block& block);
  void operation(const ir::Operation& op);
  void fused(const ir::Operation& op);
  void ifOp(const ir::Operation& op);
  void whileOp(const ir::Operation& op);
  void callOp(const ir::Operation& op);
  void tapeOp(const ir::Operation& op);
  void raiseOp(const ir::Operation& op);
  void returnOp(const ir::Operation& op);
  /// Binds the values a terminator hands on (`sources`) to `targets`: scalars are stored
  /// in the targets' slots, tensors copied into the targets' memory.
  void assign(const std::vector<const ir::Value*>& targets, const std::vector<const ir::Value*>& sources);
  /// Buffer pointer `i` of the function's buffers array (loaded here).
  llvm::Value* buffer(size_t i);
  /// A scalar target's stack slot (region arguments, results of if and while).
  llvm::AllocaInst* scalarSlot(const ir::Value* v);

  ModuleCodegen& m_;
  const ir::Function& f_;
  const ir::MemoryPlan& plan_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* buffers_ = nullptr;
  llvm::Value* context_ = nullptr;
  llvm::Value* arena_ = nullptr;
  size_t firstOutput_ = 0;                                     ///< buffers[] index of result 0
  std::unordered_map<const ir::Value*, size_t> outputIndex_;   ///< values with Home::Result
  std::unordered_map<const ir::Value*, llvm::Value*> values_;  ///< registers or pointers
  /// Views inside the fused region being emitted, as accesses of the region's arguments
  /// (a contraction reads its operands through them).
  std::unordered_map<const ir::Value*, Access> views_;
  std::unordered_map<const ir::Value*, llvm::AllocaInst*> slots_;
  // Pieces (emitPieces): the parameters' positions, and the scalars that cross from one
  // piece to a later one, each with its 8-byte slot in the function's spill array.
  std::unordered_map<const ir::Value*, size_t> paramIndex_;
  struct Spilled {
    size_t index;
    llvm::Type* type = nullptr; ///< set when the piece defining it stores it
  };
  std::unordered_map<const ir::Value*, Spilled> spilled_;
  llvm::Value* spill_ = nullptr; ///< the spill array, as the current function sees it
  std::vector<const ir::Value*> recovered_; ///< what recover() put in values_ in this piece
  llvm::BasicBlock* recoverAt_ = nullptr;   ///< where recover() makes values: the piece's entry
  bool inPieces_ = false;
};

/// for (i = from; i < to; ++i) body(i) at b's insertion point, left scalar (a loop with
/// loops or calls inside).
void outerLoop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to,
               const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body);
/// The kernel library's name of an arithmetic dtype ("f32", "i64"), or null if it has no
/// kernels for it.
const char* kernelTag(DType d);

/// Whether the interrupt flag behind `flag` (the context's pointer, which may be null) is
/// set, read at b's insertion point: an i1.
llvm::Value* interruptSet(llvm::IRBuilder<>& b, llvm::Value* flag);

} // namespace tsl::compiler::cpu
