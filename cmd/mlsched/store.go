package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
)

func (a *app) pinCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pin STAGE [VERSION]",
		Short: "Pin a stage to a stored version: it is never rerun, whatever changes",
		Long: `Pin fixes a stage to a stored version (default: the one in pipeline.lock, or
the newest). A pinned stage is never rerun, and its pinned version feeds the
stages downstream; status shows when its config now differs. Pin the
profile of a machine so that every later result is reproducible to the byte.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args[:1])
			if err != nil {
				return err
			}
			ver := ""
			if len(args) == 2 {
				ver = args[1]
			}
			v, err := l.p.Pin(cmd.Context(), args[0], ver)
			if errors.Is(err, pipeline.ErrNotFound) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "pinned %s@%s\n", args[0], v)
			return nil
		}),
	}
}

func (a *app) unpinCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unpin STAGE",
		Short: "Unpin a stage, so that it reruns when its inputs change",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args)
			if err != nil {
				return err
			}
			if err := l.p.Unpin(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "unpinned %s\n", args[0])
			return nil
		}),
	}
}

func (a *app) verifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Re-hash every stored file; exit 1 naming each damaged one",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.load()
			if err != nil {
				return err
			}
			problems, n, err := l.p.Verify(cmd.Context())
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintln(a.stdout, "DAMAGED", p)
			}
			if len(problems) > 0 {
				return fmt.Errorf("verify: %d problem(s) in %s", len(problems), l.p.Store.Location())
			}
			fmt.Fprintf(a.stdout, "verified %d file(s) in %s: all intact\n", n, l.p.Store.Location())
			return nil
		}),
	}
}

func (a *app) gcCmd() *cobra.Command {
	var keep int
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove stored versions that pipeline.lock, the newest N per stage and the versions they compare with do not reference, and unused memo entries",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if keep < 0 {
				return usageError{fmt.Errorf("--keep %d: want 0 or more", keep)}
			}
			l, err := a.load()
			if err != nil {
				return err
			}
			removed, err := l.p.GC(cmd.Context(), keep, dryRun)
			var total int64
			var versions, memos int
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, r := range removed {
				total += r.Bytes
				if r.Memo {
					memos++
					fmt.Fprintf(a.stdout, "%s %s memo entry %s (%s)\n", verb, r.Stage, r.Version, formatBytes(r.Bytes))
					continue
				}
				versions++
				fmt.Fprintf(a.stdout, "%s %s@%s (%s)\n", verb, r.Stage, r.Version, formatBytes(r.Bytes))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s %d version(s) and %d memo entries, %s\n", strings.ToUpper(verb[:1])+verb[1:], versions, memos, formatBytes(total))
			return nil
		}),
	}
	cmd.Flags().IntVar(&keep, "keep", 1, "also keep the newest `N` versions of each stage")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	return cmd
}
