//go:build !linux

package projects

// fsPathOf is unknown outside Linux: the chain of device and inode numbers
// (place.chain) is what compares roots there.
func fsPathOf(string) fsPath { return fsPath{} }
