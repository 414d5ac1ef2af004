package evaluate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// Provenance describes the run for the report's reproducibility section
// (section.Provenance, which every section can read).
type Provenance = section.Provenance

// Upstream is an artifact the report rests on, as its manifest records
// it: its stage and version, its section of the configuration as canonical
// JSON, and the notes its run left (the profile's machine).
type Upstream struct {
	Stage, Version string
	Config         []byte
	Notes          map[string]string
}

// NewProvenance says what the report of evaluate's version rests on: the
// upstreams' versions, the profiled machine, the configuration (evaluate's
// own section, the seed and each upstream's section as it was used) and the
// commands that reproduce it. The runner puts all of it in evaluate's key:
// the upstreams' versions enter it (pipeline.Stage.ShowsUpstreams), and a
// version's configuration is part of its key.
func NewProvenance(version string, seed int64, own Config, ups []Upstream) (Provenance, error) {
	prov := Provenance{Versions: []string{"evaluate@" + version}}
	var lines []string
	for _, u := range ups {
		prov.Versions = append(prov.Versions, u.Stage+"@"+u.Version)
		if u.Stage == "profile" {
			prov.Machine = u.Notes
			prov.Commands = append(prov.Commands, "mlsched pin profile "+u.Version+"   # the measured profile this report rests on")
		}
		l, err := config.Lines(u.Stage+".", u.Config)
		if err != nil {
			return prov, fmt.Errorf("%s@%s: config in manifest: %w", u.Stage, u.Version, err)
		}
		lines = append(lines, l...)
	}
	b, err := config.Canonical(own)
	if err != nil {
		return prov, err
	}
	l, err := config.Lines("evaluate.", b)
	if err != nil {
		return prov, err
	}
	lines = append(append(lines, l...), fmt.Sprintf("seed = %d", seed))
	slices.Sort(lines)
	slices.Sort(prov.Versions[1:])
	prov.Config = strings.Join(lines, "\n") + "\n"
	prov.Commands = append(prov.Commands, "mlsched run                                   # with this pipeline.yaml")
	return prov, nil
}

// provenanceSection is the report's last: the artifacts it rests on, the
// profiled machine, the commands that reproduce it and the configuration,
// as the runner gives them (Output.Provenance).
type provenanceSection struct{}

var _ section.Section = provenanceSection{}

func (provenanceSection) Name() string { return "provenance" }

// Read reads nothing: the provenance is the runner's.
func (provenanceSection) Read(*section.Evaluation) error { return nil }

// Rows are none: the provenance has no numbers.
func (provenanceSection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render lists the provenance.
func (provenanceSection) Render(ev *section.Evaluation) (report.Section, error) {
	var b strings.Builder
	b.WriteString("Artifacts:\n\n")
	for _, v := range ev.Provenance.Versions {
		fmt.Fprintf(&b, "- %s\n", report.Code(v))
	}
	if len(ev.Provenance.Machine) > 0 {
		b.WriteString("\nMachine profiled:\n\n")
		t := report.NewTable("property", "value")
		for _, k := range slices.Sorted(maps.Keys(ev.Provenance.Machine)) {
			t.Add(report.Escape(k), report.Escape(ev.Provenance.Machine[k]))
		}
		b.WriteString(t.String())
	}
	if len(ev.Provenance.Commands) > 0 {
		b.WriteString("\nTo reproduce:\n\n" + report.Fence("", strings.Join(ev.Provenance.Commands, "\n")))
	}
	if ev.Provenance.Config != "" {
		b.WriteString("\nConfiguration as used:\n\n" + report.Fence("yaml", strings.TrimRight(ev.Provenance.Config, "\n")))
	}
	return report.Section{Title: "Provenance", Markdown: b.String()}, nil
}
