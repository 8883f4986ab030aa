package conversation

// Worktree is the git worktree a conversation works in
// (conversation.started's data.worktree): its own checkout of the
// project's repository on its own branch, made by the node when the
// conversation started, so that two conversations never edit the same
// files. Every tool call of the conversation runs with Path as its root,
// under the project's policy. Path is where the node made it; the node
// uses its own record of where its worktrees are, never this value, to
// run a call, so a forged start cannot point a conversation elsewhere.
type Worktree struct {
	Branch string `json:"branch"`
	Path   string `json:"path"`
}

// WorktreeEnd says what became of a conversation's worktree when the
// conversation stopped.
type WorktreeEnd struct {
	Branch string `json:"branch"`
	Path   string `json:"path"`
	// Removed: the worktree's folder is gone. Kept says why it is not
	// when removal was asked for.
	Removed bool   `json:"removed"`
	Kept    string `json:"kept,omitempty"`
	// BranchKept: the branch stays, with Commits commits the project's
	// HEAD does not have (a removed worktree's branch is deleted only
	// when it has none).
	BranchKept bool `json:"branch_kept"`
	Commits    int  `json:"commits,omitempty"`
}
