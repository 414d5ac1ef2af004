package evaluate

import (
	"strings"
	"testing"
)

// TestRegistry checks that the registry names every section once, and
// that checkNames refuses a second section of a name and a nameless one.
func TestRegistry(t *testing.T) {
	if err := checkNames(sections()); err != nil {
		t.Fatalf("checkNames(sections()) = %v", err)
	}
	if err := checkNames(append(sections(), policiesSection{})); err == nil || !strings.Contains(err.Error(), `"policies"`) {
		t.Errorf("checkNames with policies twice = %v, want an error naming it", err)
	}
	if err := checkNames(append(sections(), nameless{})); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("checkNames with a nameless section = %v, want an error", err)
	}
}

// nameless is a section without a name.
type nameless struct{ provenanceSection }

func (nameless) Name() string { return "" }
