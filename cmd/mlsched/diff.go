package main

import "github.com/spf13/cobra"

// diffCmd is mlsched diff in both builds. It reads metrics.parquet, and
// the Parquet reader and the report's formats it links would add about
// half to the start-up of every command of the lean build (a cached run
// included; docs/benchmarks.md): the lean build hands it to the full one,
// as it does push and pull (see lean.go).
func (a *app) diffCmd() *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "diff [A] [B]",
		Short: "Set two runs side by side: the stages and config keys that differ, and each policy's headline numbers with intervals",
		Long: `Diff sets two runs of the pipeline side by side, as the store keeps them:
the stages whose versions differ and why (the config keys with their old
and new values, code, seed or input files), walked up from evaluate to
schedule, train, generate and profile; then, for each policy of both
runs, its headline numbers (mean and P99 end-to-end latency, SLO
violations, interactive SLO violations, goodput, sustained load) in A and
in B with their intervals, and B − A with its interval.

A and B are each one of
  VERSION or evaluate@VERSION  an evaluate version in the store (a unique prefix is enough)
  FILE.lock                    the evaluate version a lock file records, in the store it names
  CONFIG (FILE.yaml)           the config's last run: the evaluate version in its lock file,
                               FILE.lock beside it, in the config's store
Without B, B is the config's current evaluate version (the one its lock
file records, else the newest); without A either, A and B are the two
newest evaluate versions in the store, the older as A.

Two runs are independent experiments, so B − A's interval combines A's
and B's half-widths in quadrature (the normal approximation; it is no
narrower than Welch's two-sample interval when both runs have as many
replications). "better" or "worse" is said only where that interval
excludes zero. A number that has no interval in A or B is shown without
one, and the notes say so; so is every difference when the runs'
evaluate.confidence differ.

--markdown writes the same as Markdown, for a pull request. An argument
that names no run is a usage error (exit 2); a run whose metrics.parquet
is missing or damaged fails (exit 1). Diff writes nothing.`,
		Args: cobra.MaximumNArgs(2),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			return a.diff(args, markdown)
		}),
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "write Markdown, for a pull request, instead of a table for the terminal")
	return cmd
}
