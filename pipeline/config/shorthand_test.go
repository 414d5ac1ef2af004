package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// entry is a list entry with a short form, as a model of a profile is:
// "mlp" for {name: mlp}, a mapping where it names a file too.
type entry struct {
	Name string `koanf:"name"`
	File string `koanf:"file"`
	Axis *int   `koanf:"axis"`
}

func (e entry) ShortForm() (string, bool) { return e.Name, e.File == "" && e.Axis == nil }

func (e *entry) SetShortForm(s string) error {
	if s == "" {
		return errors.New("an empty name")
	}
	*e = entry{Name: s}
	return nil
}

type shortConfig struct {
	Models []entry `koanf:"models"`
}

func TestShorthand(t *testing.T) {
	one := 1
	tests := []struct {
		name      string
		yaml      string
		sets      []string
		want      []entry
		canonical string
		err       string
	}{
		{"names", "models: [mlp, vit]\n", nil, []entry{{Name: "mlp"}, {Name: "vit"}}, `{"models":["mlp","vit"]}`, ""},
		{"mixed", "models: [mlp, {name: mine, file: m.onnx, axis: 1}]\n", nil,
			[]entry{{Name: "mlp"}, {Name: "mine", File: "m.onnx", Axis: &one}},
			`{"models":["mlp",{"axis":1,"file":"m.onnx","name":"mine"}]}`, ""},
		{"a mapping of a name alone", "models: [{name: mlp}]\n", nil, []entry{{Name: "mlp"}}, `{"models":["mlp"]}`, ""},
		{"set as a list", "", []string{"models=mlp, vit"}, []entry{{Name: "mlp"}, {Name: "vit"}}, `{"models":["mlp","vit"]}`, ""},
		{"set a key of an entry", "models: [mlp]\n", []string{"models[0].file=x.onnx"}, []entry{{Name: "mlp", File: "x.onnx"}},
			`{"models":[{"file":"x.onnx","name":"mlp"}]}`, ""},
		{"bad short form", "models: ['']\n", nil, nil, "", `models[0]: cannot use "": an empty name`},
		{"a number", "models: [3]\n", nil, nil, "", "models[0]: want a string or a mapping, got 3"},
		{"an unknown key", "models: [{name: a, fiel: b}]\n", nil, nil, "", "models[0].fiel: unknown key (did you mean models[0].file?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg shortConfig
			err := Load(Options{File: writeYAML(t, tt.yaml), Sets: tt.sets}, &cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load = %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Models, tt.want) {
				t.Errorf("models = %+v, want %+v", cfg.Models, tt.want)
			}
			c, err := Canonical(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(c) != tt.canonical {
				t.Errorf("Canonical = %s, want %s", c, tt.canonical)
			}
			var back shortConfig
			if err := Decode("canonical", c, &back); err != nil || !reflect.DeepEqual(back.Models, tt.want) {
				t.Errorf("Decode(Canonical) = %+v, %v; want %+v", back.Models, err, tt.want)
			}
		})
	}
	if got := want(reflect.TypeFor[entry]()); got != "a string or a mapping" {
		t.Errorf("want(entry) = %q", got)
	}
}
