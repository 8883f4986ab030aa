package llm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// scriptLine is one line of a scripted provider's JSONL file.
type scriptLine struct {
	Text      string           `json:"text"`
	ToolCalls []scriptToolCall `json:"tool_calls"`
	Usage     *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	// DelayMs is the pause before each streamed piece (each text chunk and
	// each tool call), so a long text with a small chunk streams slowly.
	DelayMs int `json:"delay_ms"`
	// Chunk streams the text in pieces of this many bytes (0: one piece).
	Chunk int         `json:"chunk"`
	Fail  *scriptFail `json:"fail"`
	// Repeat, on the script's last line, makes that line the answer to
	// every request past the script, so a conversation goes on for as
	// long as a person types (the demo's "my script has ended" line).
	Repeat bool `json:"repeat"`
	// For makes the line one of the script a conversation plays whose
	// first user message holds this text (a delegated child's task), so
	// one file plays a parent and its children; lines without it are the
	// script of every other conversation.
	For string `json:"for"`
	// Summary makes the line an answer to a compaction's request
	// (Request.Summary) instead of a turn: the k-th such request gets
	// the k-th summary line (the last one past them).
	Summary bool `json:"summary"`
	// Expect is text the request must hold (in its system prompt or a
	// message): a request without it fails bad_request, so a script can
	// check what the model was sent — that the task is still there after
	// a compaction, say.
	Expect string `json:"expect"`
}

type scriptToolCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args"`
	ArgsText *string         `json:"args_text"`
}

type scriptFail struct {
	Kind         string `json:"kind"`
	Status       int    `json:"status"`
	Message      string `json:"message"`
	RetryAfterMs int64  `json:"retry_after_ms"`
}

// scriptTurn is one answered turn: the failing lines that precede a
// successful one, then that line.
type scriptTurn struct {
	lines  []scriptLine
	lineNo []int
}

// scripted replays a JSONL file; see newScripted.
type scripted struct {
	description
	model string
	path  string
	// scripts are the file's scripts: "" for its lines without "for",
	// then one per "for" text, in the order of their first line.
	scripts []*script
	// summaries are the summary lines, in order; summarised counts the
	// summary requests answered (in memory).
	summaries  []scriptLine
	summarised int

	mu sync.Mutex
	// failures counts the failing lines already returned per request
	// fingerprint; in memory only, so a restart replays a turn's failures.
	failures map[[32]byte]int
}

