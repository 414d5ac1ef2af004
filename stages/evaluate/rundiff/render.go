package rundiff

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mlsched/mlsched/stages/evaluate/report"
)

// changes are a stage's changes as the table shows them: "same" for a
// stage of one version in both runs.
func (s Stage) changes() []string {
	if s.A == s.B && len(s.Changes) == 0 {
		return []string{"same"}
	}
	return s.Changes
}

// Text writes the diff for a terminal: the two runs, a table of the
// stages, a table of the policies' numbers under each policy's name, and
// notes.
func (d *Diff) Text(w io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "A\tevaluate@%s\t%s\n", d.A.Version, d.A.Name)
	fmt.Fprintf(tw, "B\tevaluate@%s\t%s\n", d.B.Version, d.B.Name)
	fmt.Fprintln(tw)
	tw.Flush()
	fmt.Fprintln(tw, "STAGE\tA\tB\tWHAT DIFFERS IN B")
	for _, s := range d.Stages {
		for i, c := range s.changes() {
			if i == 0 {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.A, s.B, c)
			} else {
				fmt.Fprintf(tw, "\t\t\t%s\n", c)
			}
		}
	}
	tw.Flush()
	if len(d.Policies) > 0 {
		fmt.Fprintln(&buf)
		fmt.Fprintln(tw, "POLICY, NUMBER\tA\tB\tB − A\tB VS A")
		for _, p := range d.Policies {
			fmt.Fprintf(tw, "%s\t\t\t\t\n", p.Name)
			for _, n := range p.Numbers {
				a, b, diff := n.Cells()
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", n.Name, a, b, diff, n.Verdict())
			}
		}
		tw.Flush()
	}
	fmt.Fprintln(&buf)
	for _, note := range d.notes(func(s string) string { return s }) {
		fmt.Fprintln(&buf, note)
	}
	// The padding of a row's last cells is no part of it.
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// Markdown writes the diff as Markdown for a pull request: a heading,
// the two runs, the tables and the notes. Every name from the runs goes
// through report.Escape; a significant difference is set in bold.
func (d *Diff) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### evaluate@%s → evaluate@%s\n\n", d.A.Version, d.B.Version)
	fmt.Fprintf(&b, "A is evaluate@%s (%s), B is evaluate@%s (%s).\n\n",
		d.A.Version, report.Escape(d.A.Name), d.B.Version, report.Escape(d.B.Name))
	st := report.NewTable("stage", "A", "B", "what differs in B")
	for _, s := range d.Stages {
		st.Add(report.Escape(s.Name), s.A, s.B, report.Escape(strings.Join(s.changes(), "; ")))
	}
	b.WriteString(st.String())
	if len(d.Policies) > 0 {
		pt := report.NewTable("policy", "number", ">A", ">B", ">B − A", "B vs A")
		for _, p := range d.Policies {
			for i, n := range p.Numbers {
				name := ""
				if i == 0 {
					name = report.Escape(p.Name)
				}
				a, bb, diff := n.Cells()
				if v := n.Verdict(); v == Better || v == Worse {
					diff = "**" + diff + "**"
				}
				pt.Add(name, n.Name, a, bb, diff, n.Verdict())
			}
		}
		b.WriteString("\n" + pt.String())
	}
	for _, note := range d.notes(report.Escape) {
		b.WriteString("\n" + note + "\n")
	}
	return b.String()
}

// notes say how the intervals were made and what the tables leave out,
// names passed through escape.
func (d *Diff) notes(escape func(string) string) []string {
	var out []string
	if d.A.Version == d.B.Version {
		out = append(out, "A and B are the same run.")
	}
	if len(d.Policies) > 0 {
		switch {
		case d.Confidence > 0:
			out = append(out, fmt.Sprintf("Intervals are at %s confidence; B − A's combines A's and B's half-widths in quadrature, the runs being independent (normal approximation). "+
				"B vs A says better or worse where that interval excludes zero, and nothing where it holds zero.", percent(d.Confidence)))
		default:
			out = append(out, fmt.Sprintf("A's intervals are at %s confidence and B's at %s, so their differences get no interval.", percent(d.A.Confidence), percent(d.B.Confidence)))
		}
		if d.has(NoInterval) && d.Confidence > 0 {
			out = append(out, "No interval: A or B gives none for that number (with one replication the P99 and the goodput have none; "+
				"an evaluate version made before intervals were recorded for them has none for the SLO violations and the goodput), so its difference has none.")
		}
		if d.has(Missing) {
			out = append(out, "Not in both: one run has no such number (its load sweep or the interactive class left out).")
		}
	}
	if len(d.OnlyA) > 0 {
		out = append(out, fmt.Sprintf("Only in A: %s.", report.AndList(escapeAll(d.OnlyA, escape))))
	}
	if len(d.OnlyB) > 0 {
		out = append(out, fmt.Sprintf("Only in B: %s.", report.AndList(escapeAll(d.OnlyB, escape))))
	}
	return out
}

// has says whether any number's verdict is v.
func (d *Diff) has(v string) bool {
	for _, p := range d.Policies {
		for _, n := range p.Numbers {
			if n.Verdict() == v {
				return true
			}
		}
	}
	return false
}

// percent writes a confidence as a percentage; "unknown" for 0.
func percent(c float64) string {
	if c <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.3g%%", 100*c)
}

func escapeAll(names []string, escape func(string) string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = escape(n)
	}
	return out
}
