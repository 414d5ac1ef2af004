package placement

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/floats"
)

// Options sets the training. A zero field takes its default.
type Options struct {
	// Seed keys every random draw: the validation split, the initial
	// weights and the order of the mini-batches. The same data and Seed
	// give the same network, bit for bit, on any number of cores.
	Seed uint64
	// Hidden is the width of both hidden layers; default 64.
	Hidden int
	// Epochs bounds the passes over the training split; default 100.
	Epochs int
	// Batch is the mini-batch size; default 256.
	Batch int
	// LearningRate is Adam's step size; default 1e-3.
	LearningRate float64
	// Patience is how many epochs without a lower validation loss end the
	// training; default 10. The best epoch's weights are kept either way.
	Patience int
	// ValFraction is the share of the points held out for early stopping
	// (stratified, see Holdout); default 0.15.
	ValFraction float64
	// Validation, if not nil, names the points held out for early
	// stopping instead (indexes of x, ascending): a caller whose points
	// come in groups that share their state holds out whole groups.
	Validation []int
	// Scale is each feature's warp (Network.Scale); a zero element is 1.
	// A time in seconds wants about 1e3, so that a millisecond is where
	// the warp turns from linear to logarithmic.
	Scale [Inputs]float32
}

// Defaults of Options' zero fields.
const (
	DefaultHidden       = 64
	DefaultEpochs       = 100
	DefaultBatch        = 256
	DefaultLearningRate = 1e-3
	DefaultPatience     = 10
	DefaultValFraction  = 0.15
)

// Adam's other constants, Kingma and Ba's defaults.
const (
	beta1   = 0.9
	beta2   = 0.999
	epsilon = 1e-8
)

// withDefaults returns o with its zero fields set to their defaults, or an
// error naming the first field out of range.
func (o Options) withDefaults() (Options, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Hidden, DefaultHidden)
	def(&o.Epochs, DefaultEpochs)
	def(&o.Batch, DefaultBatch)
	def(&o.Patience, DefaultPatience)
	for k := range Inputs {
		if o.Scale[k] == 0 {
			o.Scale[k] = 1
		}
	}
	if o.LearningRate == 0 {
		o.LearningRate = DefaultLearningRate
	}
	if o.ValFraction == 0 {
		o.ValFraction = DefaultValFraction
	}
	switch {
	case o.Hidden < 1 || o.Hidden > 4096:
		return o, fmt.Errorf("hidden width %d: want 1 to 4096", o.Hidden)
	case o.Epochs < 1:
		return o, fmt.Errorf("epochs %d: want at least 1", o.Epochs)
	case o.Batch < 1:
		return o, fmt.Errorf("batch %d: want at least 1", o.Batch)
	case o.Patience < 1:
		return o, fmt.Errorf("patience %d: want at least 1", o.Patience)
	case !(o.LearningRate > 0) || math.IsInf(o.LearningRate, 0):
		return o, fmt.Errorf("learning rate %v: want a positive number", o.LearningRate)
	case !(o.ValFraction > 0 && o.ValFraction < 1):
		return o, fmt.Errorf("validation fraction %v: want a share between 0 and 1", o.ValFraction)
	}
	for k, v := range o.Scale {
		if !(v > 0) || !finite32(v) {
			return o, fmt.Errorf("scale of feature %d is %v: want a positive number", k, v)
		}
	}
	return o, nil
}

// Epoch is one point of the training curve.
type Epoch struct {
	// Epoch counts from 1.
	Epoch int `parquet:"epoch"`
	// TrainLoss is the mean cross-entropy over the epoch's mini-batches,
	// each taken before its update (as Keras reports it), weighted.
	TrainLoss float64 `parquet:"train_loss"`
	// ValLoss and ValAccuracy are the weighted cross-entropy and accuracy
	// at Threshold on the validation split after the epoch.
	ValLoss     float64 `parquet:"val_loss"`
	ValAccuracy float64 `parquet:"val_accuracy"`
	// Best marks the epoch with the lowest validation loss, whose weights
	// the network has.
	Best bool `parquet:"best"`
}

// Streams of the PCG generators, one per use of the seed, so that no draw
// depends on how many another use made.
const (
	streamHoldout = 0x686f6c646f7574 // "holdout"
	streamInit    = 0x696e6974       // "init"
	streamShuffle = 0x73687566666c65 // "shuffle"
)

// shards is how many parts each mini-batch is split into for the gradient:
// each part's gradient is computed on its own (on as many cores as there
// are, up to shards) and the parts are summed in a fixed order, so the
// result does not depend on the number of cores.
const shards = 4

