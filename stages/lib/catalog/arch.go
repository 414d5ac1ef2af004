package catalog

// tally accumulates the architectural counts of a network as its layers are
// described one by one. Keeping a single counter per network is what makes
// Params, FLOPs and activation bytes consistent with each other: they are
// three views of the same layer list.
type tally struct {
	params int64 // parameters of the inference graph
	// folded counts the batch-norm channels folded into convolutions:
	// the reference model has two trainable parameters (γ, β) for each,
	// the inference graph one (the bias), so the reference's trainable
	// count is params + folded.
	folded int64
	macs   int64 // multiply-adds of one sample's forward pass
	acts   int64 // fp32 elements of every tensor the forward pass produces
}

// conv adds a 2-D convolution over a square h×h input and returns the output
// side. Batch norm, when present, is folded into the convolution as a bias
// of cout parameters, and adds no activation.
func (t *tally) conv(h, cin, cout, k, stride, pad int64, bias, batchNorm bool) int64 {
	out := (h+2*pad-k)/stride + 1
	t.params += cin * cout * k * k
	if bias || batchNorm {
		t.params += cout
	}
	if batchNorm {
		t.folded += cout
	}
	t.macs += out * out * cout * cin * k * k
	t.acts += out * out * cout
	return out
}

// linear adds a fully connected layer applied to rows independent vectors.
func (t *tally) linear(rows, in, out int64) {
	t.params += in*out + out
	t.macs += rows * in * out
	t.acts += rows * out
}

// tensor records a produced tensor whose own multiply-adds are either none
// (pooling, residual adds) or counted separately by the caller (attention).
func (t *tally) tensor(elems int64) { t.acts += elems }

// mlpTally is the 10→64→64→1 perceptron; ReLU and sigmoid run in place.
func mlpTally() tally {
	var t tally
	t.linear(1, 10, 64)
	t.linear(1, 64, 64)
	t.linear(1, 64, 1)
	return t
}

// resnetStem adds the 7×7/2 convolution and 3×3/2 max pool shared by all
// torchvision ResNets and returns the 56×56 side after them.
func resnetStem(t *tally) int64 {
	h := t.conv(224, 3, 64, 7, 2, 3, false, true)
	h = (h+2*1-3)/2 + 1 // max pool 3×3, stride 2, padding 1
	t.tensor(h * h * 64)
	return h
}

// resnetHead adds global average pooling and the 1000-way classifier.
func resnetHead(t *tally, channels int64) {
	t.tensor(channels)
	t.linear(1, channels, 1000)
}

// resnet18Tally follows torchvision.models.resnet18: four stages of two
// basic blocks (64, 128, 256, 512 channels), the first block of stages 2-4
// striding by 2 through a 1×1 projection shortcut.
func resnet18Tally() tally {
	var t tally
	h := resnetStem(&t)
	in := int64(64)
	for stage, width := range []int64{64, 128, 256, 512} {
		for block := range 2 {
			stride := int64(1)
			if block == 0 && stage > 0 {
				stride = 2
			}
			out := t.conv(h, in, width, 3, stride, 1, false, true)
			t.conv(out, width, width, 3, 1, 1, false, true)
			if stride != 1 || in != width {
				t.conv(h, in, width, 1, stride, 0, false, true)
			}
			t.tensor(out * out * width) // residual add, ReLU in place
			h, in = out, width
		}
	}
	resnetHead(&t, in)
	return t
}

// resnet50Tally follows torchvision.models.resnet50 (v1.5: the stride sits in
// the 3×3 convolution): stages of 3, 4, 6 and 3 bottleneck blocks whose
// output has 4× their inner width.
func resnet50Tally() tally {
	var t tally
	h := resnetStem(&t)
	in := int64(64)
	for stage, blocks := range []int{3, 4, 6, 3} {
		width := int64(64) << stage
		for block := range blocks {
			stride := int64(1)
			if block == 0 && stage > 0 {
				stride = 2
			}
			t.conv(h, in, width, 1, 1, 0, false, true)
			out := t.conv(h, width, width, 3, stride, 1, false, true)
			t.conv(out, width, 4*width, 1, 1, 0, false, true)
			if stride != 1 || in != 4*width {
				t.conv(h, in, 4*width, 1, stride, 0, false, true)
			}
			t.tensor(out * out * 4 * width)
			h, in = out, 4*width
		}
	}
	resnetHead(&t, in)
	return t
}

// vitTinyTally follows timm's vit_tiny_patch16_224 (DeiT-Ti): 16×16 patches
// of a 224×224 image give 196 tokens plus a class token, width 192, 12
// pre-norm blocks with 3 heads and an MLP ratio of 4, a final layer norm over
// all tokens and a classifier on the class token. Its tensors are those of
// the zoo's graph (stages/lib/zoo/vit.go), which moves data where timm's
// module views it: the transposes, the gathers of q, k and v and of the
// class token, and GELU's product x·(1 + erf(x/√2)) are tensors of their
// own.
func vitTinyTally() tally {
	const (
		dim    = 192
		depth  = 12
		heads  = 3
		hidden = 4 * dim
	)
	var t tally
	side := t.conv(224, 3, dim, 16, 16, 0, true, false)
	tokens := side*side + 1
	t.tensor(side * side * dim)  // patches transposed to tokens
	t.params += dim + tokens*dim // class token and position embedding
	t.tensor(tokens * dim)       // tokens padded with the class token's place; positions add in place
	layerNorm := func() {
		t.params += 2 * dim
		t.tensor(tokens * dim)
	}
	for range depth {
		layerNorm()
		t.linear(tokens, dim, 3*dim)
		t.tensor(tokens * 3 * dim) // qkv transposed to heads
		t.tensor(tokens * 3 * dim) // q, k and v gathered
		t.tensor(tokens * dim)     // k transposed
		// Q·Kᵀ per head is tokens×tokens×(dim/heads) multiply-adds; over all
		// heads that is tokens²·dim, and the same again for scores·V.
		t.macs += 2 * tokens * tokens * dim
		t.tensor(heads * tokens * tokens) // scores, softmax in place
		t.tensor(tokens * dim)            // scores·V
		t.tensor(tokens * dim)            // heads transposed back
		t.linear(tokens, dim, dim)
		t.tensor(tokens * dim) // residual add
		layerNorm()
		t.linear(tokens, dim, hidden)
		t.tensor(tokens * hidden) // GELU's product of two tensors
		t.linear(tokens, hidden, dim)
		t.tensor(tokens * dim) // residual add
	}
	layerNorm()
	t.tensor(dim) // the class token gathered
	t.linear(1, dim, 1000)
	return t
}
