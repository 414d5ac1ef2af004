package evaluate

import (
	"fmt"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/fidelity"
	"github.com/mlsched/mlsched/stages/evaluate/learned"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// sections is the report's registry: every section, one line each, in the
// order the report shows them. A report gets its own values, which keep
// what they read. Three pairs of sections show one thing read once: the
// summary states the capacity the load sweep's section reads, and warns
// of a busy machine as the profile's section read it, and the
// predictor's and the placement network's sections show one train
// artifact.
func sections() []section.Section {
	sweep := &sweepSection{}
	profile := &profileSection{}
	train := &trainArtifact{}
	return []section.Section{
		&summarySection{sweep: sweep, profile: profile},
		policiesSection{},
		baselinesSection{},
		latencySection{},
		classSection{},
		&devicesSection{},
		sweep,
		&fidelity.Section{},
		profile,
		&predictorSection{train: train},
		&placementSection{train: train},
		&learned.Section{},
		&changeSection{},
		provenanceSection{},
	}
}

// checkNames refuses a registry with a nameless section or two of one
// name: the stage's errors and the registry's readers go by the names.
func checkNames(secs []section.Section) error {
	seen := map[string]bool{}
	for i, s := range secs {
		switch n := s.Name(); {
		case n == "":
			return fmt.Errorf("section %d of the registry has no name", i+1)
		case seen[n]:
			return fmt.Errorf("two sections of the registry are named %q", n)
		default:
			seen[n] = true
		}
	}
	return nil
}

// document renders every section into the report, in the registry's
// order, leaving out those with nothing to say in this run.
func document(ev *section.Evaluation, secs []section.Section) (*report.Document, error) {
	doc := &report.Document{Title: "mlsched evaluation", Intro: intro(ev)}
	var leads []string
	for _, s := range secs {
		if l, ok := s.(leader); ok {
			if lead := l.Lead(ev); lead != "" {
				leads = append(leads, lead)
			}
		}
		sec, err := s.Render(ev)
		if err != nil {
			return nil, err
		}
		if sec.Title == "" {
			continue // nothing to say in this run
		}
		doc.Sections = append(doc.Sections, sec)
	}
	doc.Lead = strings.Join(leads, "\n\n")
	return doc, nil
}

// leader is a section that also has something for the report's top,
// under its title: what a reader acts on, before the method and the
// contents.
type leader interface {
	Lead(ev *section.Evaluation) string
}

// intro is the report's first paragraph: what was simulated, at what
// offered load (as a fraction of capacity and in jobs per second), and how
// every interval was computed.
func intro(ev *section.Evaluation) string {
	reps := "one replication"
	if ev.Replications > 1 {
		reps = fmt.Sprintf("%d replications", ev.Replications)
	}
	var jobs, rate float64
	for _, b := range ev.BoundsRows {
		jobs += float64(b.Jobs)
		if b.LastArrivalS > 0 {
			rate += float64(b.Jobs) / b.LastArrivalS
		}
	}
	n := float64(max(len(ev.BoundsRows), 1))
	load := ""
	if offered := offeredLoad(ev); offered > 0 {
		load = fmt.Sprintf(", offered at %s of the cluster's capacity (%s jobs/s)", report.Pct(offered), report.Num(rate/n))
	}
	shared := ""
	if ev.SharedWorkload {
		shared = " The replications share one eval workload (imported: one sample of the world), so only their draws and placements vary, and the intervals say nothing of other workloads."
	}
	return fmt.Sprintf("%d policies simulated in %s of about %.0f eval jobs each%s, on a cluster of %s. %s%s "+
		"A difference whose interval contains zero is reported as no difference.",
		len(ev.Policies), reps, jobs/n, load, section.ClusterText(ev.Devices), ev.Analysis.Method(ev.Policies), shared)
}

// offeredLoad is the main comparison's offered load as a fraction of the
// cluster's capacity (the sweep's definition), the mean over the
// replications' workloads; 0 where schedule did not record it.
func offeredLoad(ev *section.Evaluation) float64 {
	var offered float64
	for _, b := range ev.BoundsRows {
		offered += b.OfferedLoad
	}
	return offered / float64(max(len(ev.BoundsRows), 1))
}
