// Package placementnet serves the train stage's placement network to the
// schedule stage's simulator, which asks it for every migration decision:
// Network evaluates decision points through onnxruntime, GoNetwork
// computes the same network in Go, Guarded makes onnxruntime's decisions
// at the Go pass's speed, and Cache remembers answers for nearby points.
// The three evaluators share one small interface, Evaluator, so that the
// simulator holds one and does not care which. All are built for a
// scheduler's hot path: no allocation per decision, and the same answers
// for the same sequence of calls.
//
// It is a library rather than the schedule stage's own package so that
// the profile stage can time this serving path, the code that serves the
// decisions, rather than a stand-in for it (Synthetic).
//
// # Network
//
// Load takes the ONNX bytes stages/train/placement exports (input
// "features" [N, 10] float32, the columns of sim.FeatureNames, built by
// sim.MigrationFeatures.Vector; output "p" [N, 1], the probability of
// migrate) and checks them before onnxruntime sees them: the signature,
// the initializers "scale", "mean" and "std" (float32 [10], finite, scale
// and std positive, read with onnxpb) and the standardisation nodes
// Div(Sub(Asinh(Mul(features, scale)), mean), std) ahead of the first
// layer. Each error names the tensor, node or feature at fault.
//
// The model gets one ort.Session, on the caller's thread (one intra-op
// thread: a batch of decisions is far too small to repay waking a pool),
// with one ort.Binding per batch size from 1 to Options.MaxBatch (32 by
// default). One session builds and optimises the graph once for every
// size; a binding per size has its input and output tensors bound once
// through an IoBinding, so Eval of b points copies them into the size-b
// input, makes one onnxruntime call and copies b probabilities out, with
// no tensor to create, no shape to pass and nothing allocated. Load runs
// every binding once, so onnxruntime plans each shape's memory before the
// first decision rather than during it.
//
// Standardize repeats the graph's first four nodes in Go, in float32 as
// the graph computes them: z = (asinh(x × scale) − mean) / std, what the
// first layer reads. It agrees with onnxruntime's own nodes to 4e-7
// relative (TestStandardizeMatchesGraph).
//
// # GoNetwork
//
// LoadGo reads the same ONNX bytes, checks what Load checks and then the
// rest of the graph, node by node: Gemm layers (transB = 1, finite
// float32 weights), each hidden one followed by Relu and the last, one
// wide, by Sigmoid, and no other node. Any other graph is an error naming
// the node at fault, so the Go pass computes the train stage's function
// or none. Eval standardizes each point as Standardize does (remembering
// recent inputs per feature, as most features take few values: a shared
// busy share, a queue length, a predicted time), then runs the hidden
// layers 64 outputs at a time, each input's row of weights added to all
// 64 sums (layer64: AVX2 on amd64 where the CPU has it, the same sums to
// the bit in Go elsewhere; after the first layer only the inputs ReLU
// left nonzero), then the output layer and the sigmoid. No C
// call, no batching: a decision costs about 0.2 µs alone where
// onnxruntime's call costs 5 µs.
//
// Its probabilities differ from onnxruntime's in the order of the sums
// and the rounding of the sigmoid: by 5e-7 at most on decision-like
// points and 3.4e-6 on points far wider (TestGoNetworkMatchesNetwork
// holds them to 1e-5 on three networks, the default pipeline's among
// them). A decision compares the probability with a threshold, so such a
// difference can flip only a decision whose probability lies that close
// to it.
//
// # Guarded
//
// Guarded closes that gap: it evaluates every point with a fast
// Evaluator and sends to an exact one only the points whose probability
// lies within GuardBand (1e-3, a hundred times what the tests allow) of
// the threshold, or is NaN, taking the exact answer for them. Every other
// answer is on the exact one's side of the threshold, so a decision made
// from it, now or later from a Cache, is the exact one's. The schedule
// stage guards GoNetwork with a Network loaded on first need: its
// simulations make onnxruntime's decisions, and their traces are the same
// to the byte as with onnxruntime alone, while onnxruntime answers a few
// decisions in ten thousand.
//
// # Cache
//
// Cache keys a decision on its cell in standardized space:
// Key[k] = floor(z[k] / step), step 0.1 by default, and holds the
// probability of up to 4096 cells (CacheOptions.Size), forgetting the
// least recently used. The raw features are shares, counts and times from
// microseconds to minutes: no one step means the same in all of them. In
// standardized space every feature's unit is its spread on the training
// split, so a step of 0.1 is a tenth of that spread in each feature, and
// the warp makes the cells fine near zero, where short times sit and the
// decisions are made, and coarse in the long tail: the cells follow the
// resolution of the network's own input.
//
// A hit returns the probability of whichever point first filled the cell,
// so the cache trades accuracy for time: its error is how much the network
// moves within a cell. On the tests' synthetic network, a random point of
// the same cell as a held-out point got a probability 0.015 away on
// average (at most 0.16), and the other decision for 10 of 500 points, at
// step 0.1; at step 0.05 those were 0.008 and 3 of 500. A caller that
// needs the network's exact answer does not use the cache.
//
// The slots are preallocated and linked into the recency list by index;
// the table that finds a key's slot is open addressing over a fixed array
// with a fixed hash, deletion shifting the probe run back, instead of a Go
// map, which under a steady stream of evictions now and then grows and
// allocates. Nothing is iterated in an order the runtime chooses, so the
// same calls give the same answers and counts (CacheStats: hits, misses,
// evictions). A point with a NaN feature has no cell.
//
// # A network to time
//
// Synthetic builds a network of the trained one's shape, node for node,
// with seeded random weights: the profile stage runs before any network
// is trained, and times Eval on it at each decision batch size, so that
// the schedule stage charges each batch of decisions a draw from what
// this serving path took (schedule.learned.cost: profile). A call's cost
// depends on the graph and the batch, not on the weights.
//
// # Costs
//
// The package's benchmarks time each path a decision takes (an uncached
// decision and a batch of 32, through onnxruntime and in Go, the Go
// forward pass with each kernel, a cache hit, Standardize and Key):
//
//	go test -run '^$' -bench . -count 5 ./stages/lib/placementnet
//
// The targets are 20 µs p50 and 100 µs p99 for an uncached decision, 2 µs
// a decision in batches of 32, and 200 ns a hit; docs/benchmarks.md has
// the measured figures.
//
// # Concurrency
//
// Every Evaluator and Cache is used by one goroutine at a time;
// simulations that run at once each hold their own.
package placementnet
