package runtime

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

// BenchmarkDecide is the CPU and the allocations of deciding one signal as
// the inbox loop does it for every signal it commits (decideAndCommit,
// decideAndCommitBatch): the agent's step (routing, params validation,
// the action, completing the emitted signal), the directives' log form,
// and the cmd record with its id — everything before the append. The
// signal is the one `jido-bus bench cast` sends: counter.increment with
// {"by":1} padded to 128 bytes, to a counter with its params schema.
// -benchmem's allocs/op is the allocation budget per signal.
func BenchmarkDecide(b *testing.B) {
	def, err := builtin.NewCounter()
	if err != nil {
		b.Fatal(err)
	}
	agent, err := def.New("c17", nil)
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"by":1`)
	for len(data) < 127 {
		data = append(data, ' ')
	}
	data = append(data, '}')
	sig, err := bus.NewSignal(builtin.CounterIncrement, "bench", json.RawMessage(data))
	if err != nil {
		b.Fatal(err)
	}
	codec := agents.NewDirectiveCodec()
	now := time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)
	const prefix = "01KB2Y8Q7J3M6ZV0R5T9XW4HCN-"
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = prefix + strconv.Itoa(i)
	}
	version := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		// Each signal has its own id, as the bench's do; setting it is
		// the caller's work, not the decision's.
		sig.Context.(interface{ SetID(string) error }).SetID(ids[version%uint64(len(ids))])
		next, directives := decideSignal(agent, sig)
		if _, refused := agents.Refusal(directives); refused || len(directives) != 1 {
			b.Fatalf("decided %v", directives)
		}
		version++
		rec, err := cmdRecordOf(codec, &sig, version, now, directives, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(rec.DataEncoded) == 0 {
			b.Fatal("empty cmd record")
		}
		agent = next
	}
}
