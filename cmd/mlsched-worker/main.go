// Command mlsched-worker runs one stage of the mlsched pipeline for the
// mlsched command, which starts it, beside itself, whenever a stage must
// run: mlsched links only the runner and the stages' declarations, and
// starts at once; this program links the stages' code. It reads the
// stage's task as JSON on its standard input and answers on its standard
// output (see package pipeline's Serve); it is not meant to be run by hand.
// A stage that brings its process down (a fault in onnxruntime's C code,
// say) fails alone, and the store stays as it was.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: mlsched-worker stage < task.json

mlsched-worker runs one stage of the mlsched pipeline for the mlsched
command, which starts it whenever a stage must run. It is not meant to be
run by hand: use 'mlsched run'.
`

func main() {
	if len(os.Args) != 2 || os.Args[1] != "stage" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// mlsched interrupts its workers when it is interrupted; each stage
	// returns promptly with the context's error.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serve(ctx, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlsched-worker: %v\n", err)
		os.Exit(1)
	}
}
