package a2a

import (
	"errors"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/jido-bus/jido-bus/conversation"
)

// TestModeFromMetadataWithinTheToken: a message that starts a context
// picks its mode in metadata "jido.mode", within what the caller's token
// allows: a token bounded to ask starts in ask when it names none, may
// pick plan, and is refused auto (invalid params, nothing started); a
// mode that is not a string, or none of the three, is refused too; a
// caller with no bound may pick auto, recorded as the default ("").
func TestModeFromMetadataWithinTheToken(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serveCallers(t, h)
	bot := clientAs(t, ctx, srv.URL, as{name: "bot", maxMode: conversation.ModeAsk})
	alice := clientAs(t, ctx, srv.URL, as{name: "alice"})
	send := func(c *a2aclient.Client, ctxID string, md map[string]any) error {
		m := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))
		m.ContextID, m.Metadata = ctxID, md
		_, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: m, Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
		return err
	}
	mode := func(ctxID string) (string, bool) {
		events, _ := h.ConversationEvents(ctx, "p1/"+ctxID)
		if len(events) == 0 {
			return "", false
		}
		return events[0].Data.Mode, true
	}
	for _, c := range []struct {
		ctxID string
		md    map[string]any
		want  string
	}{
		{"b1", nil, conversation.ModeAsk},
		{"b2", map[string]any{ModeMetadata: "plan"}, conversation.ModePlan},
	} {
		if err := send(bot, c.ctxID, c.md); err != nil {
			t.Fatalf("bot starts %s with %v: %v", c.ctxID, c.md, err)
		}
		if got, _ := mode(c.ctxID); got != c.want {
			t.Fatalf("bot's %s started in mode %q, want %q", c.ctxID, got, c.want)
		}
	}
	for _, c := range []struct {
		ctxID string
		md    map[string]any
	}{
		{"b3", map[string]any{ModeMetadata: "auto"}},
		{"b4", map[string]any{ModeMetadata: "yolo"}},
		{"b5", map[string]any{ModeMetadata: 3}},
	} {
		if err := send(bot, c.ctxID, c.md); !errors.Is(err, sdk.ErrInvalidParams) {
			t.Fatalf("bot starts %s with %v: %v, want invalid params", c.ctxID, c.md, err)
		}
		if _, started := mode(c.ctxID); started {
			t.Fatalf("a refused %s was started", c.ctxID)
		}
	}
	if err := send(alice, "a1", map[string]any{ModeMetadata: "auto"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := mode("a1"); got != "" {
		t.Fatalf("alice's auto context recorded mode %q, want the default", got)
	}
}
