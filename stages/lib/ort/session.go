package ort

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"

	onnx "github.com/yalue/onnxruntime_go"
)

// The execution providers a session can run on.
const (
	// CPU is onnxruntime's default provider, always usable.
	CPU = cpuProvider
	// CUDA runs the graph on an NVIDIA GPU through cuDNN and cuBLAS. It
	// needs onnxruntime's libonnxruntime_providers_cuda.so beside the
	// library, a CUDA runtime the provider was built for, and a GPU;
	// ProbeProvider says whether this machine has them.
	CUDA = "CUDAExecutionProvider"
)

// SessionOptions sets how a session uses the machine.
type SessionOptions struct {
	// Provider is the execution provider the graph runs on: CPU (also
	// when empty) or CUDA. onnxruntime places the nodes a GPU provider
	// has no kernel for on the CPU, as a deployment would; inputs and
	// outputs stay in host memory, so a CUDA Run's time includes copying
	// them to the GPU and back.
	Provider string
	// Device is the GPU's ordinal for a GPU provider (CUDA's device_id).
	Device int
	// IntraOpThreads is how many threads one operator may use, the calling
	// goroutine's thread included: 1 runs everything on the caller's thread
	// and creates no thread pool. 0 leaves it to onnxruntime, which uses one
	// thread per physical core and pins them to cores; a measurement should
	// say how many it wants instead.
	IntraOpThreads int
	// InterOpThreads above 1 runs independent branches of the graph at once
	// (onnxruntime's parallel executor) on that many threads. 0 and 1 run
	// the graph's nodes one after the other, which is all a chain of layers
	// can use; the inter-op pool is not even created.
	InterOpThreads int
	// AllowSpinning lets idle pool threads busy-wait for the next piece of
	// work instead of sleeping. Off by default; see the package doc.
	AllowSpinning bool
	// Unoptimized runs the graph as the file writes it, node for node
	// (ORT_DISABLE_ALL), where the default optimises it at onnxruntime's
	// highest level: a per-node profile of such a session names every
	// node of the file, at the price of timing kernels a deployment
	// would have fused.
	Unoptimized bool
	// ProfilePrefix, when set, turns on onnxruntime's own profiling: each
	// run's kernels are timed and Close writes them as a Chrome trace to
	// a file whose name starts with ProfilePrefix (see ReadTrace).
	ProfilePrefix string
}

// Session runs one model with preallocated float32 input and output tensors
// of fixed shapes, so that a timed Run does no allocation in Go. One
// onnxruntime session serves every shape it is bound to (Bind): a series of
// batch sizes shares the graph's optimisation and weights instead of
// building them once per size. A Session and its Bindings are used by one
// goroutine at a time; different sessions may run at once.
type Session struct {
	sess          *onnx.DynamicAdvancedSession
	input, output string
	// rebind is set for a GPU provider, which copies a host input to the
	// device when the input is bound rather than when the graph runs:
	// Run binds it again, so that each run reads what Input holds then.
	rebind   bool
	first    *Binding // NewSession's shapes, which Input, Output and Run use
	bindings []*Binding
	// busy is set while a Run, Bind or Close is in progress, so that a
	// second goroutine using the session gets an error rather than a data
	// race on the tensors or a use after free.
	busy   atomic.Bool
	closed bool // guarded by busy
}

// Binding is one pair of input and output shapes of a Session: its own
// tensors, bound to the session once.
type Binding struct {
	s       *Session
	io      *onnx.IoBinding
	in, out *onnx.Tensor[float32]
	desc    string // "x [4 10] -> y [4 1]", for errors
}

// NewSession prepares model (ONNX bytes) to run with one float32 input
// tensor named input of shape inShape and one float32 output named output
// of shape outShape (Bind adds other shapes). The graph is optimised at
// onnxruntime's highest level (ORT_ENABLE_ALL: constant folding, node
// fusions and layout changes), because the profile should time the model as
// a tuned deployment would run it. Init must have succeeded. A shape the
// model does not accept is reported by the first Run, in onnxruntime's
// words.
func NewSession(model []byte, input string, inShape []int64, output string, outShape []int64, opts SessionOptions) (*Session, error) {
	desc := describe(input, inShape, output, outShape)
	fail := func(err error) (*Session, error) { return nil, fmt.Errorf("ort: new session (%s): %w", desc, err) }
	if Version() == "" {
		return nil, errNotLoaded("new session")
	}
	switch {
	case len(model) == 0:
		return fail(errors.New("empty model"))
	case input == "" || output == "":
		return fail(errors.New("empty input or output name"))
	case opts.IntraOpThreads < 0 || opts.InterOpThreads < 0:
		return fail(fmt.Errorf("negative thread count (intra-op %d, inter-op %d)", opts.IntraOpThreads, opts.InterOpThreads))
	case opts.Device < 0:
		return fail(fmt.Errorf("negative device %d", opts.Device))
	}
	if err := checkShapes(inShape, outShape); err != nil {
		return fail(err)
	}
	so, err := sessionOptions(opts)
	if err != nil {
		return fail(err)
	}
	defer so.Destroy()
	s := &Session{input: input, output: output, rebind: opts.Provider != "" && opts.Provider != CPU}
	if s.sess, err = onnx.NewDynamicAdvancedSessionWithONNXData(model, []string{input}, []string{output}, so); err != nil {
		return fail(err)
	}
	if s.first, err = s.bind(inShape, outShape); err != nil {
		s.sess.Destroy()
		return fail(err)
	}
	return s, nil
}

