// Parse, lower and translate with MLIR 16 (see mlir_lowering.hpp).
//
// The pipeline, on each gpu.module (checked with mlir-opt-16 first):
//   convert-scf-to-cf           scf.for / scf.if to blocks and branches
//   convert-gpu-to-nvvm         gpu.* ids, barriers, workgroup memory and the
//                               kernel ABI to NVVM; memref, cf, func and arith
//                               patterns to LLVM ride along (index = i64)
//   convert-arith-to-llvm       whatever arith is left
//   canonicalize, cse           fold the descriptor arithmetic
//   reconcile-unrealized-casts  drop the casts the conversions left paired
#include "mlir_lowering.hpp"

#include "pass_instrumentation.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Conversion/ArithToLLVM/ArithToLLVM.h>
#include <mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h>
#include <mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h>
#include <mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/ControlFlow/IR/ControlFlow.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Export.h>
#include <mlir/Transforms/Passes.h>

#include <string>

namespace mlir_gpu {
namespace {

// The diagnostics of the step running on this thread (null: none is).
thread_local std::string* t_diagnostics = nullptr;

// Collects this thread's diagnostics while in scope.
class DiagnosticsCapture {
 public:
  explicit DiagnosticsCapture(std::string* sink) : previous_(t_diagnostics) {
    t_diagnostics = sink;
  }
  ~DiagnosticsCapture() { t_diagnostics = previous_; }

 private:
  std::string* previous_;
};

}  // namespace

void MlirLowering::add_pipeline(mlir::OpPassManager& pm) {
  mlir::OpPassManager& gpu = pm.nest<mlir::gpu::GPUModuleOp>();
  gpu.addPass(mlir::createConvertSCFToCFPass());
  gpu.addPass(mlir::createLowerGpuOpsToNVVMOpsPass(/*indexBitwidth=*/64));
  gpu.addPass(mlir::createArithToLLVMConversionPass());
  gpu.addPass(mlir::createCanonicalizerPass());
  gpu.addPass(mlir::createCSEPass());
  gpu.addPass(mlir::createReconcileUnrealizedCastsPass());
}

MlirLowering::MlirLowering(bool threading)
    : context_(threading ? mlir::MLIRContext::Threading::ENABLED
                         : mlir::MLIRContext::Threading::DISABLED) {
  mlir::PassManager pm(&context_, mlir::ModuleOp::getOperationName());
  add_pipeline(pm);
  mlir::DialectRegistry registry;
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  // The passes' dependent dialects too: PassManager::run appends them to the
  // context's registry unless they are there already, and appending is not
  // thread-safe.
  pm.getDependentDialects(registry);
  context_.appendDialectRegistry(registry);
  // Every dialect the kernels and the pipeline touch, loaded now: loading
  // one while compile threads use the context would race.
  context_
      .loadDialect<mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                   mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                   mlir::memref::MemRefDialect, mlir::scf::SCFDialect>();
  context_.getDiagEngine().registerHandler([](mlir::Diagnostic& d) {
    if (t_diagnostics == nullptr) return mlir::failure();  // MLIR's default: stderr
    std::string line;
    llvm::raw_string_ostream os(line);
    os << d.getLocation() << ": " << d << "\n";
    for (const mlir::Diagnostic& note : d.getNotes()) {
      os << note.getLocation() << ": note: " << note << "\n";
    }
    *t_diagnostics += os.str();
    return mlir::success();
  });
  llvm::raw_string_ostream os(pipeline_);
  pm.printAsTextualPipeline(os);
  os.flush();
}

mlir::OwningOpRef<mlir::ModuleOp> MlirLowering::parse(const std::string& source,
                                                      const std::string& name, StepError* error) {
  DiagnosticsCapture capture(&error->log);
  mlir::ParserConfig config(&context_);
  llvm::SourceMgr buffers;  // names the text in diagnostics ("axpy_u1_b256.mlir:12:7")
  buffers.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(source, name), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(buffers, config);
  if (!module) error->error = "MLIR parse of " + name + " failed";
  return module;
}

StepError MlirLowering::lower(mlir::ModuleOp module) {
  StepError error;
  DiagnosticsCapture capture(&error.log);
  mlir::PassManager pm(&context_, mlir::ModuleOp::getOperationName());
  add_pipeline(pm);
  instrument(pm);
  if (mlir::failed(pm.run(module))) error.error = "MLIR lowering pipeline failed";
  return error;
}

std::unique_ptr<llvm::Module> MlirLowering::translate(mlir::ModuleOp module,
                                                      const std::string& kernel,
                                                      llvm::LLVMContext& llvm_context,
                                                      StepError* error) {
  DiagnosticsCapture capture(&error->log);
  mlir::gpu::GPUModuleOp gpu_module = module.lookupSymbol<mlir::gpu::GPUModuleOp>(kernel);
  if (!gpu_module) {
    error->error = "no gpu.module @" + kernel + " in the lowered module";
    return nullptr;
  }
  std::unique_ptr<llvm::Module> out =
      mlir::translateModuleToLLVMIR(gpu_module, llvm_context, kernel);
  if (!out) error->error = "translation of gpu.module @" + kernel + " to LLVM IR failed";
  return out;
}

}  // namespace mlir_gpu
