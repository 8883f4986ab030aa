package natsbus

import (
	"errors"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// strictField refuses every value with its own *bus.Error, as a dispatch
// config or an option does.
type strictField struct{}

func (*strictField) UnmarshalJSON([]byte) error {
	return bus.Errorf(bus.ReasonForbidden, "webhook %q is not allowed", "https://x")
}

// TestDecodeRequestKeepsAFieldsReason: a field's own refusal keeps its
// reason word, and the message does not repeat it.
func TestDecodeRequestKeepsAFieldsReason(t *testing.T) {
	var v struct {
		F strictField `json:"f"`
	}
	err := DecodeRequest([]byte(`{"f":1}`), &v)
	var be *bus.Error
	if !errors.As(err, &be) {
		t.Fatalf("DecodeRequest = %v, want a *bus.Error", err)
	}
	if be.Type != bus.ReasonForbidden {
		t.Errorf("type = %q, want %q", be.Type, bus.ReasonForbidden)
	}
	if strings.Contains(be.Message, bus.ReasonForbidden+":") {
		t.Errorf("message %q repeats the reason word", be.Message)
	}
	// Plain decoding errors stay invalid_request.
	err = DecodeRequest([]byte(`{"g":2}`), &v)
	if !errors.As(err, &be) || be.Type != bus.ReasonInvalidRequest {
		t.Errorf("unknown field: %v, want invalid_request", err)
	}
	var n struct{ N int }
	if err := DecodeRequest([]byte(`{"N":"x"}`), &n); !errors.As(err, &be) || be.Type != bus.ReasonInvalidRequest {
		t.Errorf("wrong type: %v, want invalid_request", err)
	}
}
