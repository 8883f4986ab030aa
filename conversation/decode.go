package conversation

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// DecodeData decodes the data of a conversation event. Its result and its
// error are those of
//
//	var d Data
//	err := json.Unmarshal(b, &d)
//
// for every input (FuzzDecodeData checks it): a hand-written parser reads
// the data the schemas allow — one object of members, each at most once,
// members Data does not have skipped as encoding/json skips them — and
// anything else (a differently cased member, a duplicate, a null, a
// number out of range, a syntax error …) is left to encoding/json. A
// rebuild decodes every event's data, and the parser does it several
// times faster, with one allocation for all the string members of an
// event (they are substrings of one copy of b) instead of one each.
// The result shares no memory with b.
func DecodeData(b []byte) (Data, error) {
	var d Data
	err := DecodeDataInto(&d, b, false)
	return d, err
}

// DecodeDataInto is DecodeData into *d, which it overwrites: a rebuild
// decodes into the value it hands the read models rather than copying a
// Data (some 600 bytes of pointers and strings) into it. With shared set,
// the string and raw members of *d are views of b instead of copies: the
// caller promises that b never changes, as the data of a log entry never
// does, and saves a copy of every event's data.
func DecodeDataInto(d *Data, b []byte, shared bool) error {
	*d = Data{}
	p := dataParser{b: b, shared: shared}
	if p.data(d) {
		return nil
	}
	*d = Data{}
	return json.Unmarshal(b, d)
}

// UnquoteString returns the string a JSON text holds (a string between
// optional whitespace) exactly as json.Unmarshal into a string gives it,
// and false for any other text and for the strings it leaves to
// encoding/json (invalid UTF-8). A tool's output is usually a string, and
// unmarshalling it through reflection for every tool result of a rebuild
// cost more than the rest of its decoding.
func UnquoteString(b []byte) (string, bool) {
	p := dataParser{b: b}
	p.space()
	s, ok := p.string()
	if !ok {
		return "", false
	}
	p.space()
	return s, p.i == len(p.b)
}

// dataParser reads JSON from b; every method reports false as soon as the
// input is anything it does not handle, and the caller then falls back to
// encoding/json.
type dataParser struct {
	b []byte
	i int
	// s is b as a string, made for the first string member without
	// escapes; those members are substrings of it.
	s string
	// shared: b never changes, so s and raw members may be views of it.
	shared bool
}

// maxDepth bounds the nesting of arrays and objects inside a raw member;
// encoding/json handles deeper ones (and refuses them past its own limit).
const maxDepth = 256

// Bits of the members of Data seen so far, to leave duplicates to
// encoding/json (which merges a repeated object into the first).
const (
	seenProjectID = 1 << iota
	seenConversationID
	seenTitle
	seenSystem
	seenParent
	seenModel
	seenText
	seenIndex
	seenAttempt
	seenUsage
	seenStopReason
	seenLatencyMS
	seenError
	seenRetryable
	seenCallID
	seenName
	seenArgs
	seenOutput
	seenOutputRef
	seenDurationMS
	seenTimeoutMS
	seenReason
	seenLLM
	seenLimits
	seenProvider
	seenStep
	seenToolCalls
	seenRetryInMS
	seenStatus
	seenArgsError
	seenArgsText
	seenDecision
	seenRemember
	seenBy
	seenAssistant
	seenHistory
	seenBudget
	seenMode
	seenWorktree
	seenDelegated
	seenTools
	seenLoop
	seenCostUSD
	seenWhat
	seenLimit
	seenUsed
	seenWindow
	seenContextTokens
	seenContextDropped
	seenSummary
	seenReplaces
	seenTokensBefore
	seenTokensAfter
)

