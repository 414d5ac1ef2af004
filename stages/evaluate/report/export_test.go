package report

// TestDoc is the fixed document the tests render, for the external tests
// (golden_test.go), which import package golden, which imports this
// package.
var TestDoc = testDoc
