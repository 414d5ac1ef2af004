package opcost

import (
	"reflect"
	"strings"
	"testing"
)

// TestRowsRoundTrip writes two configurations' nodes as operators.parquet
// rows and reads them back whole; rows out of order or naming a node that
// is not there are refused, naming the row.
func TestRowsRoundTrip(t *testing.T) {
	a, b := lawSample("m0", 1, 1, 2, 32), lawSample("m1", 4, 2, 1, 16)
	// lawSample's nodes each follow the one before.
	for _, s := range []*Sample{&a, &b} {
		for i := range s.Ops {
			s.Ops[i].Name = s.Ops[i].Op + "_" + string(rune('a'+i))
			if s.Ops[i].After != "" {
				s.Ops[i].From = i
			}
		}
	}
	ca := Config{Device: "cpu", Model: "m0", Precision: "fp32", Batch: 1, Threads: 1}
	cb := Config{Device: "cpu", Model: "m1", Precision: "fp32", Batch: 4, Threads: 2}
	rows := append(Rows(ca, a.Ops), Rows(cb, b.Ops)...)
	cs, ops, err := FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cs, []Config{ca, cb}) || !reflect.DeepEqual(ops[0], a.Ops) || !reflect.DeepEqual(ops[1], b.Ops) {
		t.Errorf("FromRows(Rows) = %+v, %+v; want the configurations and nodes written", cs, ops)
	}
	for _, tt := range []struct {
		name string
		edit func()
		want string
	}{
		{"a row left out", func() { rows = append(rows[:1:1], rows[2:]...) }, "row 2"},
		{"after a node that is another", func() { rows[2].After = "Gemm" }, `after "Gemm", but node 1 is a Relu`},
		{"from a later node", func() { rows[1].From = 5 }, "from 5"},
		{"a negative time", func() { rows[0].TimeS = -1 }, "time_s -1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows = append(Rows(ca, a.Ops), Rows(cb, b.Ops)...)
			tt.edit()
			if _, _, err := FromRows(rows); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FromRows: %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
