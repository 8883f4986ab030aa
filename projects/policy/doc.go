// Package policy is a project's sandbox: every file a tool touches is reached
// through a Root opened once on the project's real root directory, and every
// tool call is authorized by a Policy whose rules are matched on the path the
// Root resolved, never on the string the tool sent.
//
// Invariants:
//   - No operation of Root reads, writes, lists or removes anything outside
//     the root, whatever the path holds (.., absolute paths, symlinks at the
//     end or in the middle, links swapped in while the operation runs). Such
//     paths are refused with an error of type "outside_root".
//   - The path a rule sees is the resolved one: clean, relative to the root,
//     '/'-separated, with every symlink inside the root replaced by its
//     target. The file an operation then acts on is checked to be that very
//     file (same device and inode), so a rule cannot be bypassed by swapping
//     a component between the check and the use.
//   - Refusals are *bus.Error values of type "outside_root", "denied" or
//     "approval_required" whose message says what to do.
package policy