// newScripted loads cfg.Script. The file has one JSON object per line
// (blank lines are ignored):
//
//	{"text":"…","tool_calls":[{"id":"…","name":"…","args":{…}}],"usage":{"input_tokens":1,"output_tokens":2},"delay_ms":0,"chunk":8}
//	{"fail":{"kind":"server","status":500,"message":"…","retry_after_ms":0}}
//	{"text":"…","repeat":true}
//	{"text":"…","summary":true}
//	{"text":"…","expect":"text the request must hold"}
//
// A tool call has "args" (a JSON value, sent as its compact text) or
// "args_text" (raw text, possibly invalid JSON); its id defaults to
// call_<turn>_<i>. A line with "fail" fails the attempt with that error kind,
// after streaming its text if it has any.
//
// Which line answers is decided by the request alone, so a replay or a
// restart gets the same answer: turn n answers a request holding n assistant
// messages. A turn is a successful line with the failing lines before it;
// (a summary of a compacted conversation counts as the answers it
// replaces); the k-th attempt of the same request (same system prompt and messages)
// gets the turn's k-th line. The count of failures already returned is kept
// in memory per request, so after a restart a turn's failures happen again.
// A request past the last turn is a config error, unless the last line
// says "repeat": true; it then answers every such request (and may hold
// no tool call, which would call it for ever).
func newScripted(cfg Config) (Provider, error) {
	if cfg.Script == "" {
		return nil, configError("the scripted provider needs a script: set llm.script to a JSONL file of turns")
	}
	var (
		data []byte
		err  error
	)
	if cfg.Files != nil {
		data, err = fs.ReadFile(cfg.Files, cfg.Script)
	} else {
		data, err = os.ReadFile(cfg.Script)
	}
	if err != nil {
		return nil, &Error{Kind: KindConfig, Message: fmt.Sprintf("cannot read the llm script %s: %v", cfg.Script, err), cause: err}
	}
	model := cfg.Model
	if model == "" {
		model = "scripted"
	}
	s := &scripted{description: describe(Config{Provider: ProviderScripted, Model: model, Script: cfg.Script}, ""),
		model: model, path: cfg.Script, failures: map[[32]byte]int{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		line, err := parseScriptLine(raw)
		if err != nil {
			return nil, configError("llm script %s line %d: %v", cfg.Script, n, err)
		}
		if line.Summary {
			s.summaries = append(s.summaries, line)
			continue
		}
		sp := s.script(line.For)
		if sp.repeat {
			return nil, configError("llm script %s line %d follows a line with \"repeat\": true, which answers every request past the script: only the last line may repeat", cfg.Script, n)
		}
		sp.repeat = line.Repeat
		sp.cur.lines = append(sp.cur.lines, line)
		sp.cur.lineNo = append(sp.cur.lineNo, n)
		if line.Fail == nil {
			sp.turns = append(sp.turns, sp.cur)
			sp.cur = scriptTurn{}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, configError("llm script %s: %v", cfg.Script, err)
	}
	for _, sp := range s.scripts {
		if len(sp.cur.lines) > 0 {
			sp.turns = append(sp.turns, sp.cur) // trailing failures: a turn that never succeeds
		}
	}
	if len(s.scripts) == 0 {
		return nil, configError("llm script %s has no turns: write one JSON object per line", cfg.Script)
	}
	return s, nil
}

// script is the turns of one conversation's part of a script file.
type script struct {
	// forText is the text the first user message holds ("" for every
	// other conversation).
	forText string
	turns   []scriptTurn
	// repeat: the last turn answers every request past the script.
	repeat bool
	cur    scriptTurn
}

// script returns the script of lines "for" forText, made on its first
// line.
func (s *scripted) script(forText string) *script {
	for _, sp := range s.scripts {
		if sp.forText == forText {
			return sp
		}
	}
	sp := &script{forText: forText}
	s.scripts = append(s.scripts, sp)
	return sp
}

// scriptOf returns the script that plays req's conversation: the first
// whose "for" text its first user message holds, else the lines without
// "for".
func (s *scripted) scriptOf(req Request) (*script, error) {
	first := ""
	for _, m := range req.Messages {
		if m.Role == RoleUser {
			first = m.Content
			break
		}
	}
	var def *script
	for _, sp := range s.scripts {
		switch {
		case sp.forText == "":
			def = sp
		case strings.Contains(first, sp.forText):
			return sp, nil
		}
	}
	if def == nil {
		return nil, configError("the llm script %s has no line for this conversation: its first message holds none of the \"for\" texts, and every line has one", s.path)
	}
	return def, nil
}

func parseScriptLine(raw []byte) (scriptLine, error) {
	var line scriptLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&line); err != nil {
		return line, fmt.Errorf("not a turn object: %w", err)
	}
	if dec.More() {
		return line, errors.New("more than one JSON value on the line")
	}
	if line.Chunk < 0 || line.DelayMs < 0 {
		return line, errors.New("chunk and delay_ms must be 0 or more")
	}
	for i, c := range line.ToolCalls {
		if c.Name == "" {
			return line, fmt.Errorf("tool call %d has no name", i)
		}
		if c.ArgsText != nil && len(c.Args) > 0 {
			return line, fmt.Errorf("tool call %d has both args and args_text: keep one", i)
		}
	}
	if line.Summary && (len(line.ToolCalls) > 0 || line.Repeat || line.Text == "") {
		return line, errors.New("a line with \"summary\": true answers a compaction's request with its text: give it text, and neither tool calls nor repeat")
	}
	if line.Repeat && (len(line.ToolCalls) > 0 || line.Fail != nil) {
		return line, errors.New("a line with \"repeat\": true answers every request past the script, so it may hold neither tool calls (they would be called for ever) nor fail")
	}
	if f := line.Fail; f != nil {
		switch f.Kind {
		case KindAuth, KindRateLimited, KindServer, KindBadRequest, KindStream, KindTimeout, KindConfig:
		default:
			return line, fmt.Errorf("fail.kind %q is not one of auth, rate_limited, server, bad_request, stream, timeout, config", f.Kind)
		}
	}
	return line, nil
}

// summaryAnswers finds, in the heading of a compacted conversation's
// summary (views.SummaryHeading), how many of the assistant's answers it
// replaces.
var summaryAnswers = regexp.MustCompile(`^\[Summary of the earlier conversation, written when it was compacted; it replaces \d+ messages, (\d+) of them the assistant's\]`)

// fingerprint identifies a request for counting its failed attempts.
func fingerprint(req Request) [32]byte {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(struct {
		S string
		M []Message
	}{req.System, req.Messages})
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func (s *scripted) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	if err := ctx.Err(); err != nil {
		return Response{}, Classify(err)
	}
	if req.Summary {
		return s.summary(ctx, req, onDelta)
	}
	sp, err := s.scriptOf(req)
	if err != nil {
		return Response{}, err
	}
	turn := 0
	for _, m := range req.Messages {
		switch {
		case m.Role == RoleAssistant:
			turn++
		case m.Role == RoleUser:
			// A compacted conversation's summary says how many answers
			// it stands for: they count as the turns they were.
			if sm := summaryAnswers.FindStringSubmatch(m.Content); sm != nil {
				n, _ := strconv.Atoi(sm[1])
				turn += n
			}
		}
	}
	if turn >= len(sp.turns) {
		if !sp.repeat {
			return Response{}, configError("the llm script %s has no more turns: it has %d, the conversation asks for turn %d (a last line with \"repeat\": true answers every request past the script)", s.path, len(sp.turns), turn+1)
		}
		turn = len(sp.turns) - 1
	}
	t := sp.turns[turn]
	fp := fingerprint(req)
	s.mu.Lock()
	k := s.failures[fp]
	if k >= len(t.lines) {
		s.mu.Unlock()
		return Response{}, configError("the llm script %s has no more turns: turn %d (line %d) failed every attempt", s.path, turn+1, t.lineNo[len(t.lineNo)-1])
	}
	line := t.lines[k]
	if line.Fail != nil {
		s.failures[fp] = k + 1
	}
	s.mu.Unlock()
	return s.play(ctx, turn, line, req, onDelta)
}

// summary answers a compaction's request: the next summary line, or,
// for a script without any, a summary made from the request's text.
func (s *scripted) summary(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	s.mu.Lock()
	k := s.summarised
	s.summarised++
	s.mu.Unlock()
	if len(s.summaries) == 0 {
		var text string
		for _, m := range req.Messages {
			text += m.Content
		}
		if len(text) > 200 {
			text = text[:200]
		}
		line := scriptLine{Text: "Scripted summary of: " + text}
		return s.play(ctx, 0, line, req, onDelta)
	}
	return s.play(ctx, 0, s.summaries[min(k, len(s.summaries)-1)], req, onDelta)
}

// holds reports whether the request holds text in its system prompt or
// a message.
func holds(req Request, text string) bool {
	if strings.Contains(req.System, text) {
		return true
	}
	for _, m := range req.Messages {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

// play streams one line.
func (s *scripted) play(ctx context.Context, turn int, line scriptLine, req Request, onDelta func(Delta)) (Response, error) {
	if line.Expect != "" && !holds(req, line.Expect) {
		return Response{}, &Error{Kind: KindBadRequest, Status: 400, Message: fmt.Sprintf("scripted: the request does not hold the text the script expects (%q)", line.Expect)}
	}
	delay := time.Duration(line.DelayMs) * time.Millisecond
	pause := func() error {
		if delay == 0 {
			return ctx.Err()
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	text := line.Text
	for len(text) > 0 {
		n := len(text)
		if line.Chunk > 0 && line.Chunk < n {
			n = line.Chunk
		}
		if err := pause(); err != nil {
			return Response{}, Classify(err)
		}
		onDelta(Delta{Text: text[:n]})
		text = text[n:]
	}
	if f := line.Fail; f != nil {
		msg := f.Message
		if msg == "" {
			msg = fmt.Sprintf("scripted %s failure", f.Kind)
			if f.Status != 0 {
				msg = fmt.Sprintf("scripted %s failure (%d)", f.Kind, f.Status)
			}
		}
		return Response{}, &Error{Kind: f.Kind, Status: f.Status, RetryAfter: time.Duration(f.RetryAfterMs) * time.Millisecond, Message: msg}
	}
	resp := Response{Text: line.Text, Model: s.model, StopReason: "stop"}
	for i, c := range line.ToolCalls {
		call := ToolCall{ID: c.ID, Name: c.Name, Args: "{}"}
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d_%d", turn, i)
		}
		switch {
		case c.ArgsText != nil:
			call.Args = *c.ArgsText
		case len(c.Args) > 0:
			var buf bytes.Buffer
			if err := json.Compact(&buf, c.Args); err == nil {
				call.Args = buf.String()
			}
		}
		if err := pause(); err != nil {
			return Response{}, Classify(err)
		}
		onDelta(Delta{ToolCallIndex: i, ToolCallID: call.ID, ToolName: call.Name, ArgsPiece: call.Args})
		resp.ToolCalls = append(resp.ToolCalls, call)
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = "tool_calls"
	}
	if line.Usage != nil {
		resp.Usage = Usage{InputTokens: line.Usage.InputTokens, OutputTokens: line.Usage.OutputTokens}
	} else {
		resp.Usage = estimateUsage(req, resp)
	}
	return resp, nil
}

// estimateUsage is a deterministic stand-in for a script line without usage:
// about four bytes a token, as a rough English average.
func estimateUsage(req Request, resp Response) Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Args)
		}
	}
	out := len(resp.Text)
	for _, c := range resp.ToolCalls {
		out += len(c.Name) + len(c.Args)
	}
	return Usage{InputTokens: int64((in + 3) / 4), OutputTokens: int64((out + 3) / 4)}
}
