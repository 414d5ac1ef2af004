package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	var withRemote bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Re-hash every stored file; exit 1 naming each damaged one (--remote: and each version the remote holds with other output)",
		Long: `Verify re-hashes every file of every stored version and memo entry, and
names each that no longer matches its manifest.

With --remote it then reads the remote's manifest of every stored version
and compares the outputs. A stage that does not measure the machine makes
the same output from the same key wherever it runs, so two outputs of one
version are a conflict: one copy was made by other code than the key names
(a machine built from another commit) or by a nondeterministic stage. A
stage that measures the machine (the profile, real runs) differs rightly,
and verify says so without failing.`,
		Args: cobra.NoArgs,
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
			if withRemote {
				return a.compareRemote(cmd.Context(), l)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&withRemote, "remote", false, "also compare every stored version with the config's remote's copy")
	return cmd
}

func (a *app) gcCmd() *cobra.Command {
	var keep int
	var dryRun, verbose bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove the stored versions and memo entries nothing keeps: no lock file names them, nor are they the newest N or what a kept version was made from",
		Long: `gc removes the stored versions that nothing keeps, and the memo entries no
kept version used. Kept are the versions any lock file of the store names
(this config's, and every other config's beside it or in the store), the
newest N of each stage (--keep), and every version a kept one was made
from or compares with, however far back. It says what it will remove, by
stage, before it removes anything; --verbose lists every version and entry.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if keep < 0 {
				return usageError{fmt.Errorf("--keep %d: want 0 or more", keep)}
			}
			l, err := a.load()
			if err != nil {
				return err
			}
			verb := "removing"
			if dryRun {
				verb = "would remove"
			}
			removed, err := l.p.GC(cmd.Context(), pipeline.GCOptions{Keep: keep, DryRun: dryRun, Plan: func(plan pipeline.GCPlan) {
				a.gcPlan(plan, keep, verb, verbose)
			}})
			if err != nil {
				return err
			}
			var total int64
			var versions, memos int
			for _, r := range removed {
				total += r.Bytes
				if r.Memo {
					memos++
				} else {
					versions++
				}
			}
			verb = "Removed"
			if dryRun {
				verb = "Would remove"
			}
			fmt.Fprintf(a.stdout, "%s %d version(s) and %d memo entries, %s\n", verb, versions, memos, formatBytes(total))
			return nil
		}),
	}
	cmd.Flags().IntVar(&keep, "keep", 1, "also keep the newest `N` versions of each stage")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say what would be removed")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every version and memo entry removed, not only the counts by stage")
	return cmd
}

// gcPlan says what gc goes by and what it is about to remove, before it
// removes anything: the lock files it kept, then the count and bytes of
// versions and of memo entries by stage (a store holds hundreds of memo
// entries, which a line each would bury), and with verbose every one.
func (a *app) gcPlan(plan pipeline.GCPlan, keep int, verb string, verbose bool) {
	var locks []string
	for _, p := range plan.Locks {
		locks = append(locks, displayPath(p))
	}
	names := "name"
	if len(locks) == 1 {
		names = "names"
	}
	kept := []string{fmt.Sprintf("what %s %s", andList(locks), names)}
	if keep > 0 {
		kept = append(kept, fmt.Sprintf("the newest %d version(s) of each stage", keep))
	}
	fmt.Fprintf(a.stdout, "gc: keeping %s, and every version they were made from or compare with\n", strings.Join(kept, ", "))
	type tally struct {
		n     int
		bytes int64
	}
	for _, memo := range []bool{false, true} {
		by := map[string]*tally{}
		var all tally
		for _, r := range plan.Remove {
			if r.Memo != memo {
				continue
			}
			t := by[r.Stage]
			if t == nil {
				t = &tally{}
				by[r.Stage] = t
			}
			t.n++
			t.bytes += r.Bytes
			all.n++
			all.bytes += r.Bytes
		}
		what, unit := "version(s)", "version(s)"
		if memo {
			what, unit = "memo entries", "entries"
		}
		if all.n == 0 {
			continue
		}
		fmt.Fprintf(a.stdout, "%s %d %s, %s:\n", verb, all.n, what, formatBytes(all.bytes))
		for _, st := range slices.Sorted(maps.Keys(by)) {
			fmt.Fprintf(a.stdout, "  %-10s %5d %-10s %10s\n", st, by[st].n, unit, formatBytes(by[st].bytes))
		}
	}
	if !verbose {
		return
	}
	for _, r := range plan.Remove {
		if r.Memo {
			fmt.Fprintf(a.stdout, "%s %s memo entry %s (%s)\n", verb, r.Stage, r.Version, formatBytes(r.Bytes))
			continue
		}
		fmt.Fprintf(a.stdout, "%s %s@%s (%s)\n", verb, r.Stage, r.Version, formatBytes(r.Bytes))
	}
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b
// and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// displayPath is path as a user here would type it: relative to the
// working directory when below it, else absolute.
func displayPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return abs
}
