package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
)

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [STAGE...]",
		Short: "Show which stages are up-to-date, stale, missing or pinned, and why",
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args)
			if err != nil {
				return err
			}
			sts, err := l.p.Status(args)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(sts)
			}
			for _, s := range sts {
				fmt.Fprintf(a.stdout, "%-10s %-11s %s\n", s.Stage, s.State, shortVersion(s.Version))
				for _, r := range s.Reasons {
					fmt.Fprintf(a.stdout, "    %s\n", r)
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON list of {stage, state, version, reasons}")
	return cmd
}

func (a *app) dagCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "dag",
		Short: "Print the stage graph (text, dot or mermaid)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.load()
			if err != nil {
				return err
			}
			g := l.p.Graph
			switch format {
			case "text":
				for _, n := range g.Names() {
					if deps := g.Stage(n).Deps; len(deps) > 0 {
						fmt.Fprintf(a.stdout, "%s <- %s\n", n, strings.Join(deps, ", "))
					} else {
						fmt.Fprintln(a.stdout, n)
					}
				}
			case "dot":
				fmt.Fprintln(a.stdout, "digraph mlsched {\n  rankdir=LR;\n  node [shape=box];")
				for _, n := range g.Names() {
					fmt.Fprintf(a.stdout, "  %q;\n", n)
				}
				for _, e := range g.Edges() {
					fmt.Fprintf(a.stdout, "  %q -> %q;\n", e[0], e[1])
				}
				fmt.Fprintln(a.stdout, "}")
			case "mermaid":
				fmt.Fprintln(a.stdout, "graph LR")
				for _, n := range g.Names() {
					fmt.Fprintf(a.stdout, "  %s\n", n)
				}
				for _, e := range g.Edges() {
					fmt.Fprintf(a.stdout, "  %s --> %s\n", e[0], e[1])
				}
			default:
				return usageError{fmt.Errorf("--format %q: want text, dot or mermaid", format)}
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&format, "format", "text", "output `format`: text, dot or mermaid")
	return cmd
}

func (a *app) lsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls [STAGE]",
		Short: "List stored versions (* = in pipeline.lock, P = pinned)",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args)
			if err != nil {
				return err
			}
			names := args
			if len(names) == 0 {
				names = l.p.Graph.Names()
			}
			lock, err := l.p.ReadLock()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STAGE\tVERSION\t\tCREATED\tDURATION\tFILES\tSIZE")
			var unreadable []pipeline.Problem
			for _, n := range names {
				vs, err := l.p.Store.Versions(n)
				if err != nil {
					return err
				}
				bad, err := l.p.Store.Unreadable(n)
				if err != nil {
					return err
				}
				unreadable = append(unreadable, bad...)
				for _, m := range vs {
					mark := ""
					if e, ok := lock.Stages[n]; ok && e.Version == m.Version {
						mark = "*"
						if e.Pinned {
							mark = "* P"
						}
					}
					var size int64
					for _, f := range m.Files {
						size += f.Size
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", n, m.Version, mark, m.Created.Local().Format(time.DateTime),
						formatDuration(time.Duration(m.Duration*float64(time.Second))), len(m.Files), formatBytes(size))
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// A version whose manifest is damaged is named, not left out.
			for _, p := range unreadable {
				fmt.Fprintf(a.stdout, "UNREADABLE %s\n", p)
			}
			if len(unreadable) > 0 {
				fmt.Fprintln(a.stdout, "('mlsched verify' checks the whole store; 'mlsched run --force STAGE' rebuilds a stage's current version)")
			}
			return nil
		}),
	}
}

func (a *app) showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show STAGE[@VERSION]",
		Short: "Show a version: files, sizes, row counts, inputs and the config used",
		Long: `Show describes one stored version. Without @VERSION it shows the version
recorded in pipeline.lock, or else the newest; a unique prefix is enough.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			stage, ver, _ := strings.Cut(args[0], "@")
			l, err := a.loadFor([]string{stage})
			if err != nil {
				return err
			}
			m, err := a.resolve(l.p, stage, ver)
			if err != nil {
				return err
			}
			dir, err := l.p.Store.Open(m.Stage, m.Version)
			if err != nil {
				return err
			}
			w := a.stdout
			fmt.Fprintf(w, "%s@%s\n", m.Stage, m.Version)
			fmt.Fprintf(w, "  dir      %s\n", dir)
			fmt.Fprintf(w, "  created  %s (took %s)\n", m.Created.Local().Format(time.RFC3339), formatDuration(time.Duration(m.Duration*float64(time.Second))))
			fmt.Fprintf(w, "  tool     %s\n", m.Tool)
			fmt.Fprintf(w, "  key      %s\n", m.Key)
			fmt.Fprintf(w, "  output   %s\n", m.Output)
			fmt.Fprintf(w, "  code     %s\n", m.Inputs.Code)
			if m.Inputs.Salt != "" {
				fmt.Fprintf(w, "  salt     %s\n", m.Inputs.Salt)
			}
			if m.Inputs.Seed != nil {
				fmt.Fprintf(w, "  seed     %d\n", *m.Inputs.Seed)
			}
			for _, u := range m.Inputs.Upstream {
				fmt.Fprintf(w, "  input    %s@%s (output %s)\n", u.Stage, u.Version, u.Output[:16])
			}
			for _, r := range m.Inputs.Refs {
				fmt.Fprintf(w, "  ref      %s (%s)\n", r, r.Key)
			}
			for _, k := range slices.Sorted(maps.Keys(m.Notes)) {
				fmt.Fprintf(w, "  note     %s: %s\n", k, m.Notes[k])
			}
			fmt.Fprintln(w, "files:")
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
			for _, f := range m.Files {
				rows := ""
				if f.Rows >= 0 {
					rows = fmt.Sprintf("%d rows", f.Rows)
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", f.Path, formatBytes(f.Size), rows)
			}
			tw.Flush()
			fmt.Fprintln(w, "config:")
			if err := printFlat(w, "  "+m.Stage+".", m.Inputs.Config); err != nil {
				return fmt.Errorf("%s@%s: config in manifest: %w", m.Stage, m.Version, err)
			}
			return nil
		}),
	}
}

// resolve picks the version show means by STAGE[@VERSION]: the one named,
// or else the current one (pipeline.Pipeline.Current).
func (a *app) resolve(p *pipeline.Pipeline, stage, ver string) (*pipeline.Manifest, error) {
	if ver == "" {
		return p.Current(stage)
	}
	m, err := pipeline.Resolve(p.Store, stage, ver)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, usageError{err} // a version the user named wrong
	}
	return m, err
}

func (a *app) configCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (file, environment and --set merged, defaults filled in)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.load()
			if err != nil {
				return err
			}
			b, err := config.Canonical(l.cfg)
			if err != nil {
				return err
			}
			return printFlat(a.stdout, "", b)
		}),
	}
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mlsched's version",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(a.stdout, "mlsched %s\n", version)
			return nil
		}),
	}
}

// printFlat prints a canonical config as sorted "key = value" lines.
func printFlat(w io.Writer, prefix string, canonical []byte) error {
	lines, err := config.Lines(prefix, canonical)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

func formatBytes(n int64) string { return pipeline.FormatBytes(n) }