func describe(input string, inShape []int64, output string, outShape []int64) string {
	return fmt.Sprintf("%s %v -> %s %v", input, inShape, output, outShape)
}

// checkShapes refuses an empty shape or a dimension below 1: onnxruntime_go
// accepts a zero dimension (an empty tensor), which times nothing and
// leaves Input empty; a timing session needs data.
func checkShapes(shapes ...[]int64) error {
	for _, shape := range shapes {
		if len(shape) == 0 || slices.ContainsFunc(shape, func(d int64) bool { return d < 1 }) {
			return fmt.Errorf("shape %v: want at least one dimension, each at least 1", shape)
		}
	}
	return nil
}

// Bind prepares the session to run at another pair of shapes, with tensors
// of their own: a batch size of the same model, say.
func (s *Session) Bind(inShape, outShape []int64) (*Binding, error) {
	desc := describe(s.input, inShape, s.output, outShape)
	if !s.busy.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("ort: bind (%s): %w", desc, errBusy)
	}
	defer s.busy.Store(false)
	if s.closed {
		return nil, fmt.Errorf("ort: bind (%s): session is closed", desc)
	}
	if err := checkShapes(inShape, outShape); err != nil {
		return nil, fmt.Errorf("ort: bind (%s): %w", desc, err)
	}
	b, err := s.bind(inShape, outShape)
	if err != nil {
		return nil, fmt.Errorf("ort: bind (%s): %w", desc, err)
	}
	return b, nil
}

// bind makes a Binding of the shapes and keeps it for Close.
func (s *Session) bind(inShape, outShape []int64) (*Binding, error) {
	b := &Binding{s: s, desc: describe(s.input, inShape, s.output, outShape)}
	var err error
	if b.in, err = onnx.NewEmptyTensor[float32](onnx.NewShape(inShape...)); err != nil {
		return nil, fmt.Errorf("input tensor: %w", err)
	}
	if b.out, err = onnx.NewEmptyTensor[float32](onnx.NewShape(outShape...)); err != nil {
		b.in.Destroy()
		return nil, fmt.Errorf("output tensor: %w", err)
	}
	if b.io, err = s.sess.CreateIoBinding(); err != nil {
		b.destroy()
		return nil, fmt.Errorf("io binding: %w", err)
	}
	if err = b.io.BindInput(s.input, b.in); err == nil {
		err = b.io.BindOutput(s.output, b.out)
	}
	if err != nil {
		b.destroy()
		return nil, fmt.Errorf("io binding: %w", err)
	}
	s.bindings = append(s.bindings, b)
	return b, nil
}

// destroy frees the binding's onnxruntime objects.
func (b *Binding) destroy() error {
	var errs []error
	if b.io != nil {
		errs = append(errs, b.io.Destroy())
	}
	for _, t := range []*onnx.Tensor[float32]{b.in, b.out} {
		if t != nil {
			errs = append(errs, t.Destroy())
		}
	}
	b.io, b.in, b.out = nil, nil, nil
	return errors.Join(errs...)
}

// Session config keys, from onnxruntime_session_options_config_keys.h.
const (
	keyIntraOpSpinning = "session.intra_op.allow_spinning"
	keyInterOpSpinning = "session.inter_op.allow_spinning"
)

