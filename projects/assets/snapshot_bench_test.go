package assets

import (
	"fmt"
	"testing"
)

// benchTree is 1,000 skills and 1,000 commands (10 namespaces).
func benchTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("skill-%04d", i)
		write(b, dir, "skills/"+name+"/SKILL.md", skillMD(name, "A skill used by the benchmark."))
		write(b, dir, fmt.Sprintf("commands/ns%d/cmd%04d.md", i%10, i), "---\ndescription: bench\n---\nDo $ARGUMENTS with {{what}}.\n")
	}
	return dir
}

// BenchmarkLoad is a first load of 1,000 skills and 1,000 commands.
func BenchmarkLoad(b *testing.B) {
	dir := benchTree(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Load(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReloadOneChanged is a reload of the same tree after one skill
// changed: every file is stat'ed, only the changed one is read.
func BenchmarkReloadOneChanged(b *testing.B) {
	dir := benchTree(b)
	prev, err := Load(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		i++
		write(b, dir, "skills/skill-0001/SKILL.md", skillMD("skill-0001", fmt.Sprintf("changed %d", i)))
		bump(b, dir, "skills/skill-0001/SKILL.md")
		b.StartTimer()
		next, err := Load(dir, Options{Previous: prev})
		if err != nil {
			b.Fatal(err)
		}
		if len(Diff(prev, next).Skills.Changed) != 1 {
			b.Fatal("change not seen")
		}
		prev = next
	}
}
