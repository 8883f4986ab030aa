package assistant

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
)

func TestHookSettingsCheck(t *testing.T) {
	for _, bad := range []HookSettings{
		{Events: []string{"turn.begin"}},
		{TimeoutMS: -1},
		{TimeoutMS: maxHookTimeoutMS + 1},
		{Default: "maybe"},
		{Command: []string{}},
		{Command: []string{""}},
	} {
		if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "hooks.") {
			t.Errorf("Check(%+v): %v, want a refusal naming the setting", bad, err)
		}
	}
	if err := (HookSettings{Events: conversation.HookEvents(), TimeoutMS: 100, Default: "allow", Command: []string{"check"}}).Check(); err != nil {
		t.Errorf("a valid hooks: %v", err)
	}
	if (HookSettings{}).fallback() != conversation.HookDeny || (HookSettings{Default: "allow"}).fallback() != conversation.HookAllow {
		t.Error("the default on no answer is not deny unless the project says allow")
	}
}

// TestAskHookReplies: what a hook service answers becomes the decision;
// no answer, an answer that is not JSON or names no decision, and a
// rewrite that is not an object or comes after the call get the project's
// default or a deny, saying why — never the model's call unchecked.
func TestAskHookReplies(t *testing.T) {
	h := HookSettings{Events: []string{conversation.HookToolBefore}, Default: "allow"}
	before := HookRequest{Event: conversation.HookToolBefore, CallID: "c1", Tool: "write_file"}
	after := HookRequest{Event: conversation.HookToolAfter, CallID: "c1", Tool: "write_file"}
	for _, tc := range []struct {
		name       string
		reply      string
		err        error
		req        HookRequest
		settings   HookSettings
		decision   string
		defaulted  bool
		args, want string
	}{
		{name: "allow", reply: `{"decision":"allow","by":"svc"}`, req: before, settings: h, decision: "allow", want: "svc"},
		{name: "deny", reply: `{"decision":"deny","reason":"no rm"}`, req: before, settings: h, decision: "deny", want: "no rm"},
		{name: "rewrite", reply: `{"decision":"allow","args":{"path":"b"}}`, req: before, settings: h, decision: "allow", args: `{"path":"b"}`},
		{name: "no responder", err: fmt.Errorf("%w: nobody", ErrNoHook), req: before, settings: HookSettings{}, decision: "deny", defaulted: true, want: "nobody; the project's hooks.default is deny"},
		{name: "default allow", err: fmt.Errorf("%w: nobody", ErrNoHook), req: before, settings: h, decision: "allow", defaulted: true},
		{name: "not JSON", reply: `yes`, req: before, settings: HookSettings{}, decision: "deny", defaulted: true, want: "not JSON"},
		{name: "no decision", reply: `{"decision":"maybe"}`, req: before, settings: HookSettings{}, decision: "deny", defaulted: true, want: `"maybe"`},
		{name: "args not an object", reply: `{"decision":"allow","args":[1]}`, req: before, settings: h, decision: "deny", want: "not a JSON object"},
		{name: "rewrite after", reply: `{"decision":"allow","args":{"x":1}}`, req: after, settings: HookSettings{}, decision: "deny", defaulted: true, want: "only a tool.before"},
	} {
		a := New(Config{AskHook: func(_ context.Context, project, event string, _ []byte, timeout time.Duration) ([]byte, string, error) {
			if project != "p1" || event != tc.req.Event || timeout != DefaultHookTimeoutMS*time.Millisecond {
				t.Errorf("%s: asked %s %s %s", tc.name, project, event, timeout)
			}
			return []byte(tc.reply), "jido.hook.p1." + event, tc.err
		}})
		d := a.askHook(context.Background(), tc.settings, "p1", tc.req)
		a.Close()
		if d.Decision != tc.decision || d.Defaulted != tc.defaulted || string(d.Args) != tc.args ||
			!strings.Contains(d.Reason+" "+d.By, tc.want) || d.Via != "jido.hook.p1."+tc.req.Event {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
}
