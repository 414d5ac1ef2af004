package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// The options a policy spec may add to a policy, in the order a spec
// writes them.
const (
	OptBatch   = "batch"
	OptSplit   = "split"
	OptMigrate = "migrate"
)

var options = []string{OptBatch, OptSplit, OptMigrate}

// Spec is a policy with a placement and options, written "name",
// "name@placement" or either with "+opt+opt" after, e.g. "edf+batch",
// "fifo@backlog" or "greedy+split+migrate": a naive placement (backlog,
// round_robin, random) replaces the policy's predicted earliest finish;
// batch turns micro-batching on, split divides large jobs across devices,
// migrate lets idle devices take waiting jobs. A spec names one
// simulation and its output directory.
type Spec struct {
	Name string
	// Placement is a naive placement's name (PlaceBacklog, …), empty for
	// the policy's own.
	Placement string
	// Batch is true when the simulation micro-batches: asked for, or
	// implied by a policy that always batches.
	Batch          bool
	Split, Migrate bool
}

// ParseSpec reads a policy spec, checking that the policy exists, that each
// option is known, given once and in order, and that the policy supports
// it.
func ParseSpec(s string) (Spec, error) {
	parts := strings.Split(s, "+")
	name, place, placed := strings.Cut(parts[0], "@")
	e, ok := registry[name]
	if !ok {
		return Spec{}, fmt.Errorf("unknown policy %q; the policies are %s", name, strings.Join(Names(), ", "))
	}
	sp := Spec{Name: name, Placement: place, Batch: e.batches}
	if placed {
		switch _, known := placements[place]; {
		case !e.places:
			return Spec{}, fmt.Errorf("%q: %s is itself a placement; only the policies that place by predicted earliest finish take @placement (%s)", s, name, strings.Join(placers(), ", "))
		case !known:
			return Spec{}, fmt.Errorf("%q: unknown placement %q; the placements are %s (the policy's own, predicted earliest finish, has no name: leave @ out)", s, place, strings.Join(Placements(), ", "))
		}
	}
	next := 0 // options must come in the order of options
	for _, o := range parts[1:] {
		i := slices.Index(options, o)
		switch {
		case i < 0:
			return Spec{}, fmt.Errorf("%q: unknown option %q; the options are %s", s, o, strings.Join(options, ", "))
		case i < next:
			return Spec{}, fmt.Errorf("%q: option %q repeated or out of order; write them in the order %s", s, o, strings.Join(options, ", "))
		}
		next = i + 1
		switch o {
		case OptBatch:
			if e.batches {
				return Spec{}, fmt.Errorf("%q: %s always batches; drop +%s", s, sp.Name, OptBatch)
			}
			sp.Batch = true
		case OptSplit:
			if _, ok := e.build(Options{}).(sim.Splitter); !ok {
				return Spec{}, fmt.Errorf("%q: %s does not split jobs (%s do)", s, sp.Name, strings.Join(splitters(), ", "))
			}
			sp.Split = true
		case OptMigrate:
			if e.learned {
				return Spec{}, fmt.Errorf("%q: %s migrates by its network; drop +%s", s, sp.Name, OptMigrate)
			}
			sp.Migrate = true
		}
	}
	return sp, nil
}

// placers lists the policies that take a naive placement.
func placers() []string {
	var out []string
	for _, n := range Names() {
		if registry[n].places {
			out = append(out, n)
		}
	}
	return out
}

// splitters lists the policies that split jobs.
func splitters() []string {
	var out []string
	for _, n := range Names() {
		if _, ok := registry[n].build(Options{}).(sim.Splitter); ok {
			out = append(out, n)
		}
	}
	return out
}

// String writes the spec back, with its options in order; a policy that
// always batches is written without +batch.
func (sp Spec) String() string {
	s := sp.Name
	if sp.Placement != "" {
		s += "@" + sp.Placement
	}
	if sp.Batch && !registry[sp.Name].batches {
		s += "+" + OptBatch
	}
	if sp.Split {
		s += "+" + OptSplit
	}
	if sp.Migrate {
		s += "+" + OptMigrate
	}
	return s
}

