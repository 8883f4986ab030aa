package convapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Files is what conv.rewind needs of the node's project files and of the
// checkpoint store that keeps their contents before a conversation's
// tools changed them (the project engine is one). Paths are relative to
// the root conversation conv works in: its project's checkout, or its own
// worktree when it has one.
type Files interface {
	// FileHash is the sha256:<hex> of the file now, "" when it does not
	// exist.
	FileHash(conv, path string) (string, error)
	// RestoreFile writes content to the file; nil removes it.
	RestoreFile(conv, path string, content []byte) error
	// CheckpointContent is the content of a hash the store kept.
	CheckpointContent(hash string) ([]byte, error)
	// ShareCheckpoints makes conversation conv hold the hashes too.
	ShareCheckpoints(conv string, hashes []string) error
}

// fileChange is one entry of a conversation.tool.completed's data.files
// (tools.FileChange as the log has it).
type fileChange struct {
	Path    string `json:"path"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after"`
	NotKept string `json:"not_kept,omitempty"`
}

// changed is a file the conversation changed after the step: the content
// to put back (its first change's before) and the one its last change
// left.
type changed struct {
	first, last fileChange
	lastSeq     uint64
}

// Rewind puts back the files conversation Conv's tools changed after its
// stream sequence To (each to its content before the first of those
// changes, the latest changed first) and forks the conversation at To
// (Fork): the fork continues from there, Conv stays as it was.
//
// A file whose content now is not what the conversation's last change
// left was changed outside the conversation since: it is listed and
// nothing is done, unless Force. DryRun lists what would be done and
// does nothing. What run_command (or any tool that runs programs) did
// after To is not undone: its calls are listed in Unchecked.
func (s *Service) Rewind(ctx context.Context, req RewindRequest) (RewindReply, error) {
	if s.files == nil {
		return RewindReply{}, bus.Errorf(bus.ReasonUnavailable, "this node keeps no checkpoints: conv rewind needs a node with a data dir")
	}
	if req.To == 0 {
		return RewindReply{}, bus.Errorf(bus.ReasonInvalidRequest, "rewind needs the step to go back to (--to SEQ, the number conv show prints beside each item)")
	}
	as, err := checkFork(ForkRequest{Conv: req.Conv, Seq: req.To, As: req.As})
	if err != nil {
		return RewindReply{}, err
	}
	if err := s.idle(req.Conv); err != nil {
		return RewindReply{}, err
	}
	files, unchecked, kept, end, err := s.changesAfter(req.Conv, req.To)
	if err != nil {
		return RewindReply{}, err
	}
	if req.To > end {
		return RewindReply{}, bus.Errorf(bus.ReasonInvalidRequest, "conversation %s ends at seq %d: rewind --to a seq at or before it", req.Conv, end)
	}
	reply := RewindReply{Conv: req.Conv, Fork: as, To: req.To, DryRun: req.DryRun, Unchecked: unchecked}
	var conflicts, lost []string
	contents := map[string][]byte{}
	for _, c := range files {
		f := RewoundFile{Path: c.first.Path, Seq: c.lastSeq, Action: "restore"}
		if c.first.Before == "" {
			f.Action = "remove"
		}
		now, err := s.files.FileHash(req.Conv, c.first.Path)
		if err != nil {
			return RewindReply{}, fmt.Errorf("rewind %s: read %s: %w", req.Conv, c.first.Path, err)
		}
		if now != c.last.After {
			f.Changed = true
			conflicts = append(conflicts, c.first.Path)
		}
		if f.Action == "restore" {
			data, err := s.contentBefore(c.first)
			if err != nil {
				lost = append(lost, fmt.Sprintf("%s (%v)", c.first.Path, err))
			}
			contents[c.first.Path] = data
		}
		reply.Files = append(reply.Files, f)
	}
	if len(lost) > 0 {
		return reply, bus.Errorf(ReasonNotCheckpointed, "rewind %s to seq %d: the content before of %s is not kept; nothing was done: restore these by hand (git) or rewind to a later step", req.Conv, req.To, strings.Join(lost, ", "))
	}
	if len(conflicts) > 0 && !req.Force {
		return reply, bus.Errorf(ReasonChangedOutside, "rewind %s to seq %d: %s changed outside the conversation since its last change (its content is not what the conversation left); nothing was done: look at them, then rewind with --force to overwrite them", req.Conv, req.To, strings.Join(conflicts, ", "))
	}
	if req.DryRun {
		return reply, nil
	}
	fork, err := s.Fork(ctx, ForkRequest{Conv: req.Conv, Seq: req.To, As: as})
	if err != nil {
		return reply, err
	}
	reply.Events, reply.Version = fork.Events, fork.Version
	if err := s.files.ShareCheckpoints(as, kept); err != nil {
		s.logger.Warn("rewind: the fork does not hold its parent's checkpoints", "fork", as, "err", err)
	}
	// The latest changed first: the reverse of the order they were made.
	for i := len(reply.Files) - 1; i >= 0; i-- {
		f := &reply.Files[i]
		if err := s.files.RestoreFile(req.Conv, f.Path, contents[f.Path]); err != nil {
			return reply, bus.Errorf(bus.ReasonUnavailable, "rewind %s: forked into %s, but %s could not be put back (%v); the files after it in the list are put back, those before it are not: restore them by hand", req.Conv, as, f.Path, err)
		}
		f.Done = true
	}
	s.logger.Info("conversation rewound", "conversation", req.Conv, "to", req.To, "fork", as, "files", len(reply.Files))
	return reply, nil
}