// Train fits a network to x and y, the features and labels (true =
// migrate) of decision points, with optional per-point weights w (nil
// gives every point weight 1) scaling each point's term of the
// cross-entropy. Holdout(y, opts.ValFraction, opts.Seed) picks the
// validation points, used for early stopping only; the rest are the
// training split, whose means and standard deviations standardise the
// features. Train returns the network of the epoch with the lowest
// validation loss and the curve of every epoch run.
//
// Points held out for scoring must not be passed to Train at all.
func Train(x [][Inputs]float32, y []bool, w []float64, opts Options) (*Network, []Epoch, error) {
	n, curve, err := train(x, y, w, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("placement: train: %w", err)
	}
	return n, curve, nil
}

func train(x [][Inputs]float32, y []bool, w []float64, opts Options) (*Network, []Epoch, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if err := checkData(x, y, w); err != nil {
		return nil, nil, err
	}
	fit, val, err := holdout(y, opts.ValFraction, opts.Seed)
	if opts.Validation != nil {
		fit, val, err = given(len(y), opts.Validation)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("validation split: %w", err)
	}
	// The trainer sees the warped features; the network warps its input
	// the same way.
	warped := make([][Inputs]float32, len(x))
	for i := range x {
		for k, v := range x[i] {
			warped[i][k] = warp(v, opts.Scale[k])
		}
	}
	x = warped
	mean, std := standardisation(x, fit)
	t := newTrainer(opts)
	t.fit = newSplit(x, y, w, fit, &mean, &std)
	t.val = newSplit(x, y, w, val, &mean, &std)
	if !(t.fit.weight > 0) || !(t.val.weight > 0) {
		return nil, nil, errors.New("the training or validation points all have weight 0")
	}
	curve, err := t.run()
	if err != nil {
		return nil, nil, err
	}
	net := t.network(opts.Scale, mean, std)
	if err := net.check(); err != nil {
		return nil, nil, fmt.Errorf("trained network: %w", err)
	}
	return net, curve, nil
}

// checkData reports data Train cannot use, naming the row at fault.
func checkData(x [][Inputs]float32, y []bool, w []float64) error {
	switch {
	case len(x) != len(y):
		return fmt.Errorf("%d feature rows and %d labels", len(x), len(y))
	case w != nil && len(w) != len(x):
		return fmt.Errorf("%d weights for %d rows", len(w), len(x))
	}
	if err := checkFeatures(x); err != nil {
		return err
	}
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("row %d: weight %v: want a finite weight of at least 0", i, v)
		}
	}
	pos := 0
	for _, v := range y {
		if v {
			pos++
		}
	}
	if pos == 0 || pos == len(y) {
		return fmt.Errorf("all %d labels are migrate=%t: training needs both classes", len(y), pos > 0)
	}
	return nil
}

// checkFeatures reports the first feature that is NaN or infinite.
func checkFeatures(x [][Inputs]float32) error {
	for i := range x {
		for k, v := range x[i] {
			if !finite32(v) {
				return fmt.Errorf("row %d: feature %d is %v", i, k, v)
			}
		}
	}
	return nil
}

// Holdout splits the points with labels y into those kept and those held
// out, a share fraction of each class (rounded, at least one) chosen at
// random from seed, and returns both lists of indices in increasing order.
// Train holds out its validation points this way; a caller holds out its
// test points the same way, before training, with a seed of its own.
// Each side must keep both classes.
func Holdout(y []bool, fraction float64, seed uint64) (kept, held []int, err error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("placement: holdout: fraction %v: want a share between 0 and 1", fraction)
	}
	kept, held, err = holdout(y, fraction, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("placement: holdout: %w", err)
	}
	return kept, held, nil
}

// given splits n points into those not in held and held, which must be
// ascending indexes below n and leave points on both sides.
func given(n int, held []int) (kept, out []int, err error) {
	for i, h := range held {
		if h < 0 || h >= n || i > 0 && h <= held[i-1] {
			return nil, nil, fmt.Errorf("validation index %d (position %d): want ascending indexes below %d", h, i, n)
		}
	}
	if len(held) == 0 || len(held) == n {
		return nil, nil, fmt.Errorf("%d of %d points held out: each side needs some", len(held), n)
	}
	for i, j := 0, 0; i < n; i++ {
		if j < len(held) && held[j] == i {
			j++
			continue
		}
		kept = append(kept, i)
	}
	return kept, held, nil
}