// data reads the object into *d (which must be zero); on false *d holds
// part of it.
func (p *dataParser) data(d *Data) bool {
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "project_id":
			bit = seenProjectID
			d.ProjectID, ok = p.string()
		case "conversation_id":
			bit = seenConversationID
			d.ConversationID, ok = p.string()
		case "title":
			bit = seenTitle
			d.Title, ok = p.string()
		case "system":
			bit = seenSystem
			d.System, ok = p.string()
		case "parent":
			bit = seenParent
			d.Parent, ok = p.forkOrigin()
		case "model":
			bit = seenModel
			d.Model, ok = p.string()
		case "text":
			bit = seenText
			d.Text, ok = p.string()
		case "index":
			bit = seenIndex
			d.Index, ok = p.int()
		case "attempt":
			bit = seenAttempt
			d.Attempt, ok = p.int()
		case "usage":
			bit = seenUsage
			d.Usage, ok = p.usage()
		case "stop_reason":
			bit = seenStopReason
			d.StopReason, ok = p.string()
		case "latency_ms":
			bit = seenLatencyMS
			d.LatencyMS, ok = p.int64()
		case "error":
			bit = seenError
			d.Error, ok = p.error()
		case "retryable":
			bit = seenRetryable
			d.Retryable, ok = p.bool()
		case "call_id":
			bit = seenCallID
			d.CallID, ok = p.string()
		case "name":
			bit = seenName
			d.Name, ok = p.string()
		case "args":
			bit = seenArgs
			d.Args, ok = p.raw()
		case "output":
			bit = seenOutput
			d.Output, ok = p.raw()
		case "output_ref":
			bit = seenOutputRef
			d.OutputRef, ok = p.artifactRef()
		case "duration_ms":
			bit = seenDurationMS
			d.DurationMS, ok = p.int64()
		case "timeout_ms":
			bit = seenTimeoutMS
			d.TimeoutMS, ok = p.int64()
		case "reason":
			bit = seenReason
			d.Reason, ok = p.string()
		case "llm":
			bit = seenLLM
			d.LLM, ok = p.llmConfig()
		case "limits":
			bit = seenLimits
			d.Limits, ok = p.limits()
		case "assistant":
			bit = seenAssistant
			d.Assistant, ok = p.bool()
		case "history":
			bit = seenHistory
			d.History, ok = p.int()
		case "provider":
			bit = seenProvider
			d.Provider, ok = p.string()
		case "step":
			bit = seenStep
			d.Step, ok = p.int()
		case "tool_calls":
			bit = seenToolCalls
			d.ToolCalls, ok = p.int()
		case "retry_in_ms":
			bit = seenRetryInMS
			d.RetryInMS, ok = p.int64()
		case "status":
			bit = seenStatus
			d.Status, ok = p.int()
		case "args_error":
			bit = seenArgsError
			d.ArgsError, ok = p.string()
		case "args_text":
			bit = seenArgsText
			d.ArgsText, ok = p.string()
		case "decision":
			bit = seenDecision
			d.Decision, ok = p.string()
		case "remember":
			bit = seenRemember
			d.Remember, ok = p.string()
		case "by":
			bit = seenBy
			d.By, ok = p.string()
		case "budget":
			bit = seenBudget
			d.Budget, ok = p.budget()
		case "mode":
			bit = seenMode
			d.Mode, ok = p.string()
		case "worktree":
			bit = seenWorktree
			d.Worktree, ok = p.worktree()
		case "delegated":
			bit = seenDelegated
			d.Delegated, ok = p.delegation()
		case "tools":
			bit = seenTools
			d.Tools, ok = p.strings()
		case "loop":
			bit = seenLoop
			d.Loop, ok = p.int()
		case "cost_usd":
			bit = seenCostUSD
			d.CostUSD, ok = p.float64()
		case "what":
			bit = seenWhat
			d.What, ok = p.string()
		case "limit":
			bit = seenLimit
			d.Limit, ok = p.float64()
		case "used":
			bit = seenUsed
			d.Used, ok = p.float64()
		case "window":
			bit = seenWindow
			d.Window, ok = p.int64()
		case "context_tokens":
			bit = seenContextTokens
			d.ContextTokens, ok = p.int64()
		case "context_dropped":
			bit = seenContextDropped
			d.ContextDropped, ok = p.int()
		case "summary":
			bit = seenSummary
			d.Summary, ok = p.string()
		case "replaces":
			bit = seenReplaces
			d.Replaces, ok = p.compactRange()
		case "tokens_before":
			bit = seenTokensBefore
			d.TokensBefore, ok = p.int64()
		case "tokens_after":
			bit = seenTokensAfter
			d.TokensAfter, ok = p.int64()
		default:
			// A member Data does not have (the files of a tool result,
			// the instruction files of a model call, a hook decision's
			// hook and via …), which encoding/json skips. One with an
			// upper-case letter might match a member regardless of case,
			// as encoding/json matches them: that is left to it.
			if !lowerASCII(key) {
				return 0, false
			}
			return 0, p.skip(0)
		}
		return bit, ok
	})
	if !ok {
		return false
	}
	p.space()
	return p.i == len(p.b)
}

