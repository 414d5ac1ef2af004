package ident

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"cpu", true},
		{"accel", true},
		{"A100-80GB", true},
		{"gpu.0", true},
		{"node_7", true},
		{"cuda:0", true},
		{"0", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"a|b", false},
		{"<script>alert(1)</script>", false},
		{"a b", false},
		{"-rf", false},
		{".hidden", false},
		{"_x", false},
		{"a/b", false},
		{"a\nb", false},
		{"a`b", false},
		{"gpu\u00a0", false},
		{"ünï", false},
	}
	for _, tt := range tests {
		err := Check(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), Rule) {
			t.Errorf("Check(%q) = %q, which does not state the rule", tt.name, err)
		}
	}
}
