// Package ort loads onnxruntime and runs ONNX models on it for timing: the
// profile stage measures models with it, and the learned policy is served by
// it. It wraps github.com/yalue/onnxruntime_go v1.27.0, which binds the
// onnxruntime shared library at run time with dlopen, so the library is a
// file this package has to find, check and load before anything runs.
//
// # Finding the library
//
// Locate picks the library path from, in order:
//
//  1. the --ort-lib flag,
//  2. the ONNXRUNTIME_LIB environment variable,
//  3. profile.ort_lib in the pipeline configuration,
//  4. .tools/onnxruntime/libonnxruntime.so.1, which make setup fills, in the
//     config file's directory or the checkout that holds the executable.
//
// The order goes from the narrowest, most deliberate choice to the broadest
// default: a flag is typed for one run, a variable is set for a shell, the
// config is shared by everyone who runs that pipeline, and the setup folder
// is what a fresh checkout gets. An explicit setting is never skipped because
// its file is missing; that would quietly measure a different runtime. The
// path and the Source it came from travel together, so every load error says
// which setting to fix as well as to run make setup.
//
// make setup installs onnxruntime 1.24.1, the CPU build Microsoft ships in
// the npm package onnxruntime-node, after checking it against the sha256 in
// libonnxruntime.sha256 (sha256sum -c format, next to the code that depends
// on that exact file).
//
// # Loading it
//
// onnxruntime_go keeps one environment in package variables, so Init loads
// one library per process and later calls for the same file return at once.
// Handing onnxruntime_go a bad file does not fail cleanly in every case: a
// truncated library is mapped past its end and kills the process with
// SIGBUS inside dlopen, and a library of another release is either refused
// with an opaque "Error setting ORT API base: 2" (too old for C API 24) or
// accepted (newer). So Init first checks that the file is a complete ELF
// shared library for this machine, hashes it against libonnxruntime.sha256
// when it comes from the make setup folder (a byte changed in the middle
// passes every other check), opens it itself and asks OrtGetApiBase for the
// version, and refuses anything older than 1.24 or of another major
// version (see SupportedVersion); only then does it call
// onnxruntime_go. Each failure is an *Error naming the path and its Source.
//
// # Execution providers
//
// BuiltProviders asks the library which execution providers it was compiled
// with, a C API call onnxruntime_go does not wrap. For make setup's library
// that list is TensorRT, CUDA, WebGPU and CPU, although the npm package ships
// none of the provider libraries CUDA and TensorRT load. Providers therefore
// keeps only the providers that ProbeProvider can attach to a session: CPU,
// and CUDA or TensorRT where their libraries and a GPU are present. WebGPU is
// not probed, because attaching it starts Dawn, after which onnxruntime's exit
// handlers deadlock in any process that exits through C exit (a go test -race
// binary hangs after PASS). A session runs on the CPU unless
// SessionOptions.Provider asks for CUDA, which the profile does to measure
// a GPU; a GPU session binds its host input again before every Run,
// since onnxruntime copies a host input to the device when it is bound,
// not when the graph runs (without that, every run read the input as it
// was at binding).
//
// # Threads
//
// Every session states its threading rather than inheriting defaults that
// vary with the machine and the release: SessionOptions.IntraOpThreads (1 runs
// on the caller's thread alone; 0 is onnxruntime's default of one pinned
// thread per physical core), the sequential executor unless InterOpThreads
// asks for the parallel one, and the highest graph optimisation level
// (ORT_ENABLE_ALL), so that the profile times the model as a tuned
// deployment would run it.
//
// Spinning is off: session.intra_op.allow_spinning and
// session.inter_op.allow_spinning are "0" unless SessionOptions.AllowSpinning
// is set. With spinning, idle pool threads busy-wait for the next parallel
// section, burning nearly a core more for a slightly lower median
// (docs/benchmarks.md): back-to-back runs look faster because the pool
// never sleeps, while the burnt core is taken from
// whatever else shares the machine, which is exactly what the contention
// measurements are about. Sleeping threads make each run pay its own wake-up,
// as a request arriving at an idle server does.
//
// # Concurrency
//
// Init, Version and the provider functions may be called from any
// goroutine; they share one lock. Sessions are
// independent: different sessions may Run at the same time from different
// goroutines (onnxruntime's own Run is thread-safe, and each Session owns its
// input and output tensors), which is how the profile measures contention.
// One Session belongs to one goroutine at a time: its Input and Output slices
// are plain memory that Run reads and writes. A Run or Close that overlaps
// another on the same session returns an error instead of racing. There is
// no way to unload the library; the process keeps it until it exits.
package ort
