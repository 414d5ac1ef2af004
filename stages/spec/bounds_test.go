// Package spec_test holds the checks that span every stage's
// configuration.
package spec_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// TestEveryNumberIsBounded sets every number of every stage's
// configuration, one at a time, to the largest value its type holds (a
// list's first element, one entry of a map, added where the default has
// none) and wants Validate to refuse it with an error naming that key:
// no number is left for the stage to allocate, loop or wait on without a
// bound a real use never needs to pass. A seed is the exception: it only
// names a stream of random numbers, and every int64 names one.
func TestEveryNumberIsBounded(t *testing.T) {
	for _, stage := range []struct {
		name     string
		cfg      any
		validate func(any) error
	}{
		{"profile", profilespec.DefaultConfig(), func(c any) error { return c.(profilespec.Config).Validate() }},
		{"generate", generatespec.DefaultConfig(), func(c any) error { return c.(generatespec.Config).Validate() }},
		{"train", trainspec.DefaultConfig(), func(c any) error { return c.(trainspec.Config).Validate() }},
		{"schedule", schedulespec.DefaultConfig(), func(c any) error { return c.(schedulespec.Config).Validate() }},
		{"evaluate", evaluatespec.DefaultConfig(), func(c any) error { return c.(evaluatespec.Config).Validate() }},
	} {
		// v is an addressable copy of the defaults, changed in place and
		// put back after each key.
		v := reflect.New(reflect.TypeOf(stage.cfg)).Elem()
		v.Set(reflect.ValueOf(stage.cfg))
		if err := stage.validate(v.Interface()); err != nil {
			t.Fatalf("%s: the defaults do not validate: %v", stage.name, err)
		}
		walk(v, stage.name, func(key string) {
			if strings.HasSuffix(key, ".seed") {
				return
			}
			err := stage.validate(v.Interface())
			var ce *config.Error
			switch {
			case err == nil:
				t.Errorf("%s = the largest %s passes Validate", key, "value")
			case !errors.As(err, &ce) || !strings.Contains(err.Error(), key):
				t.Errorf("%s = the largest value: the error does not name the key: %v", key, err)
			}
		})
	}
}

// walk finds every numeric leaf under v (whose key is key), sets it to
// its type's largest value, calls check with the leaf's key, and puts it
// back.
func walk(v reflect.Value, key string, check func(key string)) {
	if d, ok := extreme(v.Type()); ok {
		old := reflect.New(v.Type()).Elem()
		old.Set(v)
		v.Set(d)
		check(key)
		v.Set(old)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := f.Tag.Get("koanf")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			walk(v.Field(i), key+"."+name, check)
		}
	case reflect.Slice:
		old := v.Slice(0, v.Len())
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		} else {
			// A copy, so that the defaults' backing array is never written.
			v.Set(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v))
		}
		walk(v.Index(0), key+"[0]", check)
		v.Set(old)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		old := reflect.ValueOf(v.Interface()) // the map itself, not the field
		m := reflect.MakeMap(v.Type())
		iter := v.MapRange()
		var first reflect.Value
		for iter.Next() {
			m.SetMapIndex(iter.Key(), iter.Value())
			if !first.IsValid() {
				first = iter.Key()
			}
		}
		if !first.IsValid() {
			first = reflect.ValueOf("mlp").Convert(v.Type().Key())
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if x := m.MapIndex(first); x.IsValid() {
			e.Set(x)
		}
		v.Set(m)
		walk(e, key+"."+first.String(), func(k string) {
			m.SetMapIndex(first, e)
			check(k)
		})
		v.Set(old)
	}
}

// extreme is the largest value of a numeric type.
func extreme(t reflect.Type) (reflect.Value, bool) {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeFor[time.Duration]():
		v.SetInt(math.MaxInt64)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		v.SetInt(1<<(t.Bits()-1) - 1)
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		v.SetUint(1<<t.Bits() - 1)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		v.SetFloat(math.MaxFloat32)
	default:
		return v, false
	}
	return v, true
}
