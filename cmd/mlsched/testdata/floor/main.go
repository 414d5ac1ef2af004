// Command floor does nothing: BenchmarkProcessFloor times starting and
// ending it, the least any Go command costs on this machine, for
// comparison with BenchmarkCachedRun.
package main

import "os"

func main() { os.Stdout.WriteString("cached\n") }