// sessionOptions turns opts into onnxruntime session options; every setting
// the timing depends on is set explicitly rather than left to a default
// that could change between releases.
func sessionOptions(opts SessionOptions) (*onnx.SessionOptions, error) {
	so, err := onnx.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	spin := "0"
	if opts.AllowSpinning {
		spin = "1"
	}
	mode := onnx.ExecutionMode(onnx.ExecutionModeSequential)
	if opts.InterOpThreads > 1 {
		mode = onnx.ExecutionModeParallel
	}
	level := onnx.GraphOptimizationLevel(onnx.GraphOptimizationLevelEnableAll)
	if opts.Unoptimized {
		level = onnx.GraphOptimizationLevelDisableAll
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"optimization level", func() error { return so.SetGraphOptimizationLevel(level) }},
		{"execution mode", func() error { return so.SetExecutionMode(mode) }},
		{"intra-op threads", func() error { return so.SetIntraOpNumThreads(opts.IntraOpThreads) }},
		{"inter-op threads", func() error { return so.SetInterOpNumThreads(opts.InterOpThreads) }},
		{keyIntraOpSpinning, func() error { return so.AddSessionConfigEntry(keyIntraOpSpinning, spin) }},
		{keyInterOpSpinning, func() error { return so.AddSessionConfigEntry(keyInterOpSpinning, spin) }},
	}
	if opts.ProfilePrefix != "" {
		steps = append(steps, struct {
			what string
			do   func() error
		}{"profiling", func() error { return so.EnableProfiling(opts.ProfilePrefix) }})
	}
	switch opts.Provider {
	case "", CPU:
		// No memory pattern: with one, each input shape's first runs lay
		// its intermediate tensors out in one block of the session's
		// arena, and a session that serves many batch sizes, as a lane
		// does, fragments the arena until a shape it ran before no longer
		// fits and the arena grows into new memory, faulting pages in
		// within a batch; without the pattern a run takes the same time
		// (docs/fidelity.md, "Page faults").
		steps = append(steps, struct {
			what string
			do   func() error
		}{"memory pattern", func() error { return so.SetMemPattern(false) }})
	case CUDA:
		steps = append(steps, struct {
			what string
			do   func() error
		}{"CUDA execution provider", func() error { return appendCUDA(so, opts.Device) }})
	default:
		so.Destroy()
		return nil, fmt.Errorf("session options: unknown execution provider %q; want %s or %s", opts.Provider, CPU, CUDA)
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			so.Destroy()
			return nil, fmt.Errorf("session options: %s: %w", st.what, err)
		}
	}
	return so, nil
}

// cudaOptions are the CUDA provider's settings that the timing depends
// on, stated rather than left to defaults that change between releases:
// cuDNN picks each convolution's algorithm by trying them all on its
// first run (a warm-up absorbs that), as a tuned deployment would.
var cudaOptions = map[string]string{
	"cudnn_conv_algo_search":    "EXHAUSTIVE",
	"do_copy_in_default_stream": "1",
}

// appendCUDA attaches the CUDA provider on GPU device to so.
func appendCUDA(so *onnx.SessionOptions, device int) error {
	o, err := onnx.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer o.Destroy()
	opts := maps.Clone(cudaOptions)
	opts["device_id"] = strconv.Itoa(device)
	if err := o.Update(opts); err != nil {
		return err
	}
	return so.AppendExecutionProviderCUDA(o)
}

// Input returns the input tensor's data of NewSession's shapes,
// row-major; fill it before Run. It is nil after Close.
func (s *Session) Input() []float32 { return s.first.Input() }

// Output returns the output tensor's data of NewSession's shapes,
// row-major, as the last Run left it. It is nil after Close.
func (s *Session) Output() []float32 { return s.first.Output() }

// Run runs the model once at NewSession's shapes, on Input, and writes
// Output.
func (s *Session) Run() error { return s.first.Run() }

// First returns the binding of NewSession's shapes, which Input, Output
// and Run use.
func (s *Session) First() *Binding { return s.first }

// Input returns the binding's input tensor's data, row-major; fill it
// before Run. It is nil after the session's Close.
func (b *Binding) Input() []float32 {
	if b.in == nil {
		return nil
	}
	return b.in.GetData()
}

// Output returns the binding's output tensor's data, row-major, as its
// last Run left it. It is nil after the session's Close.
func (b *Binding) Output() []float32 {
	if b.out == nil {
		return nil
	}
	return b.out.GetData()
}

// errBusy is the error of a second goroutine using a session.
var errBusy = errors.New("session is in use by another goroutine")

// Run runs the model once on the binding's Input and writes its Output.
func (b *Binding) Run() error {
	s := b.s
	if !s.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("ort: run (%s): %w", b.desc, errBusy)
	}
	defer s.busy.Store(false)
	if s.closed {
		return fmt.Errorf("ort: run (%s): session is closed", b.desc)
	}
	if s.rebind {
		// The copy to the device belongs in the run's time: a served
		// request's input arrives in host memory too.
		if err := b.io.BindInput(s.input, b.in); err != nil {
			return fmt.Errorf("ort: run (%s): bind input: %w", b.desc, err)
		}
	}
	if err := s.sess.RunWithBinding(b.io); err != nil {
		return fmt.Errorf("ort: run (%s): %w", b.desc, err)
	}
	return nil
}

// Close frees the session, its bindings and their tensors. Closing a closed
// session does nothing; closing one that is running is an error.
func (s *Session) Close() error {
	if !s.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("ort: close (%s): %w", s.first.desc, errBusy)
	}
	defer s.busy.Store(false)
	if s.closed {
		return nil
	}
	s.closed = true
	// The Destroy methods always return nil in onnxruntime_go v1.27.0;
	// errors.Join keeps a future one visible.
	var errs []error
	for _, b := range s.bindings {
		errs = append(errs, b.destroy())
	}
	errs = append(errs, s.sess.Destroy())
	s.sess, s.bindings = nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ort: close (%s): %w", s.first.desc, err)
	}
	return nil
}