// lowerASCII reports whether key has no upper-case ASCII letter (the
// parser reads only keys of ASCII without escapes): such a key matches a
// member of Data, whose names are lower-case, only when equal to it.
func lowerASCII(key []byte) bool {
	for _, c := range key {
		if 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

func (p *dataParser) budget() (*Budget, bool) {
	var b Budget
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "max_tokens":
			bit = 1
			b.MaxTokens, ok = p.int64()
		case "max_cost_usd":
			bit = 2
			b.MaxCostUSD, ok = p.float64()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &b, ok
}

func (p *dataParser) worktree() (*Worktree, bool) {
	var w Worktree
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "branch":
			bit = 1
			w.Branch, ok = p.string()
		case "path":
			bit = 2
			w.Path, ok = p.string()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &w, ok
}

func (p *dataParser) delegation() (*Delegation, bool) {
	var g Delegation
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "conversation":
			bit = 1
			g.Conversation, ok = p.string()
		case "call_id":
			bit = 2
			g.CallID, ok = p.string()
		case "depth":
			bit = 4
			g.Depth, ok = p.int()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &g, ok
}

func (p *dataParser) compactRange() (*CompactRange, bool) {
	var r CompactRange
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "from_seq":
			bit = 1
			r.FromSeq, ok = p.uint64()
		case "to_seq":
			bit = 2
			r.ToSeq, ok = p.uint64()
		case "messages":
			bit = 4
			r.Messages, ok = p.int()
		case "answers":
			bit = 8
			r.Answers, ok = p.int()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &r, ok
}

// strings reads an array of strings; as encoding/json does, an empty
// array gives an empty slice, not nil.
func (p *dataParser) strings() (*[]string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil, false
	}
	p.i++
	out := []string{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return &out, true
	}
	for {
		p.space()
		s, ok := p.string()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return &out, true
		default:
			return nil, false
		}
	}
}

func (p *dataParser) forkOrigin() (*ForkOrigin, bool) {
	var f ForkOrigin
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "conversation":
			bit = 1
			f.Conversation, ok = p.string()
		case "seq":
			bit = 2
			f.Seq, ok = p.uint64()
		case "event_id":
			bit = 4
			f.EventID, ok = p.string()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &f, ok
}

func (p *dataParser) llmConfig() (*LLMConfig, bool) {
	var c LLMConfig
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "provider":
			bit = 1
			c.Provider, ok = p.string()
		case "model":
			bit = 2
			c.Model, ok = p.string()
		case "base_url":
			bit = 4
			c.BaseURL, ok = p.string()
		case "api_key_env":
			bit = 8
			c.APIKeyEnv, ok = p.string()
		case "temperature":
			bit = 16
			var t float64
			t, ok = p.float64()
			c.Temperature = &t
		case "max_tokens":
			bit = 32
			c.MaxTokens, ok = p.int()
		case "timeout_ms":
			bit = 64
			c.TimeoutMS, ok = p.int64()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &c, ok
}

func (p *dataParser) limits() (*Limits, bool) {
	var l Limits
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "max_steps":
			bit = 1
			l.MaxSteps, ok = p.int()
		case "max_tool_calls":
			bit = 2
			l.MaxToolCalls, ok = p.int()
		case "parallel_tools":
			bit = 4
			l.ParallelTools, ok = p.int()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &l, ok
}

func (p *dataParser) usage() (*Usage, bool) {
	var u Usage
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "input_tokens":
			bit = 1
			u.InputTokens, ok = p.int64()
		case "output_tokens":
			bit = 2
			u.OutputTokens, ok = p.int64()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &u, ok
}

func (p *dataParser) error() (*bus.Error, bool) {
	var e bus.Error
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "type":
			bit = 1
			e.Type, ok = p.string()
		case "message":
			bit = 2
			e.Message, ok = p.string()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &e, ok
}

func (p *dataParser) artifactRef() (*ArtifactRef, bool) {
	var r ArtifactRef
	ok := p.members(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "id":
			bit = 1
			r.ID, ok = p.string()
		case "size":
			bit = 2
			r.Size, ok = p.int64()
		case "media_type":
			bit = 4
			r.MediaType, ok = p.string()
		case "preview":
			bit = 8
			r.Preview, ok = p.string()
		default:
			return 0, false
		}
		return bit, ok
	})
	return &r, ok
}

