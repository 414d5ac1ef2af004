package predictorfit

import (
	"fmt"
	"os"
	"testing"
)

// TestPrintScores prints the score table (go test -run PrintScores -v -print).
func TestPrintScores(t *testing.T) {
	if os.Getenv("PREDICTOR_PRINT") == "" {
		t.Skip("set PREDICTOR_PRINT=1 to print the scores")
	}
	r := trained(t)
	fmt.Println("chosen:", r.Model.Kind())
	for _, s := range r.Scores {
		fmt.Printf("%-20s %-10s %-26s %.4g\n", s.Split, s.Candidate, s.Metric, s.Value)
	}
	for _, tm := range r.Timings {
		fmt.Printf("timing %-20s %-10s fits %d train %.4gs predict %.3gs/row\n", tm.Split, tm.Candidate, tm.Fits, tm.TrainS, tm.PredictSPerRow)
	}
	for _, im := range r.Importances {
		fmt.Printf("importance %-10s %-8s %-28s %.4g\n", im.Candidate, im.Level, im.Input, im.LogErrorIncrease)
	}
}
