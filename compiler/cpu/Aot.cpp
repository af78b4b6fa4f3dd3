// compiler/cpu/Aot.cpp — LLVM IR, assembly, objects, shared libraries, C headers.
#include "compiler/cpu/Aot.h"

#include "compiler/cpu/Codegen.h"
#include "compiler/cpu/Target.h"
#include "compiler/cpu/abi/tsl_abi.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tsl::compiler::cpu {

// The static runtime archive (compiler/cpu/abi/tsl_aot_runtime.c), embedded at build time.
extern const unsigned char kAotRuntime[];
extern const size_t kAotRuntime_size;

namespace {

const char* cType(DType dtype) {
  switch (dtype) {
  case DType::Bool: return "uint8_t";
  case DType::I32: return "int32_t";
  case DType::I64: return "int64_t";
  case DType::F16:
  case DType::BF16: return "uint16_t";
  case DType::F32: return "float";
  case DType::F64: return "double";
  }
  return "void";
}

/// The C names of the entry's parameters: their IR names where those are identifiers.
std::vector<std::string> parameterNames(const ir::Function& entry) {
  std::vector<std::string> names;
  for (const auto& arg : entry.body().arguments()) {
    std::string n = cName(arg->name());
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0])) ||
        std::find(names.begin(), names.end(), n) != names.end() || n.starts_with("result"))
      n = cat("arg", names.size());
    names.push_back(n);
  }
  return names;
}

/// "model.tsl:3:7: value error: " before a check's message.
std::string where(const CheckSite& site) {
  const std::string kind = cat(errorKindName(site.kind), " error: ");
  if (!site.span.known()) return kind;
  return cat(site.span.fileName(), ":", site.span.line, ":", site.span.col, ": ", kind);
}