func holdout(y []bool, fraction float64, seed uint64) (kept, held []int, err error) {
	var class [2][]int
	for i, v := range y {
		c := 0
		if v {
			c = 1
		}
		class[c] = append(class[c], i)
	}
	r := rand.New(rand.NewPCG(seed, streamHoldout))
	out := make([]bool, len(y))
	for c, idx := range class {
		if len(idx) < 2 {
			return nil, nil, fmt.Errorf("%d points with migrate=%t: each side of the split needs one", len(idx), c == 1)
		}
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		k := min(max(int(math.Round(fraction*float64(len(idx)))), 1), len(idx)-1)
		for _, i := range idx[:k] {
			out[i] = true
		}
	}
	for i, o := range out {
		if o {
			held = append(held, i)
		} else {
			kept = append(kept, i)
		}
	}
	return kept, held, nil
}

// standardisation returns the mean and standard deviation of each feature
// over the rows in idx, as float32. A feature without spread gets std 1.
func standardisation(x [][Inputs]float32, idx []int) (mean, std [Inputs]float32) {
	var sum, sq [Inputs]float64
	for _, i := range idx {
		for k, v := range x[i] {
			sum[k] += float64(v)
		}
	}
	n := float64(len(idx))
	var mu [Inputs]float64
	for k := range Inputs {
		mu[k] = sum[k] / n
	}
	for _, i := range idx {
		for k, v := range x[i] {
			d := float64(v) - mu[k]
			sq[k] += d * d
		}
	}
	for k := range Inputs {
		s := math.Sqrt(sq[k] / n)
		mean[k] = float32(mu[k])
		std[k] = float32(s)
		// A spread lost in float32 or in rounding noise is no spread:
		// dividing by it would blow the rounding error up.
		if !(s > 1e-12*max(1, math.Abs(mu[k]))) || !(std[k] > 0) {
			std[k] = 1
		}
	}
	return mean, std
}

// split is the training or validation points, standardised, as the
// trainer reads them.
type split struct {
	x      []float64 // [n, Inputs] row-major, standardised
	y      []float64 // 0 or 1
	w      []float64
	weight float64 // sum of w
}

func newSplit(x [][Inputs]float32, y []bool, w []float64, idx []int, mean, std *[Inputs]float32) *split {
	s := &split{x: make([]float64, len(idx)*Inputs), y: make([]float64, len(idx)), w: make([]float64, len(idx))}
	for r, i := range idx {
		for k := range Inputs {
			// float32, as the graph's Sub and Div compute it.
			s.x[r*Inputs+k] = float64((x[i][k] - mean[k]) / std[k])
		}
		if y[i] {
			s.y[r] = 1
		}
		s.w[r] = 1
		if w != nil {
			s.w[r] = w[i]
		}
		s.weight += s.w[r]
	}
	return s
}

func (s *split) len() int { return len(s.y) }

// trainer holds the parameters, Adam's moments and the scratch space of
// the shards. The parameters are one slice, so that Adam, the reduction of
// the shards' gradients and the copy of the best epoch are single loops.
//
// Inside the trainer the weights are stored input-major ([In, Out]): the
// forward pass then adds a scaled row per active input (an axpy, which
// gonum runs in assembly) and skips the inputs ReLU zeroed.
type trainer struct {
	opts     Options
	hid      int
	params   []float64
	p        layout
	m, v     []float64
	best     []float64
	fit, val *split
	shard    [shards]*shard
	step     int
}

// layout is the parameter slice cut into layers.
type layout struct {
	w1, b1, w2, b2, w3, b3 []float64
}

func cut(params []float64, hid int) layout {
	var l layout
	next := func(n int) []float64 {
		s := params[:n:n]
		params = params[n:]
		return s
	}
	l.w1, l.b1 = next(Inputs*hid), next(hid)
	l.w2, l.b2 = next(hid*hid), next(hid)
	l.w3, l.b3 = next(hid), next(1)
	return l
}

func paramCount(hid int) int { return Inputs*hid + hid + hid*hid + hid + hid + 1 }

// shard is one part of a mini-batch: its gradient and scratch vectors.
type shard struct {
	grad   []float64
	g      layout
	h1, h2 []float64
	act1   []int32 // the indices of h1's positive elements
	d1, d2 []float64
	loss   float64 // weighted loss summed over the part
}

