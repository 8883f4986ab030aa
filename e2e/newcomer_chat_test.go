package e2e

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// ptyChat is conv chat on a pseudo-terminal (script(1)), as a person
// runs it: keys typed go to the terminal, and what the terminal shows,
// echo included, is read back.
type ptyChat struct {
	keys   io.WriteCloser
	screen *testkit.Buffer
	exited <-chan error
}

func startPtyChat(t *testing.T, url string, args ...string) *ptyChat {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is needed for a pseudo-terminal")
	}
	line := tools.JidoBus + " conv chat " + strings.Join(args, " ") + " --nats-url " + url
	cmd := exec.Command(script, "-qfec", line, "/dev/null")
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &ptyChat{keys: keys, screen: &testkit.Buffer{}}
	cmd.Stdout, cmd.Stderr = c.screen, c.screen
	c.exited = startFollower(t, cmd)
	t.Cleanup(func() { _ = keys.Close() })
	return c
}

// text is the screen so far, with the terminal's carriage returns dropped.
func (c *ptyChat) text() string { return strings.ReplaceAll(c.screen.String(), "\r", "") }

func (c *ptyChat) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := io.WriteString(c.keys, keys); err != nil {
		t.Fatal(err)
	}
}

// await waits until the screen holds want n times.
func (c *ptyChat) await(t *testing.T, want string, n int) {
	t.Helper()
	testkit.EventuallyNil(t, fmt.Sprintf("the chat to show %q %d times", want, n), func() error {
		if screen := c.text(); strings.Count(screen, want) < n {
			return fmt.Errorf("the screen:\n%s", screen)
		}
		return nil
	})
}

// exitCode waits for the chat to end and returns its exit code.
func (c *ptyChat) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case err := <-c.exited:
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("the chat did not end; the screen:\n%s", c.text())
		return -1
	}
}

// TestNewcomerChat is conv chat as a person meets it on a terminal
// (issue 21, item 9): every answer is shown once; an approved call is
// shown approved and nothing else; Ctrl-D leaves with the shell's prompt
// on a line of its own; --last takes the conversation up again with its
// history, each line once; Ctrl-C at the prompt leaves with 130; and a
// stream the node's restart cuts shows that it was cut, then the answer
// asked again, whole.
func TestNewcomerChat(t *testing.T) {
	dir := t.TempDir()
	rig := &assistantRig{t: t, dataDir: dir, node: StartNode(t, tools, dir)}
	slow := "A slow answer, streamed in small pieces so that the node can be killed in the middle of it and the chat shows what happened."
	rig.newAssistantProject(t, "p", "tools: {\"*\": allow, write_file: ask}\n", []string{
		`{"text":"Hello from the script.","chunk":3,"delay_ms":10}`,
		`{"text":"I'll write a.txt.","chunk":3,"delay_ms":10,"tool_calls":[{"id":"w1","name":"write_file","args":{"path":"a.txt","content":"A\n"}}]}`,
		`{"text":"a.txt is written.","chunk":3,"delay_ms":10}`,
		`{"text":"` + slow + `","chunk":2,"delay_ms":40}`,
		`{"text":"The end.","repeat":true}`,
	}, nil)
	url := rig.node.URL

	chat := startPtyChat(t, url, "p")
	chat.await(t, "> ", 1)
	chat.typeKeys(t, "hello\n")
	chat.await(t, "Hello from the script.\n", 1)
	chat.await(t, "> ", 2)
	chat.typeKeys(t, "write a.txt\n")
	chat.await(t, "? [y/N/a(lways)] ", 1)
	chat.typeKeys(t, "y\n")
	chat.await(t, "a.txt is written.\n", 1)
	chat.await(t, "> ", 3)
	chat.typeKeys(t, "\x04") // Ctrl-D
	if code := chat.exitCode(t); code != 0 {
		t.Errorf("Ctrl-D: exit %d, want 0", code)
	}
	screen := chat.text()
	for _, once := range []string{"Hello from the script.", "I'll write a.txt.", "a.txt is written.", "✓ approved"} {
		if n := strings.Count(screen, once); n != 1 {
			t.Errorf("%q is shown %d times, want once:\n%s", once, n, screen)
		}
	}
	if strings.Contains(screen, "✗ denied") || strings.Contains(screen, "denied after") {
		t.Errorf("an approved call is shown denied:\n%s", screen)
	}
	if !strings.HasSuffix(screen, "> \n") {
		t.Errorf("the shell's prompt would be glued to the chat's: the screen ends %q", screen[max(0, len(screen)-20):])
	}

	// --last: the same conversation, its history first, each line once.
	chat = startPtyChat(t, url, "p", "--last")
	chat.await(t, "a.txt is written.\n", 1)
	chat.await(t, "> ", 3)   // two from the history (the user's lines), then the prompt
	chat.typeKeys(t, "\x03") // Ctrl-C at the prompt
	if code := chat.exitCode(t); code != 130 {
		t.Errorf("Ctrl-C at the prompt: exit %d, want 130", code)
	}
	screen = chat.text()
	for _, once := range []string{"> hello\n", "Hello from the script.", "> write a.txt\n", "→ write_file", "✓ approved", "a.txt is written."} {
		if n := strings.Count(screen, once); n != 1 {
			t.Errorf("the history shows %q %d times, want once:\n%s", once, n, screen)
		}
	}
	if !strings.HasSuffix(screen, "> ^C\n") && !strings.HasSuffix(screen, "> \n") {
		t.Errorf("after Ctrl-C the shell's prompt would be glued to the chat's: the screen ends %q", screen[max(0, len(screen)-20):])
	}

	// A restart in the middle of an answer.
	chat = startPtyChat(t, url, "p", "--last")
	chat.await(t, "> ", 3)
	chat.typeKeys(t, "slowly now\n")
	chat.await(t, "A slow answer, streamed", 1)
	rig.node.Kill(t)
	rig.node = StartNode(t, tools, dir, "--listen", strings.TrimPrefix(url, "nats://"))
	chat.await(t, "(the answer was interrupted: ", 1)
	chat.await(t, slow+"\n", 1)
	chat.await(t, "> ", 4)
	chat.typeKeys(t, "\x04")
	if code := chat.exitCode(t); code != 0 {
		t.Errorf("Ctrl-D after the restart: exit %d", code)
	}
	screen = chat.text()
	for _, want := range []string{"(lost the node at ", "is back)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the chat does not say %q:\n%s", want, screen)
		}
	}
	// The cut stream, then the interruption, then the whole answer once,
	// on a line of its own.
	cut := strings.Index(screen, "(the answer was interrupted: ")
	if cut < 0 || !strings.Contains(screen[cut:], "\n"+slow+"\n") || strings.Count(screen, slow) != 1 {
		t.Errorf("the interruption and the answer asked again:\n%s", screen)
	}
}