/// The C entry: buffers in, status out, the arena and the error message around the call
/// of the generated function `impl`; and the entry's _error function.
void addEntry(llvm::Module& out, const ir::Function& entry, const Program& program, const std::string& name) {
  llvm::LLVMContext& c = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Function* impl = out.getFunction(program.entry);
  impl->setLinkage(llvm::GlobalValue::InternalLinkage);
  const size_t buffers = entry.body().arguments().size() + entry.resultTypes().size();
  auto* type = llvm::FunctionType::get(i32, std::vector<llvm::Type*>(buffers, ptr), false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, out);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  auto declare = [&](const char* host, llvm::Type* result, std::vector<llvm::Type*> params) {
    llvm::Function* f = llvm::Function::Create(llvm::FunctionType::get(result, params, false),
                                               llvm::Function::ExternalLinkage, host, out);
    f->setVisibility(llvm::GlobalValue::HiddenVisibility);
    return f;
  };
  llvm::Function* alloc = declare("tsl_aot_alloc", ptr, {i64});
  llvm::Function* release = declare("tsl_aot_release", llvm::Type::getVoidTy(c), {ptr, ptr});
  llvm::Function* report = declare("tsl_aot_report", llvm::Type::getVoidTy(c), {i32, ptr, ptr, i32});
  llvm::Function* lastError = declare("tsl_aot_last_error", ptr, {});
  llvm::Function* checkBuffers = declare("tsl_aot_check_buffers", i32, {ptr, ptr, ptr, ptr, i32, i32});

  // Each check's message: 'T' and a template, or 'L' and literal text.
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
  std::vector<llvm::Constant*> texts;
  for (const CheckSite& site : program.checks)
    texts.push_back(b.CreateGlobalStringPtr(cat(site.literal ? "L" : "T", where(site), site.message), "tsl.check", 0, &out));
  auto* table = llvm::ArrayType::get(ptr, texts.size());
  auto* sites = new llvm::GlobalVariable(out, table, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(table, texts), "tsl.checks");
  llvm::Value* count = b.getInt32(static_cast<uint32_t>(texts.size()));

  llvm::StructType* contextType = llvm::StructType::get(c, {ptr, i32, i32, llvm::ArrayType::get(i64, 2), ptr});
  llvm::AllocaInst* context = b.CreateAlloca(contextType);
  b.CreateStore(llvm::Constant::getNullValue(contextType), context);
  // The buffers, then the arena, as the generated function takes them. The caller's
  // buffers are checked first (none NULL, no result overlapping another buffer), before
  // anything is allocated.
  auto* arrayType = llvm::ArrayType::get(ptr, buffers + 1);
  llvm::AllocaInst* array = b.CreateAlloca(arrayType);
  for (size_t i = 0; i < buffers; ++i)
    b.CreateStore(fn->getArg(static_cast<unsigned>(i)), b.CreateConstInBoundsGEP2_32(arrayType, array, 0, static_cast<unsigned>(i)));
  {
    std::vector<std::string> names = parameterNames(entry);
    std::vector<llvm::Constant*> sizes, nameTexts;
    for (const auto& arg : entry.body().arguments()) sizes.push_back(b.getInt64(static_cast<uint64_t>(arg->type().bytes())));
    for (size_t r = 0; r < entry.resultTypes().size(); ++r) {
      names.push_back(cat("result", r));
      sizes.push_back(b.getInt64(static_cast<uint64_t>(entry.resultTypes()[r].bytes())));
    }
    for (const std::string& n : names) nameTexts.push_back(b.CreateGlobalStringPtr(n, "tsl.buffer", 0, &out));
    auto global = [&](llvm::Type* element, std::vector<llvm::Constant*> items, const char* label) {
      auto* type = llvm::ArrayType::get(element, items.size());
      return new llvm::GlobalVariable(out, type, true, llvm::GlobalValue::PrivateLinkage,
                                      llvm::ConstantArray::get(type, items), label);
    };
    llvm::Value* checked = b.CreateCall(
        checkBuffers, {b.CreateGlobalStringPtr(entry.name(), "tsl.function", 0, &out), array,
                       global(i64, std::move(sizes), "tsl.buffer.bytes"), global(ptr, std::move(nameTexts), "tsl.buffer.names"),
                       b.getInt32(static_cast<uint32_t>(entry.body().arguments().size())),
                       b.getInt32(static_cast<uint32_t>(buffers))});
    llvm::BasicBlock* refused = llvm::BasicBlock::Create(c, "bad.buffers", fn);
    llvm::BasicBlock* accepted = llvm::BasicBlock::Create(c, "buffers.ok", fn);
    b.CreateCondBr(b.CreateICmpNE(checked, b.getInt32(TSL_OK)), refused, accepted);
    b.SetInsertPoint(refused);
    b.CreateRet(checked); // the message is recorded
    b.SetInsertPoint(accepted);
  }
  llvm::Value* arena = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c));
  if (program.frameBytes > 0) {
    arena = b.CreateCall(alloc, {b.getInt64(static_cast<uint64_t>(program.frameBytes))});
    llvm::BasicBlock* noMemory = llvm::BasicBlock::Create(c, "no.memory", fn);
    llvm::BasicBlock* go = llvm::BasicBlock::Create(c, "call", fn);
    b.CreateCondBr(b.CreateIsNull(arena), noMemory, go);
    b.SetInsertPoint(noMemory);
    b.CreateCall(report, {b.getInt32(TSL_ERROR_MEMORY), context, sites, count});
    b.CreateRet(b.getInt32(TSL_ERROR_MEMORY));
    b.SetInsertPoint(go);
  }
  b.CreateStore(arena, b.CreateConstInBoundsGEP2_32(arrayType, array, 0, static_cast<unsigned>(buffers)));
  llvm::Value* status = b.CreateCall(impl, {array, context});
  b.CreateCall(release, {context, arena});
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(c, "failed", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c, "done", fn);
  b.CreateCondBr(b.CreateICmpNE(status, b.getInt32(0)), failed, done);
  b.SetInsertPoint(failed);
  b.CreateCall(report, {status, context, sites, count});
  b.CreateRet(status);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));

  llvm::Function* error = llvm::Function::Create(llvm::FunctionType::get(ptr, false), llvm::Function::ExternalLinkage,
                                                 name + "_error", out);
  llvm::IRBuilder<> eb(llvm::BasicBlock::Create(c, "entry", error));
  eb.CreateRet(eb.CreateCall(lastError));
}

