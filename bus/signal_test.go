package bus

import (
	"encoding/json"
	"errors"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"strings"
	"testing"
)

func TestNewSignalIsValid(t *testing.T) {
	s, err := NewSignal("counter.increment", "test", map[string]int{"by": 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateSignal(&s, Limits{}); err != nil {
		t.Fatal(err)
	}
	if string(s.Data()) != `{"by":2}` || s.DataContentType() != "application/json" {
		t.Fatalf("data = %s (%s)", s.Data(), s.DataContentType())
	}
	if len(s.ID()) != 26 {
		t.Fatalf("id %q is not a ULID", s.ID())
	}
}

func TestValidateSignal(t *testing.T) {
	good := func() Signal {
		s, err := NewSignal("a.b", "src", nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name   string
		mutate func(*Signal)
		lim    Limits
		want   string
	}{
		{"valid", func(*Signal) {}, Limits{}, ""},
		{"no id", func(s *Signal) { s.Context.(*event.EventContextV1).ID = "" }, Limits{}, ReasonMissingAttribute},
		{"no source", func(s *Signal) { s.Context.(*event.EventContextV1).Source = types.URIRef{} }, Limits{}, ReasonMissingAttribute},
		{"no type", func(s *Signal) { s.Context.(*event.EventContextV1).Type = "" }, Limits{}, ReasonMissingAttribute},
		{"bad type", func(s *Signal) { s.SetType("a..b") }, Limits{}, ReasonInvalidType},
		{"wildcard type", func(s *Signal) { s.SetType("a.*") }, Limits{}, ReasonInvalidType},
		{"0.3", func(s *Signal) { s.SetSpecVersion("0.3") }, Limits{}, ReasonInvalidSpecVersion},
		{"too large", func(s *Signal) { s.DataEncoded = make([]byte, 11) }, Limits{MaxDataBytes: 10}, ReasonTooLarge},
		{"at the limit", func(s *Signal) { s.DataEncoded = make([]byte, 10) }, Limits{MaxDataBytes: 10}, ""},
		{"default limit", func(s *Signal) { s.DataEncoded = make([]byte, DefaultMaxDataBytes+1) }, Limits{}, ReasonTooLarge},
		{"no limit", func(s *Signal) { s.DataEncoded = make([]byte, DefaultMaxDataBytes+1) }, Limits{MaxDataBytes: -1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := good()
			c.mutate(&s)
			err := ValidateSignal(&s, c.lim)
			if c.want == "" {
				if err != nil {
					t.Fatalf("ValidateSignal = %v", err)
				}
				return
			}
			if ErrorType(err) != c.want {
				t.Fatalf("ValidateSignal = %v, want %s", err, c.want)
			}
		})
	}
}

func TestSetJSONData(t *testing.T) {
	s, _ := NewSignal("a", "src", nil)
	if err := SetJSONData(&s, json.RawMessage(`{"x":1}`)); err != nil || string(s.Data()) != `{"x":1}` {
		t.Fatalf("raw: %v %s", err, s.Data())
	}
	if err := SetJSONData(&s, []byte(`not json`)); ErrorType(err) != ReasonMalformed {
		t.Fatalf("invalid JSON accepted: %v", err)
	}
	if err := SetJSONData(&s, nil); err != nil || s.Data() != nil {
		t.Fatalf("nil: %v %s", err, s.Data())
	}
}

func TestErrors(t *testing.T) {
	inner := Errorf(ReasonNotFound, "no agent %q", "x")
	wrapped := errors.Join(errors.New("context"), inner)
	if !errors.Is(wrapped, &Error{Type: ReasonNotFound}) {
		t.Fatal("errors.Is by type failed")
	}
	if errors.Is(wrapped, &Error{Type: ReasonMalformed}) {
		t.Fatal("errors.Is matched another type")
	}
	if ErrorType(errors.New("plain")) != ReasonInternal {
		t.Fatal("a plain error is not internal")
	}
	e := AsError(fmtErr("subject s", inner))
	if e.Type != ReasonNotFound || e.Message != `subject s: no agent "x"` {
		t.Fatalf("AsError = %+v", e)
	}
}

func fmtErr(prefix string, err error) error { return &wrapErr{prefix, err} }

type wrapErr struct {
	prefix string
	err    error
}

func (w *wrapErr) Error() string { return w.prefix + ": " + w.err.Error() }
func (w *wrapErr) Unwrap() error { return w.err }

func TestReplies(t *testing.T) {
	ok, err := OKReply(struct {
		Count int `json:"count"`
	}{3})
	if err != nil || string(ok) != `{"ok":true,"count":3}` {
		t.Fatalf("OKReply = %s, %v", ok, err)
	}
	if ok, _ := OKReply(nil); string(ok) != `{"ok":true}` {
		t.Fatalf("OKReply(nil) = %s", ok)
	}
	if ok, _ := OKReply(struct{}{}); string(ok) != `{"ok":true}` {
		t.Fatalf("OKReply({}) = %s", ok)
	}
	if _, err := OKReply([]int{1}); err == nil {
		t.Fatal("OKReply accepted a non-object")
	}
	body := ErrorReply(Errorf(ReasonQueueOverflow, "full"))
	var st ReplyStatus
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if st.OK || st.Err() == nil || ErrorType(st.Err()) != ReasonQueueOverflow || !strings.Contains(string(body), `"message":"full"`) {
		t.Fatalf("ErrorReply = %s", body)
	}
}
