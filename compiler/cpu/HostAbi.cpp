// compiler/cpu/HostAbi.cpp — the host functions JIT-compiled code calls.
#include "compiler/cpu/HostAbi.h"

#include "runtime/Layout.h"
#include "runtime/Ops.h"
#include "runtime/Structure.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace tsl::compiler::cpu {

namespace {

HostState& hostOf(tsl_context* context) { return *static_cast<HostState*>(context->host); }

/// Runs `body`, turning what it throws into a status (the error kept for the caller).
template <typename Body>
int32_t guarded(tsl_context* context, Body&& body) {
  try {
    body();
    return TSL_OK;
  } catch (const Error& e) {
    hostOf(context).error = e;
    return TSL_ERROR_KERNEL;
  } catch (const std::bad_alloc&) {
    return TSL_ERROR_MEMORY;
  }
}

TSL_CALLS_GENERATED_CODE int32_t parallelFor(tsl_context* context, int64_t n, int64_t grain, tsl_body body, void* data) {
  // The pool checks the interrupt flag before each chunk: a stop is an error it throws.
  return guarded(context, [&] {
    tsl::parallelFor(n, grain, [&](int64_t begin, int64_t end) TSL_CALLS_GENERATED_CODE { body(data, begin, end); });
  });
}

int32_t threadCountOf(tsl_context*) { return tsl::threadCount(); }

/// A tensor over a buffer of the compiled code (not owned).
Tensor over(void* data, const ir::Type& type) {
  if (type.rank() == 0) return Tensor::scalarFromBytes(type.dtype, data);
  return wrapPhysical(data, type.dtype, type.shape(), type.layout);
}

int32_t runKernel(tsl_context* context, int32_t index, void* const* inputs, void* output) {
  HostState& host = hostOf(context);
  const KernelSite& site = host.program->kernels.at(static_cast<size_t>(index));
  const int32_t status = guarded(context, [&] {
    std::vector<Tensor> in;
    for (size_t i = 0; i < site.inputs.size(); ++i) in.push_back(over(inputs[i], site.inputs[i]));
    // A kernel that writes into the buffer itself (a collective) saves copying the result,
    // unless the memory plan gave the result its operand's buffer.
    if (site.output.rank() > 0 && site.output.layout == Layout::RowMajor &&
        std::none_of(inputs, inputs + site.inputs.size(), [&](void* p) { return p == output; })) {
      Tensor out = over(output, site.output);
      if (runOpInto(site.kind, site.attrs, in, out)) return;
    }
    const Tensor result = runOp(site.kind, site.attrs, in);
    if (site.output.rank() == 0) {
      std::memcpy(output, result.data(), dtypeSize(site.output.dtype));
      return;
    }
    if (site.output.layout != Layout::RowMajor) { // the buffer holds the layout's dense memory
      const Tensor laid = denseInLayout(result, site.output.layout);
      std::memcpy(output, laid.physicalData(), static_cast<size_t>(site.output.bytes()));
      return;
    }
    Tensor out = over(output, site.output);
    copyInto(result, out);
  });
  if (status == TSL_ERROR_KERNEL) host.error->setSpanIfUnknown(site.span);
  return status;
}

int32_t tapeNew(tsl_context* context, int64_t* tape) {
  return guarded(context, [&] {
    HostState& host = hostOf(context);
    host.tapes.emplace_back();
    *tape = static_cast<int64_t>(host.tapes.size() - 1);
  });
}

int32_t tapePush(tsl_context* context, int64_t tape, int32_t count, void* const* data, const int64_t* bytes) {
  return guarded(context, [&] {
    auto& stack = hostOf(context).tapes.at(static_cast<size_t>(tape));
    std::vector<char> tuple;
    for (int32_t i = 0; i < count; ++i)
      tuple.insert(tuple.end(), static_cast<const char*>(data[i]), static_cast<const char*>(data[i]) + bytes[i]);
    stack.push_back(std::move(tuple));
  });
}

int32_t tapePop(tsl_context* context, int64_t tape, int32_t count, void* const* data, const int64_t* bytes) {
  return guarded(context, [&] {
    auto& stack = hostOf(context).tapes.at(static_cast<size_t>(tape));
    TSL_ASSERT(!stack.empty(), "cpu: tape_pop of an empty tape");
    const std::vector<char>& tuple = stack.back();
    size_t at = 0;
    for (int32_t i = 0; i < count; ++i) {
      TSL_ASSERT(at + static_cast<size_t>(bytes[i]) <= tuple.size(), "cpu: tape_pop of a smaller tuple");
      std::memcpy(data[i], tuple.data() + at, static_cast<size_t>(bytes[i]));
      at += static_cast<size_t>(bytes[i]);
    }
    stack.pop_back();
  });
}

} // namespace

const std::vector<std::pair<const char*, void*>>& hostSymbols() {
  static const std::vector<std::pair<const char*, void*>> symbols = {
      {"tsl_parallel_for", reinterpret_cast<void*>(&parallelFor)},
      {"tsl_thread_count", reinterpret_cast<void*>(&threadCountOf)},
      {"tsl_run_kernel", reinterpret_cast<void*>(&runKernel)},
      {"tsl_tape_new", reinterpret_cast<void*>(&tapeNew)},
      {"tsl_tape_push", reinterpret_cast<void*>(&tapePush)},
      {"tsl_tape_pop", reinterpret_cast<void*>(&tapePop)},
  };
  return symbols;
}

std::string checkMessage(const CheckSite& site, const int64_t* detail) {
  if (site.literal) return site.message;
  std::string out;
  for (size_t i = 0; i < site.message.size(); ++i) {
    if (site.message.compare(i, 3, "{0}") == 0 || site.message.compare(i, 3, "{1}") == 0) {
      out += std::to_string(detail[site.message[i + 1] - '0']);
      i += 2;
    } else {
      out += site.message[i];
    }
  }
  return out;
}

void raiseStatus(int32_t status, const tsl_context& context, HostState& host, const Program& program) {
  switch (status) {
  case TSL_ERROR_CHECK: {
    const CheckSite& site = program.checks.at(static_cast<size_t>(context.site));
    throw Error(site.kind, checkMessage(site, context.detail), site.span);
  }
  case TSL_ERROR_INTERRUPTED: fail(ErrorKind::Runtime, "interrupted");
  case TSL_ERROR_KERNEL:
    if (host.error) throw *host.error;
    fail(ErrorKind::Internal, "cpu: a kernel failed without an error");
  case TSL_ERROR_MEMORY: throw std::bad_alloc();
  default: fail(ErrorKind::Internal, "cpu: compiled code returned status ", status);
  }
}

} // namespace tsl::compiler::cpu