std::string header(const ir::Function& entry, const std::string& name) {
  const std::vector<std::string> names = parameterNames(entry);
  const std::vector<ir::Type> results = entry.resultTypes();
  std::string guard = "TSL_" + name + "_H";
  for (char& ch : guard) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::string signature = cat(entry.name(), "(");
  std::string params;
  for (size_t i = 0; i < names.size(); ++i) {
    const ir::Type& t = entry.body().argument(i)->type();
    signature += cat(i ? ", " : "", names[i], ": ", t.str());
    params += cat(i ? ", " : "", "const ", cType(t.dtype), "* ", names[i]);
  }
  signature += ") -> (";
  for (size_t r = 0; r < results.size(); ++r) {
    signature += cat(r ? ", " : "", results[r].str());
    params += cat(params.empty() ? "" : ", ", cType(results[r].dtype), "* result", r);
  }
  signature += ")";
  std::ostringstream out;
  out << "/* " << name << ".h — generated by `tsl compile --emit=header`; do not edit.\n"
      << " *\n"
      << " * " << signature << "\n"
      << " *\n"
      << " * Every buffer is row-major and contiguous, of the shape above (a scalar is a pointer\n"
      << " * to one element; bool is one byte, f16 and bf16 their 16 bits). The caller owns them\n"
      << " * all: inputs are only read, results are written whole. No pointer may be NULL\n"
      << " * (but one to zero elements), and a result must not overlap an input or another\n"
      << " * result: results may be written before every input is read. Inputs may overlap each\n"
      << " * other. " << name << " returns 0, or nonzero if it refused its buffers (NULL, or\n"
      << " * overlapping: 5, before anything runs) or the program failed (an index out of range,\n"
      << " * an assert, out of memory); " << name << "_error() then describes the failure as TSL\n"
      << " * reports it, with the source position, until the next failure in the same thread.\n"
      << " * Calls may run concurrently. */\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "int32_t " << name << "(" << params << ");\n"
      << "const char* " << name << "_error(void);\n\n"
      << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out.str();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) fail(ErrorKind::Io, "cannot write ", path);
}

/// Links the object into a shared library with the system's C compiler ($CC, else cc).
std::string linkLibrary(const std::string& object, const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = cat(tmp && *tmp ? tmp : "/tmp", "/tsl-link-XXXXXX");
  if (!mkdtemp(pattern.data())) fail(ErrorKind::Io, "cannot make a temporary directory: ", std::strerror(errno));
  const std::string dir = pattern;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};
  writeFile(dir + "/entry.o", object.data(), object.size());
  writeFile(dir + "/libtsl_aot_runtime.a", kAotRuntime, kAotRuntime_size);
  const std::string exports = cat("{ global: ", name, "; ", name, "_error; local: *; };\n");
  writeFile(dir + "/exports.map", exports.data(), exports.size());
  const char* cc = std::getenv("CC");
  std::vector<std::string> args = {cc && *cc ? cc : "cc", "-shared", "-o", dir + "/lib.so", dir + "/entry.o",
                                   dir + "/libtsl_aot_runtime.a", "-lm", "-lpthread",
                                   "-Wl,--version-script=" + dir + "/exports.map", "-Wl,--no-undefined",
                                   "-Wl,-z,noexecstack"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = dir + "/link.log";
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    fail(ErrorKind::Io, "cannot run the C compiler '", args[0], "' to link the library: ", std::strerror(spawned),
         " (install gcc, or name a compiler in $CC)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail(ErrorKind::Io, "linking the library with '", args[0], "' failed:\n", readFile(log));
  return readFile(dir + "/lib.so");
}

} // namespace

std::string cName(std::string_view name) {
  std::string out;
  for (char ch : name) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

std::string emitArtifact(const ir::Module& module, const ir::Function& entry, Artifact artifact,
                         const CompileOptions& options) {
  const std::string name = cName(entry.name());
  if (artifact == Artifact::Header) return header(entry, name);
  const bool aot = options.aot || artifact == Artifact::Object || artifact == Artifact::Library;
  const CpuTarget target = options.cpu == "native" ? CpuTarget::host()
                           : !options.cpu.empty()  ? CpuTarget::named(options.cpu)
                           : aot                   ? CpuTarget::named("x86-64-v3")
                                                   : CpuTarget::host();
  auto machine = makeTargetMachine(target, options.optLevel, aot);
  llvm::LLVMContext context;
  llvm::Module out("tsl", context);
  CodegenOptions codegen;
  codegen.symbol = aot ? name + ".impl" : cat("tsl.", entry.name());
  codegen.aot = aot;
  codegen.cpuFeatures = machine->getTargetFeatureString().str();
  const Program program = generate(module, entry, out, codegen);
  if (aot) addEntry(out, entry, program, name);
  prepareModule(out, *machine);
  optimizeModule(out, *machine, options.optLevel, hasHugeBlock(out));
  if (hasHugeBlock(out) && options.optLevel > 0) machine = makeTargetMachine(target, 0, aot);
  switch (artifact) {
  case Artifact::Llvm: return llvmText(out);
  case Artifact::Asm: return emitCode(out, *machine, false);
  case Artifact::Object: return emitCode(out, *machine, true);
  case Artifact::Library: return linkLibrary(emitCode(out, *machine, true), name);
  case Artifact::Header: break;
  }
  return {};
}

} // namespace tsl::compiler::cpu
