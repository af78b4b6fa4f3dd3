// compiler/cpu/KernelLibrary.cpp — the embedded kernel bitcode, declared and linked per module.
#include "compiler/cpu/FunctionCodegen.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>


namespace tsl::compiler::cpu {

// The bitcode, embedded at build time (compiler/CMakeLists.txt).
extern const unsigned char kKernelBitcode[];
extern const size_t kKernelBitcode_size;

KernelLibrary::KernelLibrary(llvm::Module& out, bool linkKernels) : out_(out), linkKernels_(linkKernels) {
  const llvm::StringRef bytes(reinterpret_cast<const char*>(kKernelBitcode), kKernelBitcode_size);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(bytes, "tsl-kernels", false);
  // Lazily: function bodies are read only for what the module ends up linking.
  auto lazy = llvm::getOwningLazyBitcodeModule(std::move(buffer), out.getContext());
  if (!lazy) {
    std::string message = llvm::toString(lazy.takeError());
    fail(ErrorKind::Internal, "cpu: cannot read the kernel library: ", message);
  }
  library_ = std::move(*lazy);
  // The module takes the library's layout until the target machine gives its own, so
  // that linking the two does not warn of a mismatch.
  if (out.getDataLayoutStr().empty()) out.setDataLayout(library_->getDataLayout());
  if (out.getTargetTriple().empty()) out.setTargetTriple(library_->getTargetTriple());
}

KernelLibrary::~KernelLibrary() = default;

llvm::Function* KernelLibrary::get(const std::string& name) {
  if (llvm::Function* declared = out_.getFunction(name)) return declared;
  TSL_ASSERT(library_, "cpu: the kernel library is already linked");
  llvm::Function* def = library_->getFunction(name);
  TSL_ASSERT(def, "cpu: the kernel library has no function ", name);
  llvm::Function* decl = llvm::Function::Create(def->getFunctionType(), llvm::Function::ExternalLinkage, name, out_);
  decl->setAttributes(def->getAttributes());
  return decl;
}

bool KernelLibrary::scalarMath(const llvm::Function& f) {
  const std::string name = f.getName().str();
  if (auto known = scalarMath_.find(name); known != scalarMath_.end()) return known->second;
  if (!library_) return false;
  llvm::Function* def = library_->getFunction(name);
  if (!def) return false;
  scalarMath_[name] = false; // while it is looked at (recursion)
  if (llvm::Error e = def->materialize()) {
    llvm::consumeError(std::move(e));
    return false;
  }
  bool found = false;
  for (const llvm::BasicBlock& block : *def)
    for (const llvm::Instruction& instruction : block) {
      const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
      const llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
      if (!callee || found) continue;
      switch (callee->getIntrinsicID()) {
      case llvm::Intrinsic::not_intrinsic:
        found = callee->isDeclaration() || scalarMath(*callee); // a libm call, or library code that makes one
        break;
      case llvm::Intrinsic::sin: case llvm::Intrinsic::cos: case llvm::Intrinsic::tan: case llvm::Intrinsic::pow:
      case llvm::Intrinsic::powi: case llvm::Intrinsic::exp: case llvm::Intrinsic::exp2: case llvm::Intrinsic::exp10:
      case llvm::Intrinsic::log: case llvm::Intrinsic::log2: case llvm::Intrinsic::log10: case llvm::Intrinsic::asin:
      case llvm::Intrinsic::acos: case llvm::Intrinsic::atan: case llvm::Intrinsic::sinh:
      case llvm::Intrinsic::cosh: case llvm::Intrinsic::tanh:
        found = true;
        break;
      default: break; // sqrt, fabs, fma, rounding, min and max: vector instructions
      }
    }
  return scalarMath_[name] = found;
}

void KernelLibrary::link() {
  TSL_ASSERT(library_, "cpu: the kernel library is linked twice");
  // Kernels the process has compiled already stay declarations (the JIT resolves them).
  if (!linkKernels_)
    for (llvm::Function& f : *library_)
      if (f.getName().starts_with("tsl_k_") && !f.isDeclaration()) f.deleteBody();
  if (llvm::Linker::linkModules(out_, std::move(library_), llvm::Linker::LinkOnlyNeeded))
    fail(ErrorKind::Internal, "cpu: linking the kernel library failed");
  // Everything from the library is private to the module and meant to be inlined away.
  for (llvm::Function& f : out_) {
    if (f.isDeclaration() || f.hasFnAttribute("tsl-generated")) continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    if (f.getName().starts_with("tsl_k_")) f.addFnAttr(llvm::Attribute::NoInline); // one copy per module
    else f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

} // namespace tsl::compiler::cpu