// space skips JSON whitespace.
func (p *dataParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads an object, calling member with each key (without quotes;
// only keys without escapes are handled) when the parser is at the
// member's value, which member must read.
// members parses an object whose members fn reads, each known member
// naming its own bit: a member seen twice (which encoding/json would take
// the last of) fails, so that the caller falls back to encoding/json.
func (p *dataParser) members(fn func(key []byte) (bit uint64, ok bool)) bool {
	var seen uint64
	return p.object(func(key []byte) bool {
		bit, ok := fn(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

func (p *dataParser) object(member func(key []byte) bool) bool {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		start := p.i + 1
		end := start
		for end < len(p.b) && p.b[end] != '"' && p.b[end] != '\\' && p.b[end] >= 0x20 && p.b[end] < utf8.RuneSelf {
			end++
		}
		if end >= len(p.b) || p.b[end] != '"' {
			return false
		}
		p.i = end + 1
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		if !member(p.b[start:end]) {
			return false
		}
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// string reads a string. One without escapes is a substring of p.s; one
// with escapes is built on its own. Invalid UTF-8, which encoding/json
// replaces, is left to it.
func (p *dataParser) string() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	end, ascii := start, true
	for end < len(p.b) {
		c := p.b[end]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
		end++
	}
	if end >= len(p.b) || p.b[end] < 0x20 {
		return "", false
	}
	if !ascii && !utf8.Valid(p.b[start:end]) {
		return "", false
	}
	if p.b[end] == '"' {
		p.i = end + 1
		if p.s == "" {
			if p.shared {
				p.s = unsafe.String(&p.b[0], len(p.b))
			} else {
				p.s = string(p.b)
			}
		}
		return p.s[start:end], true
	}
	return p.escaped(start, end)
}

// escaped reads a string with escapes, from start; the bytes up to end
// need no unescaping. It follows encoding/json's unquote, surrogate
// handling included.
func (p *dataParser) escaped(start, end int) (string, bool) {
	buf := make([]byte, 0, end-start+16)
	buf = append(buf, p.b[start:end]...)
	i := end
	for i < len(p.b) {
		c := p.b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if i+1 >= len(p.b) {
				return "", false
			}
			switch p.b[i+1] {
			case '"', '\\', '/':
				buf = append(buf, p.b[i+1])
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r := hex4(p.b[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(p.b) > i+1 && p.b[i] == '\\' && p.b[i+1] == 'u' {
						if r2 := hex4(p.b[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.b[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			buf = append(buf, p.b[i:i+size]...)
			i += size
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// digits reads an integer without fraction or exponent (those, and
// numbers past 19 digits, are left to encoding/json) and returns its
// magnitude and sign.
func (p *dataParser) digits() (v uint64, neg, ok bool) {
	i := p.i
	if i < len(p.b) && p.b[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
		v = v*10 + uint64(p.b[i]-'0')
		i++
	}
	n := i - start
	if n == 0 || n > 19 || (n > 1 && p.b[start] == '0') {
		return 0, false, false
	}
	if i < len(p.b) {
		switch p.b[i] {
		case '.', 'e', 'E':
			return 0, false, false
		}
	}
	p.i = i
	return v, neg, true
}

func (p *dataParser) int64() (int64, bool) {
	v, neg, ok := p.digits()
	if !ok || v > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// int reads an int member; a value out of int's range is left to
// encoding/json.
func (p *dataParser) int() (int, bool) {
	v, ok := p.int64()
	if !ok || int64(int(v)) != v {
		return 0, false
	}
	return int(v), true
}

// float64 reads a number as encoding/json does: its text through
// strconv.ParseFloat; one out of float64's range is left to encoding/json.
func (p *dataParser) float64() (float64, bool) {
	start := p.i
	if !p.skipNumber() {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	return f, err == nil
}

func (p *dataParser) uint64() (uint64, bool) {
	v, neg, ok := p.digits()
	return v, ok && !neg
}

func (p *dataParser) bool() (bool, bool) {
	switch {
	case hasLiteral(p.b[p.i:], "true"):
		p.i += 4
		return true, true
	case hasLiteral(p.b[p.i:], "false"):
		p.i += 5
		return false, true
	}
	return false, false
}

func hasLiteral(b []byte, lit string) bool {
	return len(b) >= len(lit) && string(b[:len(lit)]) == lit
}

// raw reads any value and returns a copy of its bytes, as json.RawMessage
// does; shared, its bytes in b, capped so that an append copies.
func (p *dataParser) raw() (json.RawMessage, bool) {
	start := p.i
	if !p.skip(0) {
		return nil, false
	}
	if p.shared {
		return json.RawMessage(p.b[start:p.i:p.i]), true
	}
	return append(json.RawMessage(nil), p.b[start:p.i]...), true
}

// skip reads one value, checking its syntax as strictly as encoding/json.
func (p *dataParser) skip(depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return true
		}
		for {
			p.space()
			if !p.skipString() {
				return false
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case ',':
				p.i++
			case '}':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return true
		}
		for {
			p.space()
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.skipNumber()
	case c == 't':
		return p.skipLiteral("true")
	case c == 'f':
		return p.skipLiteral("false")
	case c == 'n':
		return p.skipLiteral("null")
	}
	return false
}

func (p *dataParser) skipLiteral(lit string) bool {
	if !hasLiteral(p.b[p.i:], lit) {
		return false
	}
	p.i += len(lit)
	return true
}

// skipString reads a string without decoding it; like encoding/json's
// scanner it checks escapes and control characters, not UTF-8.
func (p *dataParser) skipString() bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	i := p.i + 1
	for i < len(p.b) {
		switch c := p.b[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(p.b) {
				return false
			}
			switch p.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(p.b[i+2:]) < 0 {
					return false
				}
				i += 6
			default:
				return false
			}
		default:
			i++
		}
	}
	return false
}

// skipNumber reads a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *dataParser) skipNumber() bool {
	end, ok := jsonenc.NumberEnd(p.b, p.i)
	if ok {
		p.i = end
	}
	return ok
}