func newTrainer(opts Options) *trainer {
	h := opts.Hidden
	n := paramCount(h)
	t := &trainer{opts: opts, hid: h, params: make([]float64, n), m: make([]float64, n), v: make([]float64, n), best: make([]float64, n)}
	t.p = cut(t.params, h)
	for i := range t.shard {
		s := &shard{grad: make([]float64, n), h1: make([]float64, h), h2: make([]float64, h), act1: make([]int32, h), d1: make([]float64, h), d2: make([]float64, h)}
		s.g = cut(s.grad, h)
		t.shard[i] = s
	}
	// He initialisation for the ReLU layers, Glorot for the sigmoid
	// output; biases start at zero.
	r := rand.New(rand.NewPCG(t.opts.Seed, streamInit))
	for i := range t.p.w1 {
		t.p.w1[i] = r.NormFloat64() * math.Sqrt(2.0/Inputs)
	}
	for i := range t.p.w2 {
		t.p.w2[i] = r.NormFloat64() * math.Sqrt(2/float64(h))
	}
	lim := math.Sqrt(6 / float64(h+1))
	for i := range t.p.w3 {
		t.p.w3[i] = (2*r.Float64() - 1) * lim
	}
	return t
}

// run trains until the epochs are spent or the validation loss stops
// improving, leaves the best epoch's parameters in t.best and returns the
// curve.
func (t *trainer) run() ([]Epoch, error) {
	n := t.fit.len()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(t.opts.Seed, streamShuffle))
	// The per-point scale makes a batch's gradient an unbiased estimate of
	// the gradient of the weighted mean loss over the training split.
	scale := float64(n) / t.fit.weight
	var curve []Epoch
	bestLoss, bestAt := math.Inf(1), -1
	for e := 0; e < t.opts.Epochs; e++ {
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var sum float64
		for lo := 0; lo < n; lo += t.opts.Batch {
			batch := order[lo:min(lo+t.opts.Batch, n)]
			sum += t.gradient(batch, scale/float64(len(batch)))
			t.adam()
		}
		ep := Epoch{Epoch: e + 1, TrainLoss: sum / t.fit.weight}
		ep.ValLoss, ep.ValAccuracy = t.evaluate(t.val)
		curve = append(curve, ep)
		// NaN never compares lower, so a diverged epoch is never kept.
		if ep.ValLoss < bestLoss {
			bestLoss, bestAt = ep.ValLoss, e
			copy(t.best, t.params)
		} else if e-bestAt >= t.opts.Patience {
			break
		}
	}
	if bestAt < 0 {
		return nil, fmt.Errorf("training diverged: the validation loss is %v after every epoch (a lower learning rate may help)", curve[len(curve)-1].ValLoss)
	}
	curve[bestAt].Best = true
	return curve, nil
}