// Settings are the parameters of the options, from the stage's config.
type Settings struct {
	Batching sim.Batching
	Split    sim.Split
	// MigrationCost is a move's transit time and MinGain the Threshold
	// rule's, seconds.
	MigrationCost, MinGain float64
	// Learned makes a learned policy's migration rule, one per simulation
	// (it holds an onnxruntime session and a cache); nil where no network
	// is loaded.
	Learned func() (sim.Migrator, error)
	// Serving is how the learned rule's decisions are served: their
	// latency, batch and window (sim.Migration's fields of those names).
	Serving Serving
}

// Serving is how decisions reach a learned migration rule.
type Serving struct {
	// Latency is a batch of n decisions' time to answer; nil answers at
	// once, inside the event that asks.
	Latency func(n int) float64
	Batch   int
	Window  float64
}

// Learned reports whether the spec's migrations are the network's.
func (sp Spec) Learned() bool { return registry[sp.Name].learned }

// Counterparts are a learned spec's comparisons: the same placement and
// order and options with the Threshold rule deciding the migrations
// (+migrate), and with no migration at all. ok is false for a spec that is
// not learned.
func (sp Spec) Counterparts() (threshold, none Spec, ok bool) {
	if !sp.Learned() {
		return Spec{}, Spec{}, false
	}
	none = Spec{Name: LearnedBase, Placement: sp.Placement, Batch: sp.Batch, Split: sp.Split}
	threshold = none
	threshold.Migrate = true
	return threshold, none, true
}

// Predicts reports whether the spec's simulation reads predicted service
// times: its placement does (earliest finish or backlog), or its policy's
// other choices, or its splitting or migration rule.
func (sp Spec) Predicts() bool {
	e := registry[sp.Name]
	places := e.places && (sp.Placement == "" || placements[sp.Placement].predicts)
	return e.predicts || places || sp.Split || sp.Migrates()
}

// Placer is the spec's naive placement, built with o (whose Seed a random
// placement draws from), or nil where the policy places by its own rule.
func (sp Spec) Placer(o Options) sim.Placer {
	if p, ok := placements[sp.Placement]; ok {
		return p.build(o)
	}
	return nil
}

// Migrates reports whether the spec's simulation moves waiting jobs: by
// the Threshold rule (+migrate) or by the network (a learned policy).
func (sp Spec) Migrates() bool { return sp.Migrate || sp.Learned() }

// Reads are the settings a spec's simulation reads, each true where it
// reads the Settings or Options field of that name: what it depends on
// beyond the cluster, the predictions and the seeds, and so all that a key
// of its results needs of them.
type Reads struct {
	// Batching and Split are Settings' (+batch, or a policy that always
	// batches; +split).
	Batching, Split bool
	// MigrationCost is Settings.MigrationCost (a spec that migrates);
	// MinGain is Settings.MinGain, the Threshold rule's (+migrate).
	MigrationCost, MinGain bool
	// Learned is Settings.Learned and Settings.Serving: the network that
	// decides a learned policy's migrations and how it is served.
	Learned bool
	// Weights is Options.Weights (the dynamic policy's).
	Weights bool
}

// Reads says which settings the spec's simulation reads (Configure, and
// New for its policy): a setting it does not read changes nothing of it.
func (sp Spec) Reads() Reads {
	return Reads{
		Batching:      sp.Batch,
		Split:         sp.Split,
		MigrationCost: sp.Migrates(),
		MinGain:       sp.Migrate,
		Learned:       sp.Learned(),
		Weights:       registry[sp.Name].weighted,
	}
}

// Configure turns on in cfg the options the spec asks for. A learned
// policy without Settings.Learned is an error.
func (sp Spec) Configure(cfg *sim.Config, st Settings) error {
	if sp.Batch {
		cfg.Batching = st.Batching
	}
	if sp.Split {
		cfg.Split = st.Split
	}
	if sp.Migrate {
		cfg.Migration = sim.Migration{Decide: Threshold{MinGain: st.MinGain}, Cost: st.MigrationCost}
	}
	if sp.Learned() {
		if st.Learned == nil {
			return fmt.Errorf("%s: no placement network to decide its migrations", sp)
		}
		m, err := st.Learned()
		if err != nil {
			return fmt.Errorf("%s: %w", sp, err)
		}
		v := st.Serving
		cfg.Migration = sim.Migration{Decide: m, Cost: st.MigrationCost, Latency: v.Latency, Batch: v.Batch, Window: v.Window}
	}
	return nil
}
