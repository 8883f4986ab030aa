package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Disk      Disk   `json:"disk"`
}

// Disk describes the filesystem holding the data directory.
type Disk struct {
	Path       string `json:"path"`
	Device     string `json:"device,omitempty"`
	FSType     string `json:"fs_type,omitempty"`
	MountPoint string `json:"mount_point,omitempty"`
	// Tmpfs is true when the directory lives in memory (tmpfs, ramfs).
	Tmpfs bool `json:"tmpfs"`
}

func (d Disk) String() string {
	if d.FSType == "" {
		return d.Path + " (filesystem unknown)"
	}
	return fmt.Sprintf("%s on %s %s mounted at %s", d.Path, d.FSType, d.Device, d.MountPoint)
}

// DescribeMachine reads the CPU model from /proc/cpuinfo and the
// filesystem of dir from /proc/mounts (and statfs), where the system has
// them; what cannot be known is left empty.
func DescribeMachine(dir string) Machine {
	return Machine{
		CPU:       cpuModel(),
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		Disk:      describeDisk(dir),
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

func describeDisk(dir string) Disk {
	path, err := filepath.Abs(dir)
	if err != nil {
		path = dir
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	d := Disk{Path: path}
	if data, err := os.ReadFile("/proc/mounts"); err == nil {
		d.Device, d.FSType, d.MountPoint = mountOf(string(data), path)
	}
	if fs, ok := statfsType(path); ok {
		if d.FSType == "" {
			d.FSType = fs
		}
		d.Tmpfs = d.Tmpfs || fs == "tmpfs" || fs == "ramfs"
	}
	d.Tmpfs = d.Tmpfs || d.FSType == "tmpfs" || d.FSType == "ramfs"
	return d
}

// mountOf finds the entry of /proc/mounts (given as text) whose mount
// point is the longest prefix of path.
func mountOf(mounts, path string) (device, fsType, mountPoint string) {
	for line := range strings.Lines(mounts) {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		mp := unescapeMount(fields[1])
		if !within(path, mp) || len(mp) < len(mountPoint) {
			continue
		}
		device, fsType, mountPoint = fields[0], fields[2], mp
	}
	return device, fsType, mountPoint
}

func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// unescapeMount undoes the octal escapes of /proc/mounts (\040 for space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
