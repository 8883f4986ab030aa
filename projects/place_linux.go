package projects

import (
	"bufio"
	"os"
	"strings"
)

// fsPathOf is real's path inside its file system, from the mount that
// holds it in /proc/self/mountinfo (the last of those mounted on the
// longest mount point that is real or an ancestor: the one on top). A
// bind mount's fourth field is the folder it shows, so /mnt/b bound from
// /a/sub is /a/sub here, as /a/sub itself is. The zero fsPath when
// mountinfo cannot be read.
func fsPathOf(real string) fsPath {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fsPath{}
	}
	defer f.Close()
	var best fsPath
	bestPoint := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mount-point options … - type source …
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		dev, root, point := fields[2], unescapeMount(fields[3]), unescapeMount(fields[4])
		if point != real && !within(point, real) {
			continue
		}
		if len(point) < bestPoint {
			continue
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(real, point), "/")
		p := strings.TrimSuffix(root, "/") + "/" + rest
		if p != "/" {
			p = strings.TrimSuffix(p, "/")
		}
		best, bestPoint = fsPath{dev: dev, path: p}, len(point)
	}
	if sc.Err() != nil {
		return fsPath{}
	}
	return best
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