// Reasons of conv.rewind's refusals.
const (
	// ReasonChangedOutside: a file to put back was changed outside the
	// conversation since its last change (--force overwrites it).
	ReasonChangedOutside = "changed_outside"
	// ReasonNotCheckpointed: the content before a change is not kept.
	ReasonNotCheckpointed = "not_checkpointed"
)

func (s *Service) contentBefore(c fileChange) ([]byte, error) {
	if c.NotKept != "" {
		return nil, fmt.Errorf("not kept: %s", c.NotKept)
	}
	return s.files.CheckpointContent(c.Before)
}

// idle refuses to rewind a conversation at work: a tool or model call in
// flight would go on changing files behind the rewind.
func (s *Service) idle(key string) error {
	info, err := s.rt.State(key)
	if err != nil {
		return nil // not running: nothing at work
	}
	st, err := conversation.ReadState(info.State)
	if err != nil {
		return nil
	}
	if len(st.PendingTools) > 0 || st.LLMRequest != "" || st.Loop.Request != "" {
		return bus.Errorf(ReasonBusy, "conversation %s is at work (a model or tool call in flight); wait for its turn to end or stop it with jido-bus conv cancel %s, then rewind", key, key)
	}
	return nil
}

// ReasonBusy: the conversation is at work.
const ReasonBusy = "busy"

// changesAfter reads conversation key's stream: the files its tools
// changed after seq (in the order of their last change), the tool calls
// after seq that ran programs (whose effects are not checkpointed), the
// hashes of the contents kept at or before seq (which a fork may still
// rewind to), and the stream's last seq.
func (s *Service) changesAfter(key string, seq uint64) ([]changed, []UncheckedCall, []string, uint64, error) {
	var (
		byPath    = map[string]*changed{}
		order     []string
		unchecked []UncheckedCall
		kept      []string
		names     = map[string]string{}
		end       uint64
	)
	for e, err := range s.log.ReadStream(conversation.Stream(key), eventlog.ReadOptions{}) {
		if err != nil {
			return nil, nil, nil, 0, asNotFound(fmt.Errorf("conversation %s: %w", key, err))
		}
		end = e.Seq
		var d struct {
			CallID string       `json:"call_id"`
			Name   string       `json:"name"`
			Files  []fileChange `json:"files"`
		}
		switch e.Event.Type() {
		case conversation.ToolRequested:
			if json.Unmarshal(e.Event.Data(), &d) == nil {
				names[d.CallID] = d.Name
			}
		case conversation.ToolStarted:
			if json.Unmarshal(e.Event.Data(), &d) == nil && e.Seq > seq && runsPrograms(names[d.CallID]) {
				unchecked = append(unchecked, UncheckedCall{Seq: e.Seq, CallID: d.CallID, Tool: names[d.CallID]})
			}
		case conversation.ToolCompleted:
			if json.Unmarshal(e.Event.Data(), &d) != nil {
				continue
			}
			for _, f := range d.Files {
				if e.Seq <= seq {
					if f.Before != "" && f.NotKept == "" {
						kept = append(kept, f.Before)
					}
					continue
				}
				c, ok := byPath[f.Path]
				if !ok {
					c = &changed{first: f}
					byPath[f.Path] = c
				}
				c.last, c.lastSeq = f, e.Seq
				order = slices.DeleteFunc(order, func(p string) bool { return p == f.Path })
				order = append(order, f.Path)
			}
		}
	}
	out := make([]changed, 0, len(order))
	for _, p := range order {
		out = append(out, *byPath[p])
	}
	return out, unchecked, kept, end, nil
}

// runsPrograms: tools whose changes are not checkpointed file by file
// (run_command and the project's command tools run programs, which
// write what they like).
func runsPrograms(tool string) bool {
	return tool == "run_command" || strings.HasPrefix(tool, "command_") || strings.HasPrefix(tool, "workflow_")
}
