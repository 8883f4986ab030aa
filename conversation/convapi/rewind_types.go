package convapi

// VerbRewind is conv.rewind (Service.Rewind), an operator's: it writes
// the project's files and starts a conversation, as fork does.
const VerbRewind = "rewind"

// RewindRequest is conv.rewind's body: put back the files conversation
// Conv changed after its stream sequence To and fork it there (into As,
// default "<conv>-fork-<to>").
type RewindRequest struct {
	Conv string `json:"conv"`
	To   uint64 `json:"to"`
	As   string `json:"as,omitempty"`
	// Force overwrites files changed outside the conversation since its
	// last change of them.
	Force bool `json:"force,omitempty"`
	// DryRun lists what would be put back and does nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// RewindReply says what a rewind did (or, DryRun, would do).
type RewindReply struct {
	Conv   string `json:"conv"`
	Fork   string `json:"fork"`
	To     uint64 `json:"to"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Files are the files put back, in the order of their last change
	// (they are put back in the reverse order).
	Files []RewoundFile `json:"files"`
	// Unchecked are the calls after To that ran programs (run_command,
	// command and workflow tools): what they changed is not checkpointed
	// file by file and is not undone.
	Unchecked []UncheckedCall `json:"unchecked,omitempty"`
	// Events and Version are the fork's (ForkReply).
	Events  int    `json:"events,omitempty"`
	Version uint64 `json:"version,omitempty"`
}

// RewoundFile is one file of a rewind.
type RewoundFile struct {
	Path string `json:"path"`
	// Action is restore (its content before the conversation's first
	// change after the step) or remove (it did not exist then).
	Action string `json:"action"`
	// Seq is the stream sequence of the conversation's last change of it.
	Seq uint64 `json:"seq"`
	// Changed: its content now is not what that change left (changed
	// outside the conversation); only --force puts it back.
	Changed bool `json:"changed_outside,omitempty"`
	// Done: it was put back.
	Done bool `json:"done,omitempty"`
}

// UncheckedCall is a tool call whose changes a rewind cannot undo.
type UncheckedCall struct {
	Seq    uint64 `json:"seq"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
}
