// Package section is the contract between the evaluate stage and the
// sections of its report. A section is one part of report.md, a heading
// and what is under it: it reads what it alone needs of the upstream
// artifacts, adds its numbers to metrics.parquet and renders its Markdown
// and charts. What several sections read (the simulations' summaries and
// their differences, the cluster, the bounds, where the artifacts are) the
// stage reads once and hands to every section as an Evaluation; sections
// never import each other, so what two of them share lives here.
//
// The stage takes every section of its registry (package evaluate's
// sections, one line each, in the report's order) through the same
// steps, each step for all of them before the next:
//
//  1. Read, once the simulations are summarized: the section's own files.
//  2. For a Comparer, Pairs and then Compared: the policies it sets
//     against each other, compared as the baselines are (Analysis.Paired).
//  3. Rows: its rows of metrics.parquet, which OrderRows lays out by
//     scope; an Annotator then sees all of them before they are written.
//  4. Render: its part of the report, or nothing in this run.
//
// A section's errors name the file, note or row at fault; the stage adds
// its own prefix.
package section
