package ort

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	onnx "github.com/yalue/onnxruntime_go"
)

// SessionOptions sets how a session uses the CPU.
type SessionOptions struct {
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
}

// Session runs one model with preallocated float32 input and output tensors
// of fixed shapes, so that a timed Run does no allocation in Go. A Session is
// used by one goroutine at a time; different sessions may run at once.
type Session struct {
	sess    *onnx.AdvancedSession
	in, out *onnx.Tensor[float32]
	desc    string // "x [4 10] -> y [4 1]", for errors
	// busy is set while Run or Close is in progress, so that a second
	// goroutine using the session gets an error rather than a data race on
	// the tensors or a use after free.
	busy   atomic.Bool
	closed bool // guarded by busy
}

// NewSession prepares model (ONNX bytes) to run with one float32 input
// tensor named input of shape inShape and one float32 output named output
// of shape outShape. The graph is optimised at onnxruntime's highest level
// (ORT_ENABLE_ALL: constant folding, node fusions and layout changes),
// because the profile should time the model as a tuned deployment would run
// it. Init must have succeeded. A shape the model does not accept is
// reported by the first Run, in onnxruntime's words.
func NewSession(model []byte, input string, inShape []int64, output string, outShape []int64, opts SessionOptions) (*Session, error) {
	desc := fmt.Sprintf("%s %v -> %s %v", input, inShape, output, outShape)
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
	}
	// onnxruntime_go accepts a zero dimension (an empty tensor), which
	// times nothing and leaves Input empty; a timing session needs data.
	for _, shape := range [][]int64{inShape, outShape} {
		if len(shape) == 0 || slices.ContainsFunc(shape, func(d int64) bool { return d < 1 }) {
			return fail(fmt.Errorf("shape %v: want at least one dimension, each at least 1", shape))
		}
	}
	so, err := sessionOptions(opts)
	if err != nil {
		return fail(err)
	}
	defer so.Destroy()
	s := &Session{desc: desc}
	if s.in, err = onnx.NewEmptyTensor[float32](onnx.NewShape(inShape...)); err != nil {
		return fail(fmt.Errorf("input tensor: %w", err))
	}
	if s.out, err = onnx.NewEmptyTensor[float32](onnx.NewShape(outShape...)); err != nil {
		s.in.Destroy()
		return fail(fmt.Errorf("output tensor: %w", err))
	}
	s.sess, err = onnx.NewAdvancedSessionWithONNXData(model, []string{input}, []string{output},
		[]onnx.Value{s.in}, []onnx.Value{s.out}, so)
	if err != nil {
		s.in.Destroy()
		s.out.Destroy()
		return fail(err)
	}
	return s, nil
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
	steps := []struct {
		what string
		do   func() error
	}{
		{"optimization level", func() error { return so.SetGraphOptimizationLevel(onnx.GraphOptimizationLevelEnableAll) }},
		{"execution mode", func() error { return so.SetExecutionMode(mode) }},
		{"intra-op threads", func() error { return so.SetIntraOpNumThreads(opts.IntraOpThreads) }},
		{"inter-op threads", func() error { return so.SetInterOpNumThreads(opts.InterOpThreads) }},
		{keyIntraOpSpinning, func() error { return so.AddSessionConfigEntry(keyIntraOpSpinning, spin) }},
		{keyInterOpSpinning, func() error { return so.AddSessionConfigEntry(keyInterOpSpinning, spin) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			so.Destroy()
			return nil, fmt.Errorf("session options: %s: %w", st.what, err)
		}
	}
	return so, nil
}

// Input returns the input tensor's data, row-major; fill it before Run. It
// is nil after Close.
func (s *Session) Input() []float32 {
	if s.in == nil {
		return nil
	}
	return s.in.GetData()
}

// Output returns the output tensor's data, row-major, as the last Run left
// it. It is nil after Close.
func (s *Session) Output() []float32 {
	if s.out == nil {
		return nil
	}
	return s.out.GetData()
}

// errBusy is the error of a second goroutine using a session.
var errBusy = errors.New("session is in use by another goroutine")

// Run runs the model once on Input and writes Output.
func (s *Session) Run() error {
	if !s.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("ort: run (%s): %w", s.desc, errBusy)
	}
	defer s.busy.Store(false)
	if s.closed {
		return fmt.Errorf("ort: run (%s): session is closed", s.desc)
	}
	if err := s.sess.Run(); err != nil {
		return fmt.Errorf("ort: run (%s): %w", s.desc, err)
	}
	return nil
}

// Close frees the session and its tensors. Closing a closed session does
// nothing; closing one that is running is an error.
func (s *Session) Close() error {
	if !s.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("ort: close (%s): %w", s.desc, errBusy)
	}
	defer s.busy.Store(false)
	if s.closed {
		return nil
	}
	s.closed = true
	// AdvancedSession.Destroy and Tensor.Destroy always return nil in
	// onnxruntime_go v1.27.0; errors.Join keeps a future one visible.
	err := errors.Join(s.sess.Destroy(), s.in.Destroy(), s.out.Destroy())
	s.sess, s.in, s.out = nil, nil, nil
	if err != nil {
		return fmt.Errorf("ort: close (%s): %w", s.desc, err)
	}
	return nil
}
