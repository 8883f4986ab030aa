package agents

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type planInts struct {
	By  *int64 `json:"by"`
	N   int
	I8  int8   `json:"i8,omitempty"`
	U16 uint16 `json:"u"`
	UP  *uint
}

type planMixed struct {
	A    float64
	B    float64 `json:"b"`
	F32  *float32
	S    string `json:"s"`
	SP   *string
	Flag bool `json:"flag"`
	BP   *bool
	Dash int `json:"-"`
	skip int // unexported: encoding/json and the plan ignore it
}

var _ = planMixed{}.skip

type namedInt int

type planNamed struct {
	Level namedInt `json:"level"`
	Word  *namedString
}

type namedString string

// paramsPlanTypes are the types the differential test decodes into, with
// a function that decodes raw both ways.
var paramsPlanTypes = []func(t *testing.T, raw []byte){
	diffDecode[planInts], diffDecode[planMixed], diffDecode[planNamed], diffDecode[struct{ X, Y int }],
}

// diffDecode checks the plan against json.Unmarshal on raw: when the plan
// decodes, json.Unmarshal must succeed with the same value.
func diffDecode[P any](t *testing.T, raw []byte) {
	t.Helper()
	plan := planParams(reflect.TypeFor[P]())
	if plan == nil {
		t.Fatalf("no plan for %T", *new(P))
	}
	var slow P
	fast, ok := decodeParams[P](plan, raw)
	err := json.Unmarshal(raw, &slow)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("%T: the plan decoded %q, json.Unmarshal fails: %v", fast, raw, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%T from %q: plan %+v, json.Unmarshal %+v", fast, raw, fast, slow)
	}
}

// FuzzFlatObject: whatever flatObject decodes, the schema validator's
// decoder decodes to the same value.
func FuzzFlatObject(f *testing.F) {
	for _, s := range paramsPlanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { diffFlatObject(t, raw) })
}

func diffFlatObject(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := flatObject(raw)
	if !ok {
		return
	}
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("flatObject decoded %q, the validator's decoder fails: %v", raw, err)
	}
	if !reflect.DeepEqual(any(got), want) {
		t.Fatalf("flatObject(%q) = %#v, the validator's decoder %#v", raw, got, want)
	}
}

func TestFlatObjectMatchesValidatorDecoder(t *testing.T) {
	for _, s := range paramsPlanSeeds {
		diffFlatObject(t, []byte(s))
	}
	if _, ok := flatObject([]byte(`{"by":2}`)); !ok {
		t.Fatal(`flatObject did not take {"by":2}`)
	}
}

// FuzzParamsPlan: whatever the plan decodes, json.Unmarshal decodes to
// the same value (the plan is exact or silent).
func FuzzParamsPlan(f *testing.F) {
	for _, s := range paramsPlanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, check := range paramsPlanTypes {
			check(t, raw)
		}
	})
}

var paramsPlanSeeds = []string{
	`{"by":2}`, `{}`, ` { } `, `{"by":null}`, `{"By":3}`, `{"BY":3,"by":4}`, `{"by":1,"by":null}`,
	`{"by":2.5}`, `{"by":1e2}`, `{"by":-0}`, `{"by":9223372036854775808}`, `{"by":"2"}`,
	`{"N":1,"i8":127,"u":65535,"UP":0}`, `{"i8":128}`, `{"u":-1}`, `{"UP":18446744073709551616}`,
	`{"A":1.5,"b":-2e-3,"F32":3.4e39,"s":"x y","SP":"","flag":true,"BP":false,"Dash":1,"skip":3}`,
	`{"F32":1e38}`, `{"s":"a\"b"}`, `{"s":"é"}`, `{"s":"\u00e9"}`, `{"flag":1}`, `{"A":true}`,
	`{"x":[1]}`, `{"x":{"y":1}}`, `{"unknown":1,"by":2}`, `{"by":2,}`, `{"by":2`, `{"by":02}`, `{"by":-}`,
	`{"by":1.}`, `{"by":.5}`, `{"by":1e}`, `{"by":+1}`, `{"by":1}x`, `{"by" : 2 } `, "{\"by\":\t2\n}",
	`[1]`, `null`, `"s"`, `{"by":tru}`, `{"by":nul}`, `{'by':1}`, `{"level":3,"Word":"w"}`, `{"X":1,"y":2}`,
}

func TestParamsPlanMatchesEncodingJSON(t *testing.T) {
	for _, s := range paramsPlanSeeds {
		for _, check := range paramsPlanTypes {
			check(t, []byte(s))
		}
	}
	// The plan must actually take the common inputs, or it is only cost.
	plan := planParams(reflect.TypeFor[planInts]())
	if p, ok := decodeParams[planInts](plan, []byte(`{"by":2}`)); !ok || p.By == nil || *p.By != 2 {
		t.Fatalf(`the plan did not decode {"by":2}: %+v`, p)
	}
}

type withUnmarshaler struct{ T time.Time }
type withEmbedded struct{ planInts }
type withStringOpt struct {
	N int `json:"n,omitempty,string"`
}
type withNumber struct{ N json.Number }
type withSlice struct{ L []int }
type withFoldClash struct {
	A int `json:"name"`
	B int `json:"NAME"`
}
type withOddTag struct {
	A int `json:"a.b"`
}
type namedPtr *int
type withNamedPtr struct{ P namedPtr }
type rawParams json.RawMessage

func TestPlanParamsDeclines(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withUnmarshaler](), reflect.TypeFor[withEmbedded](), reflect.TypeFor[withStringOpt](),
		reflect.TypeFor[withNumber](), reflect.TypeFor[withSlice](), reflect.TypeFor[withFoldClash](),
		reflect.TypeFor[withOddTag](), reflect.TypeFor[withNamedPtr](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[int](), reflect.TypeFor[*planInts](), reflect.TypeFor[rawParams](), reflect.TypeFor[time.Time](),
	} {
		if p := planParams(typ); p != nil {
			t.Errorf("planParams(%v) = %+v, want no plan", typ, p)
		}
	}
}

// TestTypedFallsBackCleanly: when the plan gives up half way, Typed
// decodes from a fresh value, so nothing the plan set leaks through.
func TestTypedFallsBackCleanly(t *testing.T) {
	var got planMixed
	run := Typed(func(_ Env, p planMixed) (Result, error) { got = p; return Result{}, nil })
	// The plan sets s, then gives up at the nested value; json.Unmarshal
	// then decodes everything (the unknown member is ignored).
	if _, err := run(Env{}, json.RawMessage(`{"s":"x","nested":{"a":1},"b":2}`)); err != nil {
		t.Fatal(err)
	}
	if got.S != "x" || got.B != 2 {
		t.Fatalf("got %+v", got)
	}
	// The plan sets b, then meets a type error; the error is json's.
	_, err := run(Env{Action: "act"}, json.RawMessage(`{"b":2,"s":1}`))
	if err == nil || !strings.Contains(err.Error(), "params of act: json: cannot unmarshal number into Go struct field") {
		t.Fatalf("err = %v", err)
	}
}
