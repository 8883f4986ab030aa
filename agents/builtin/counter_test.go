package builtin

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// TestSetCountMatchesNewEmit: the signal setCount builds in its own
// storage is the one NewEmit builds from the count written with
// FormatFloat(n, 'f', -1), and the state operation sets count.
func TestSetCountMatchesNewEmit(t *testing.T) {
	ns := []float64{
		0, math.Copysign(0, -1), 1, -1, -2, 2.5, -0.1, 1 << 53, 1<<53 - 1, -(1<<53 - 1), -(1 << 53), 1<<53 + 2,
		1e21, -1e300, math.MaxInt64, math.MinInt64, math.MaxFloat64, math.SmallestNonzeroFloat64,
	}
	for n := 1.0; n < 1e18; n = n*7 + 3 {
		ns = append(ns, n, -n, n+0.5)
	}
	for _, n := range ns {
		res, err := setCount(n)
		if err != nil {
			t.Fatalf("setCount(%v): %v", n, err)
		}
		want, err := agents.NewEmit(CounterChanged, json.RawMessage(`{"count":`+strconv.FormatFloat(n, 'f', -1, 64)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Directives) != 1 || !reflect.DeepEqual(res.Directives[0], &want) {
			t.Errorf("setCount(%v) directives = %#v, want [%#v]", n, res.Directives, &want)
		}
		if len(res.Ops) != 1 || !reflect.DeepEqual(res.Ops[0], &agents.SetPath{Path: []string{"count"}, Value: n}) {
			t.Errorf("setCount(%v) ops = %#v", n, res.Ops)
		}
	}
	for _, n := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := setCount(n)
		_, want := agents.NewEmit(CounterChanged, json.RawMessage(`{"count":`+strconv.FormatFloat(n, 'f', -1, 64)+`}`))
		if err == nil || err.Error() != want.Error() {
			t.Errorf("setCount(%v): error %v, want %v", n, err, want)
		}
	}
}

var plainBySeeds = []string{
	``, `{"by":2}`, `{"by":-3}`, `{"by":0}`, `{"by":-0}`, ` { "by" : 7 } `, "{\n\t\"by\":\r1}\n", `{}`, `{"by":null}`,
	`{"By":2}`, `{"BY":2}`, `{"by":2,"by":null}`, `{"by":null,"by":2}`, `{"by":2,"x":1}`, `{"x":1,"by":2}`,
	`{"by":2.0}`, `{"by":2.5}`, `{"by":1e2}`, `{"by":"2"}`, `{"by":true}`, `{"by":02}`, `{"by":+2}`, `{"by":-}`,
	`{"by":9223372036854775807}`, `{"by":9223372036854775808}`, `{"by":-9223372036854775808}`,
	`{"by":2`, `{"by":2}}`, `{"by":2} x`, `{"by"2}`, `{"b\u0079":2}`, `{"by":[2]}`, `null`, `[]`, `2`, ` `,
}

// checkPlainBy: whatever plainBy reads, Typed reads the same by from.
func checkPlainBy(t *testing.T, params []byte) {
	t.Helper()
	by, ok := plainBy(params)
	if !ok {
		return
	}
	var p step
	typed := agents.Typed(func(_ agents.Env, got step) (agents.Result, error) { p = got; return agents.Result{}, nil })
	if _, err := typed(agents.Env{}, params); err != nil {
		t.Fatalf("plainBy(%q) = %v, Typed fails: %v", params, by, err)
	}
	want := 1.0
	if p.By != nil {
		want = float64(*p.By)
	}
	if math.Float64bits(by) != math.Float64bits(want) {
		t.Fatalf("plainBy(%q) = %v, Typed reads %v", params, by, want)
	}
}

func TestPlainByMatchesTyped(t *testing.T) {
	for _, s := range plainBySeeds {
		checkPlainBy(t, []byte(s))
	}
	// It must take the params the counter is sent, or it is only cost.
	for _, s := range []string{``, `{"by":2}`, ` { "by" : -7 } `} {
		if _, ok := plainBy([]byte(s)); !ok {
			t.Errorf("plainBy(%q) declined", s)
		}
	}
}

func FuzzPlainBy(f *testing.F) {
	for _, s := range plainBySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPlainBy)
}
