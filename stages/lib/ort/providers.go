package ort

import (
	"errors"
	"fmt"

	onnx "github.com/yalue/onnxruntime_go"
)

// cpuProvider is onnxruntime's default execution provider, always usable.
const cpuProvider = "CPUExecutionProvider"

// BuiltProviders returns the execution providers compiled into the loaded
// library, in onnxruntime's order of preference, whether or not this
// machine can use them. The onnxruntime-node build that make setup installs
// lists TensorrtExecutionProvider, CUDAExecutionProvider and
// WebGpuExecutionProvider besides CPUExecutionProvider, although it ships
// none of the provider libraries CUDA and TensorRT load, so this list alone
// says nothing about GPUs; see Providers.
func BuiltProviders() ([]string, error) {
	mu.Lock()
	defer mu.Unlock()
	if loaded == nil {
		return nil, errNotLoaded("providers")
	}
	p, err := loaded.h.providers()
	if err != nil {
		return nil, fmt.Errorf("ort: providers of %s: %w", loaded.path, err)
	}
	return p, nil
}

// Providers returns the execution providers that can be attached to a
// session on this machine: those of BuiltProviders that ProbeProvider
// accepts, in the same order. With make setup's library it is
// [CPUExecutionProvider], which is how the profile knows that no GPU
// numbers can be measured.
func Providers() ([]string, error) {
	built, err := BuiltProviders()
	if err != nil {
		return nil, err
	}
	var usable []string
	for _, p := range built {
		if ProbeProvider(p) == nil {
			usable = append(usable, p)
		}
	}
	return usable, nil
}

// ProbeProvider returns nil if the execution provider called name can be
// attached to a session on this machine, and otherwise why not. CPU always
// can. CUDA and TensorRT are attached to throwaway session options, which is
// where onnxruntime loads their provider libraries and fails without them.
// Every other provider is reported as not probed (see the package doc for
// why WebGPU is not tried). Answers are kept for the life of the process.
//
// onnxruntime logs each refusal at error level; the probe raises the log
// level to fatal meanwhile so that a profile run does not print them.
func ProbeProvider(name string) error {
	mu.Lock()
	defer mu.Unlock()
	if loaded == nil {
		return errNotLoaded("probe provider " + name)
	}
	if err, ok := loaded.probes[name]; ok {
		return err
	}
	err := probe(name)
	if err != nil {
		err = fmt.Errorf("ort: provider %s: %w", name, err)
	}
	if loaded.probes == nil {
		loaded.probes = map[string]error{}
	}
	loaded.probes[name] = err
	return err
}

// probe tries to attach provider name to fresh session options.
func probe(name string) error {
	if name == cpuProvider {
		return nil
	}
	so, err := onnx.NewSessionOptions()
	if err != nil {
		return err
	}
	defer so.Destroy()
	if err := onnx.SetEnvironmentLogLevel(onnx.LoggingLevelFatal); err != nil {
		return err
	}
	// Error is the level onnxruntime_go creates the environment with.
	defer onnx.SetEnvironmentLogLevel(onnx.LoggingLevelError)
	switch name {
	case "CUDAExecutionProvider":
		o, err := onnx.NewCUDAProviderOptions()
		if err != nil {
			return err
		}
		defer o.Destroy()
		return so.AppendExecutionProviderCUDA(o)
	case "TensorrtExecutionProvider":
		o, err := onnx.NewTensorRTProviderOptions()
		if err != nil {
			return err
		}
		defer o.Destroy()
		return so.AppendExecutionProviderTensorRT(o)
	}
	// Attaching other providers initialises them, not just their library:
	// WebGPU starts Dawn, which looks for a GPU adapter and leaves state
	// behind that deadlocks onnxruntime's exit handlers in a process that
	// exits through C exit (a go test -race binary hangs after PASS).
	return errors.New("not probed: mlsched sessions attach only CPU or CUDA, and CUDA and TensorRT are the only providers it can check without initialising them")
}
