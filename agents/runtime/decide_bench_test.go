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

// decideFixture decides signals one after the other as the inbox loop
// does for every signal it commits (decideAndCommit,
// decideAndCommitBatch): the agent's step (routing, params validation,
// the action, completing the emitted signal), the directives' log form,
// and the cmd record with its id — everything before the append. The
// signal is the one `jido-bus bench cast` sends: counter.increment with
// {"by":1} padded to 128 bytes, to a counter with its params schema.
type decideFixture struct {
	agent   agents.Agent
	sig     bus.Signal
	codec   *agents.DirectiveCodec
	now     time.Time
	ids     []string
	version uint64
}

func newDecideFixture(t testing.TB) *decideFixture {
	def, err := builtin.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	agent, err := def.New("c17", nil)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"by":1`)
	for len(data) < 127 {
		data = append(data, ' ')
	}
	data = append(data, '}')
	sig, err := bus.NewSignal(builtin.CounterIncrement, "bench", json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	f := &decideFixture{agent: agent, sig: sig, codec: agents.NewDirectiveCodec(), now: time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)}
	for i := range 1024 {
		f.ids = append(f.ids, "01KB2Y8Q7J3M6ZV0R5T9XW4HCN-"+strconv.Itoa(i))
	}
	return f
}

// decide decides the next signal and builds its cmd record.
func (f *decideFixture) decide(t testing.TB) {
	// Each signal has its own id, as the bench's do; setting it is the
	// caller's work, not the decision's.
	f.sig.Context.(interface{ SetID(string) error }).SetID(f.ids[f.version%uint64(len(f.ids))])
	next, directives := decideSignal(f.agent, f.sig)
	if _, refused := agents.Refusal(directives); refused || len(directives) != 1 {
		t.Fatalf("decided %v", directives)
	}
	f.version++
	rec, err := cmdRecordOf(f.codec, &f.sig, f.version, f.now, directives, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.DataEncoded) == 0 {
		t.Fatal("empty cmd record")
	}
	f.agent = next
}

// BenchmarkDecide is the CPU and the allocations of deciding one signal
// (decideFixture). -benchmem's allocs/op is the allocation budget per
// signal; TestDecideAllocationBudget holds it.
func BenchmarkDecide(b *testing.B) {
	f := newDecideFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		f.decide(b)
	}
}