// parallel runs f(i) for each shard i, on up to GOMAXPROCS goroutines. A
// shard's work does not depend on which goroutine runs it.
func parallel(f func(i int)) {
	procs := min(runtime.GOMAXPROCS(0), shards)
	if procs == 1 {
		for i := range shards {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for g := range procs {
		wg.Go(func() {
			for i := g; i < shards; i += procs {
				f(i)
			}
		})
	}
	wg.Wait()
}

// part returns shard i's share of n items: shards contiguous parts whose
// sizes differ by at most one.
func part(i, n int) (lo, hi int) { return i * n / shards, (i + 1) * n / shards }

// gradient leaves in shard 0's grad the gradient of the batch's loss, each
// point's term multiplied by its weight and scale, and returns the batch's
// weighted loss (unscaled).
func (t *trainer) gradient(batch []int, scale float64) float64 {
	parallel(func(i int) {
		s := t.shard[i]
		clear(s.grad)
		lo, hi := part(i, len(batch))
		var loss float64
		for _, j := range batch[lo:hi] {
			loss += t.backprop(s, j, scale)
		}
		s.loss = loss
	})
	// A fixed order of summation keeps the result independent of the
	// number of goroutines.
	g := t.shard[0]
	loss := g.loss
	for _, s := range t.shard[1:] {
		floats.Add(g.grad, s.grad)
		loss += s.loss
	}
	return loss
}

// backprop adds point j's gradient to s.grad and returns its weighted
// loss.
func (t *trainer) backprop(s *shard, j int, scale float64) float64 {
	f := t.fit
	x := f.x[j*Inputs : (j+1)*Inputs]
	z := t.logit(s, x)
	w := f.w[j]
	dz := w * scale * (sigmoid(z) - f.y[j])
	p, g, h := &t.p, &s.g, t.hid

	g.b3[0] += dz
	floats.AddScaled(g.w3, dz, s.h2)
	for k, a := range s.h2 {
		s.d2[k] = unless0(dz*p.w3[k], a)
	}
	floats.Add(g.b2, s.d2)
	// Only the first layer's active units pass a gradient back; the
	// rest of d1 stays zero.
	clear(s.d1)
	for _, k := range s.act1 {
		row := int(k) * h
		floats.AddScaled(g.w2[row:row+h], s.h1[k], s.d2)
		s.d1[k] = floats.Dot(p.w2[row:row+h], s.d2)
	}
	floats.Add(g.b1, s.d1)
	for k, v := range x {
		if v != 0 {
			floats.AddScaled(g.w1[k*h:(k+1)*h], v, s.d1)
		}
	}
	return w * crossEntropy(z, f.y[j])
}

// logit runs the forward pass for one standardised row, leaving the hidden
// activations in s.h1 and s.h2 and the indices of the first layer's
// active units in s.act1.
func (t *trainer) logit(s *shard, x []float64) float64 {
	p, h := &t.p, t.hid
	copy(s.h1, p.b1)
	for k, v := range x {
		if v != 0 {
			floats.AddScaled(s.h1, v, p.w1[k*h:(k+1)*h])
		}
	}
	s.act1 = active(s.act1[:cap(s.act1)], s.h1)
	copy(s.h2, p.b2)
	// ReLU zeroes about half the units: skipping their rows halves the
	// work, and looping over the active ones avoids a branch per unit
	// that the processor cannot predict.
	for _, k := range s.act1 {
		floats.AddScaled(s.h2, s.h1[k], p.w2[int(k)*h:int(k+1)*h])
	}
	relu(s.h2)
	return p.b3[0] + floats.Dot(p.w3, s.h2)
}

// active applies ReLU to h and writes the indices of its positive
// elements to idx (of len(h) at least), returning them; no branch depends
// on the data.
func active(idx []int32, h []float64) []int32 {
	n := 0
	for k, v := range h {
		b := math.Float64bits(v)
		pos := (b | -b) >> 63 &^ (b >> 63) // 1 when v > 0
		b &^= -(b >> 63)                   // negative (and −0) to +0
		h[k] = math.Float64frombits(b)
		idx[n] = int32(k)
		n += int(pos)
	}
	return idx[:n]
}

// unless0 returns v, or 0 where a (a ReLU output) is 0, without a branch.
func unless0(v, a float64) float64 {
	b := math.Float64bits(a)
	return math.Float64frombits(math.Float64bits(v) & -((b | -b) >> 63))
}

// crossEntropy is the binary cross-entropy of label y for logit z,
// log(1+e^z) − y·z, computed without overflow.
func crossEntropy(z, y float64) float64 {
	return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - y*z
}

// adam applies one Adam step with the gradient in shard 0.
func (t *trainer) adam() {
	t.step++
	c1 := 1 - math.Pow(beta1, float64(t.step))
	c2 := 1 - math.Pow(beta2, float64(t.step))
	lr := t.opts.LearningRate
	g := t.shard[0].grad
	for i, gi := range g {
		t.m[i] = beta1*t.m[i] + (1-beta1)*gi
		t.v[i] = beta2*t.v[i] + (1-beta2)*gi*gi
		t.params[i] -= lr * (t.m[i] / c1) / (math.Sqrt(t.v[i]/c2) + epsilon)
	}
}

// evaluate returns the weighted cross-entropy and accuracy on s.
func (t *trainer) evaluate(s *split) (loss, accuracy float64) {
	var sums [shards][2]float64
	parallel(func(i int) {
		sh := t.shard[i]
		lo, hi := part(i, s.len())
		var l, a float64
		for j := lo; j < hi; j++ {
			z := t.logit(sh, s.x[j*Inputs:(j+1)*Inputs])
			l += s.w[j] * crossEntropy(z, s.y[j])
			if (sigmoid(z) > Threshold) == (s.y[j] == 1) {
				a += s.w[j]
			}
		}
		sums[i] = [2]float64{l, a}
	})
	for _, p := range sums {
		loss += p[0]
		accuracy += p[1]
	}
	return loss / s.weight, accuracy / s.weight
}

// network returns the best parameters as a Network, in nn.Linear's
// [Out, In] layout and float32.
func (t *trainer) network(scale, mean, std [Inputs]float32) *Network {
	h := t.hid
	b := cut(t.best, h)
	n := &Network{Scale: scale, Mean: mean, Std: std}
	n.Layers[0] = transpose(b.w1, b.b1, Inputs, h)
	n.Layers[1] = transpose(b.w2, b.b2, h, h)
	n.Layers[2] = transpose(b.w3, b.b3, h, 1)
	return n
}

// transpose turns input-major weights w [in, out] into a Layer.
func transpose(w, b []float64, in, out int) Layer {
	l := Layer{In: in, Out: out, Weight: make([]float32, in*out), Bias: make([]float32, out)}
	for k := range in {
		for j := range out {
			l.Weight[j*in+k] = float32(w[k*out+j])
		}
	}
	for j := range out {
		l.Bias[j] = float32(b[j])
	}
	return l
}
