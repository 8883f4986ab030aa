package codec

import (
	"bytes"
	"context"
	"testing"

	cenats "github.com/cloudevents/sdk-go/protocol/nats/v2"
	cejs "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/nats-io/nats.go"
)

// The CloudEvents Go SDK has two NATS bindings: protocol/nats writes
// structured mode, protocol/nats_jetstream writes binary mode. A message
// written by either decodes to the same signal, and what this codec writes
// is read by both.

func TestReadWhatSDKWrites(t *testing.T) {
	ctx := context.Background()
	want := sampleSignal(t)

	var structuredBody bytes.Buffer
	if err := cenats.WriteMsg(ctx, binding.ToMessage(&want), &structuredBody); err != nil {
		t.Fatal(err)
	}
	structured := &nats.Msg{Subject: "s", Data: structuredBody.Bytes(), Header: nats.Header{"content-type": {ContentTypeStructured}}}

	var binaryBody bytes.Buffer
	header, err := cejs.WriteMsg(binding.WithForceBinary(ctx), binding.ToMessage(&want), &binaryBody)
	if err != nil {
		t.Fatal(err)
	}
	binary := &nats.Msg{Subject: "s", Data: binaryBody.Bytes(), Header: header}

	for name, msg := range map[string]*nats.Msg{"structured (protocol/nats)": structured, "binary (protocol/nats_jetstream)": binary} {
		t.Run(name, func(t *testing.T) {
			got, _, err := testDecoder().Decode(msg, want.Type())
			if err != nil {
				t.Fatal(err)
			}
			equalSignals(t, got, want)
		})
	}
}

func TestSDKReadsWhatWeWrite(t *testing.T) {
	ctx := context.Background()
	want := sampleSignal(t)

	structured, err := Encode("s", &want, Structured)
	if err != nil {
		t.Fatal(err)
	}
	got, err := binding.ToEvent(ctx, cenats.NewMessage(structured))
	if err != nil {
		t.Fatalf("protocol/nats reading our structured message: %v", err)
	}
	equalSignals(t, *got, want)

	// Binary mode with values that need no percent-encoding, since the SDK
	// does not decode it.
	plainValues := sampleSignal(t)
	plainValues.SetSubject("counters/c1")
	binary, err := Encode("s", &plainValues, Binary)
	if err != nil {
		t.Fatal(err)
	}
	got, err = binding.ToEvent(ctx, cejs.NewMessage(binary))
	if err != nil {
		t.Fatalf("protocol/nats_jetstream reading our binary message: %v", err)
	}
	equalSignals(t, *got, plainValues)
}
