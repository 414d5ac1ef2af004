package ort

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tinyModel is testdata/tiny_sigmoid.onnx (y = sigmoid(x @ w), x [N,10],
// y [N,1]) with the weights testdata/make_tiny_sigmoid.py built it from.
type tinyModel struct {
	onnx     []byte
	Input    string    `json:"input"`
	Output   string    `json:"output"`
	Features int       `json:"features"`
	Weights  []float64 `json:"weights"`
}

func loadTiny(t *testing.T) tinyModel {
	t.Helper()
	var m tinyModel
	b, err := os.ReadFile(filepath.Join("testdata", "tiny_sigmoid.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("tiny_sigmoid.json: %v", err)
	}
	if len(m.Weights) != m.Features {
		t.Fatalf("tiny_sigmoid.json: %d weights for %d features", len(m.Weights), m.Features)
	}
	if m.onnx, err = os.ReadFile(filepath.Join("testdata", "tiny_sigmoid.onnx")); err != nil {
		t.Fatal(err)
	}
	return m
}

// fill writes a row-major [rows, features] input that differs per seed and
// spans both signs, so outputs are spread across (0, 1).
func (m tinyModel) fill(x []float32, seed int) {
	for i := range x {
		row, col := i/m.Features, i%m.Features
		x[i] = float32((row+seed)%7-3) * float32(col%5+1) / 4
	}
}

// want computes sigmoid(x @ w) in float64 from the committed weights.
func (m tinyModel) want(x []float32) []float64 {
	rows := len(x) / m.Features
	out := make([]float64, rows)
	for r := range rows {
		var z float64
		for c := range m.Features {
			z += float64(x[r*m.Features+c]) * m.Weights[c]
		}
		out[r] = 1 / (1 + math.Exp(-z))
	}
	return out
}

// check compares a session's output with the float64 reference. float32
// sigmoid of a sum of ten products is good to a few ulps of 1.
func (m tinyModel) check(t *testing.T, s *Session) {
	t.Helper()
	want := m.want(s.Input())
	got := s.Output()
	if len(got) != len(want) {
		t.Fatalf("output has %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-6 {
			t.Errorf("row %d: got %.8f, want %.8f (diff %.2g)", i, got[i], want[i], d)
		}
	}
}

func TestSessionRun(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	const rows = 6
	for _, opts := range []SessionOptions{
		{IntraOpThreads: 1},
		{IntraOpThreads: 2},
		{IntraOpThreads: 2, InterOpThreads: 2},
		{IntraOpThreads: 2, AllowSpinning: true},
		{}, // onnxruntime's defaults
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			s, err := NewSession(m.onnx, m.Input, []int64{rows, int64(m.Features)}, m.Output, []int64{rows, 1}, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if len(s.Input()) != rows*m.Features {
				t.Fatalf("len(Input()) = %d, want %d", len(s.Input()), rows*m.Features)
			}
			// Two different inputs, so a stale output cannot pass.
			for seed := range 2 {
				m.fill(s.Input(), seed)
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
				m.check(t, s)
			}
			spread := s.Output()[0] != s.Output()[1]
			if !spread {
				t.Errorf("outputs %v do not vary with the input", s.Output())
			}
		})
	}
}

// TestSessionRunCUDA runs the tiny model on the CUDA provider where this
// machine has it (a GPU, the provider library beside onnxruntime and the
// CUDA libraries it needs), and checks the output as TestSessionRun does;
// elsewhere it checks that asking for CUDA fails at NewSession, saying so,
// rather than quietly running on the CPU.
func TestSessionRunCUDA(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	const rows = 6
	opts := SessionOptions{Provider: CUDA, IntraOpThreads: 1}
	s, err := NewSession(m.onnx, m.Input, []int64{rows, int64(m.Features)}, m.Output, []int64{rows, 1}, opts)
	if probe := ProbeProvider(CUDA); probe != nil {
		if err == nil {
			s.Close()
			t.Fatalf("NewSession on CUDA succeeded where ProbeProvider says %v", probe)
		}
		if !strings.Contains(err.Error(), "CUDA execution provider") {
			t.Errorf("NewSession on CUDA: %v; want it to name the CUDA execution provider", err)
		}
		t.Logf("no CUDA here (%v); NewSession refused: %v", probe, err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seed := range 2 {
		m.fill(s.Input(), seed)
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		m.check(t, s)
	}
}

// TestRunAllocs checks the promise a timing loop relies on: Run allocates
// nothing in Go, so the garbage collector does not run inside a sample.
func TestRunAllocs(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	s, err := NewSession(m.onnx, m.Input, []int64{1, int64(m.Features)}, m.Output, []int64{1, 1}, SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var runErr error
	allocs := testing.AllocsPerRun(100, func() {
		if err := s.Run(); err != nil {
			runErr = err
		}
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	if allocs != 0 {
		t.Errorf("Run allocates %v times per call, want 0", allocs)
	}
}

// TestSessionsConcurrent runs several sessions at once, one goroutine each,
// as the profile's contention measurement does; each must keep computing
// its own input's answer.
func TestSessionsConcurrent(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	const k, runs, rows = 4, 200, 3
	var wg sync.WaitGroup
	errs := make([]error, k)
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := NewSession(m.onnx, m.Input, []int64{rows, int64(m.Features)}, m.Output, []int64{rows, 1}, SessionOptions{IntraOpThreads: 1})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			for r := range runs {
				m.fill(s.Input(), i*runs+r)
				if err := s.Run(); err != nil {
					errs[i] = err
					return
				}
				want := m.want(s.Input())
				for j, got := range s.Output() {
					if math.Abs(float64(got)-want[j]) > 1e-6 {
						errs[i] = fmt.Errorf("session %d run %d row %d: got %v, want %v", i, r, j, got, want[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestNewSessionErrors(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	in, out := []int64{2, int64(m.Features)}, []int64{2, 1}
	tests := []struct {
		name    string
		model   []byte
		inShape []int64
		opts    SessionOptions
		want    string
	}{
		{name: "empty model", model: nil, inShape: in, want: "empty model"},
		{name: "not protobuf", model: []byte("this is not an ONNX model"), inShape: in, want: "ort: new session"},
		{name: "truncated model", model: m.onnx[:len(m.onnx)/2], inShape: in, want: "ort: new session"},
		{name: "zero dimension", model: m.onnx, inShape: []int64{0, int64(m.Features)}, want: "shape [0 10]: want at least one dimension, each at least 1"},
		{name: "negative dimension", model: m.onnx, inShape: []int64{-1, int64(m.Features)}, want: "shape [-1 10]"},
		{name: "scalar", model: m.onnx, inShape: []int64{}, want: "shape []"},
		{name: "negative threads", model: m.onnx, inShape: in, opts: SessionOptions{IntraOpThreads: -1}, want: "negative thread count"},
		{name: "negative device", model: m.onnx, inShape: in, opts: SessionOptions{Provider: CUDA, Device: -1}, want: "negative device -1"},
		{name: "unknown provider", model: m.onnx, inShape: in, opts: SessionOptions{Provider: "ROCMExecutionProvider"},
			want: `unknown execution provider "ROCMExecutionProvider"; want CPUExecutionProvider or CUDAExecutionProvider`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSession(tc.model, m.Input, tc.inShape, m.Output, out, tc.opts)
			if err == nil {
				s.Close()
				t.Fatalf("NewSession succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ort: new session") {
				t.Errorf("NewSession error %q, want one starting with %q and containing %q", err, "ort: new session", tc.want)
			}
		})
	}
}

// TestRunErrors covers names and shapes that do not fit the graph: an
// unknown name is refused when the session binds its tensors, a shape the
// graph does not take when the model runs.
func TestRunErrors(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	tests := []struct {
		name, input string
		inShape     []int64
		atRun       bool
		want        string
	}{
		{"unknown input name", "nope", []int64{2, int64(m.Features)}, false, "nope"},
		{"wrong feature count", m.Input, []int64{2, 3}, true, "dimensions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSession(m.onnx, tc.input, tc.inShape, m.Output, []int64{2, 1}, SessionOptions{IntraOpThreads: 1})
			if !tc.atRun {
				if err == nil || !strings.HasPrefix(err.Error(), "ort: new session (") || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("NewSession error = %v, want an ort: new session error mentioning %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewSession: %v", err)
			}
			defer s.Close()
			err = s.Run()
			if err == nil || !strings.HasPrefix(err.Error(), "ort: run (") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run error = %v, want an ort: run error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestBind runs one session at several batch sizes, interleaved: each
// binding keeps its own tensors and computes its own input's answer, and
// none allocates per run; a bad shape, a busy or closed session are
// errors.
func TestBind(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	f := int64(m.Features)
	s, err := NewSession(m.onnx, m.Input, []int64{1, f}, m.Output, []int64{1, 1}, SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := map[int64]*Binding{}
	for _, rows := range []int64{3, 8, 32} {
		if bs[rows], err = s.Bind([]int64{rows, f}, []int64{rows, 1}); err != nil {
			t.Fatal(err)
		}
		m.fill(bs[rows].Input(), int(rows))
	}
	m.fill(s.Input(), 1)
	for round := range 2 {
		for _, rows := range []int64{32, 3, 8} {
			b := bs[rows]
			if err := b.Run(); err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			want := m.want(b.Input())
			for i, got := range b.Output() {
				if math.Abs(float64(got)-want[i]) > 1e-6 {
					t.Fatalf("round %d, %d rows: row %d = %v, want %v", round, rows, i, got, want[i])
				}
			}
			if w := m.want(s.Input()); math.Abs(float64(s.Output()[0])-w[0]) > 1e-6 {
				t.Fatalf("the first shape after the %d-row binding ran: %v, want %v", rows, s.Output()[0], w[0])
			}
		}
	}
	if allocs := testing.AllocsPerRun(50, func() { bs[8].Run() }); allocs != 0 {
		t.Errorf("a binding's Run allocates %v times per call, want 0", allocs)
	}
	if _, err := s.Bind([]int64{0, f}, []int64{0, 1}); err == nil || !strings.Contains(err.Error(), "each at least 1") {
		t.Errorf("Bind of an empty shape: %v", err)
	}
	s.busy.Store(true)
	if err := bs[3].Run(); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Run of a binding while the session is busy: %v", err)
	}
	s.busy.Store(false)
	s.Close()
	if err := bs[3].Run(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run of a binding after Close: %v", err)
	}
	if _, err := s.Bind([]int64{1, f}, []int64{1, 1}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Bind after Close: %v", err)
	}
	if bs[3].Input() != nil || bs[3].Output() != nil {
		t.Error("a binding's tensors outlive the session's Close")
	}
}

func TestSessionClose(t *testing.T) {
	requireLibrary(t)
	m := loadTiny(t)
	s, err := NewSession(m.onnx, m.Input, []int64{1, int64(m.Features)}, m.Output, []int64{1, 1}, SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Run(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run after Close = %v, want a closed-session error", err)
	}
	if s.Input() != nil || s.Output() != nil {
		t.Errorf("Input/Output after Close are not nil")
	}
}
