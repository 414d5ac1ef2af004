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

// The ablations of a learned spec, written after ~ ("learned~threshold"):
// the same simulation with one thing changed, so that a comparison with
// the learned spec measures that one thing. Schedule runs them for every
// learned policy (schedule.learned.ablations); they are not policies a
// user would run.
const (
	// AblateThreshold puts the Threshold rule in the network's place and
	// leaves everything else as the learned policy has it: the candidates
	// it is asked about (one for every free lane), the batches and window
	// they are asked in and the time each batch of answers costs. Against
	// it, only the network differs.
	AblateThreshold = "threshold"
	// AblateFree has the network's answers cost nothing on the simulated
	// clock, asked the same way: what the decisions' cost costs.
	AblateFree = "free"
)

var ablations = []string{AblateThreshold, AblateFree}

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
	// Ablation is a learned spec's ablation (AblateThreshold,
	// AblateFree), empty for the policy itself.
	Ablation string
	// Batch is true when the simulation micro-batches: asked for, or
	// implied by a policy that always batches.
	Batch          bool
	Split, Migrate bool
}

// ParseSpec reads a policy spec, checking that the policy exists, that each
// option is known, given once and in order, and that the policy supports
// it.
func ParseSpec(s string) (Spec, error) {
	body, ablation, ablated := strings.Cut(s, "~")
	sp, err := parseBody(s, body)
	if err != nil || !ablated {
		return sp, err
	}
	switch {
	case !registry[sp.Name].learned:
		return Spec{}, fmt.Errorf("%q: only a learned policy has ablations (~%s)", s, strings.Join(ablations, ", ~"))
	case !slices.Contains(ablations, ablation):
		return Spec{}, fmt.Errorf("%q: unknown ablation %q; the ablations are %s", s, ablation, strings.Join(ablations, ", "))
	}
	sp.Ablation = ablation
	return sp, nil
}

// parseBody reads the part of spec s before any ~ablation.
func parseBody(s, body string) (Spec, error) {
	parts := strings.Split(body, "+")
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
	if sp.Ablation != "" {
		s += "~" + sp.Ablation
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
	// Latency is a batch of n decisions' time to answer at the batch's
	// uniform variate u (sim.Migration.Latency); nil answers at once,
	// inside the event that asks.
	Latency func(n int, u float64) float64
	Batch   int
	Window  float64
}

// Learned reports whether the spec's migrations are the network's.
func (sp Spec) Learned() bool { return registry[sp.Name].learned && sp.Ablation != AblateThreshold }

// Served reports whether the spec's migrations are asked as a learned
// policy asks them (Settings.Serving): a learned policy, or its
// ablations.
func (sp Spec) Served() bool { return registry[sp.Name].learned }

// Ablations are a learned spec's ablations, in the order of ablations;
// none for any other spec.
func (sp Spec) Ablations() []Spec {
	if !registry[sp.Name].learned || sp.Ablation != "" {
		return nil
	}
	out := make([]Spec, len(ablations))
	for i, a := range ablations {
		out[i] = sp
		out[i].Ablation = a
	}
	return out
}

// Counterparts are a learned spec's comparisons: the same placement and
// order and options with the Threshold rule deciding the migrations
// (+migrate), and with no migration at all. ok is false for a spec that is
// not learned, or is an ablation.
func (sp Spec) Counterparts() (threshold, none Spec, ok bool) {
	if !sp.Learned() || sp.Ablation != "" {
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
// the Threshold rule (+migrate) or as a learned policy does (the network,
// or an ablation's rule).
func (sp Spec) Migrates() bool { return sp.Migrate || sp.Served() }

// Reads are the settings a spec's simulation reads, each true where it
// reads the Settings or Options field of that name: what it depends on
// beyond the cluster, the predictions and the seeds, and so all that a key
// of its results needs of them.
type Reads struct {
	// Batching and Split are Settings' (+batch, or a policy that always
	// batches; +split).
	Batching, Split bool
	// MigrationCost is Settings.MigrationCost (a spec that migrates);
	// MinGain is Settings.MinGain, the Threshold rule's (+migrate, and a
	// learned spec's ~threshold ablation).
	MigrationCost, MinGain bool
	// Learned is Settings.Learned: the network that decides a learned
	// policy's migrations. Serving is Settings.Serving: how they are asked
	// and what the answers cost.
	Learned, Serving bool
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
		MinGain:       sp.Migrate || sp.Ablation == AblateThreshold,
		Learned:       sp.Learned(),
		Serving:       sp.Served(),
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
	if sp.Served() {
		if st.Learned == nil {
			return fmt.Errorf("%s: no placement network to decide its migrations", sp)
		}
		var m sim.Migrator = Threshold{MinGain: st.MinGain}
		if sp.Learned() {
			var err error
			if m, err = st.Learned(); err != nil {
				return fmt.Errorf("%s: %w", sp, err)
			}
		}
		v := st.Serving
		if sp.Ablation == AblateFree && v.Latency != nil {
			v.Latency = func(int, float64) float64 { return 0 }
		}
		cfg.Migration = sim.Migration{Decide: m, Cost: st.MigrationCost, Latency: v.Latency, Batch: v.Batch, Window: v.Window}
	}
	return nil
}
