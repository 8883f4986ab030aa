//go:build !linux

package bench

// statfsType is only known on Linux; elsewhere /proc/mounts (when there is
// one) is all there is.
func statfsType(string) (string, bool) { return "", false }
