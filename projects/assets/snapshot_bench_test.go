package assets

import (
	"fmt"
	"testing"
)

// benchTree is the project: 1,000 skills, 1,000 commands (10
// namespaces), 100 workflows (each calling a tool and a command) and a
// skill graph of 10,000 notes in 100 folders, linked by id and by name.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("skill-%04d", i)
		write(b, dir, "skills/"+name+"/SKILL.md", skillMD(name, "A skill used by the benchmark."))
		write(b, dir, fmt.Sprintf("commands/ns%d/cmd%04d.md", i%10, i), "---\ndescription: bench\n---\nDo $ARGUMENTS with {{what}}.\n")
	}
	for i := range 100 {
		write(b, dir, fmt.Sprintf("workflows/flow%03d.md", i), fmt.Sprintf("---\nname: flow%03d\ndescription: bench\ninputs:\n  path: {type: string}\n---\n"+
			"```yaml\nsteps:\n  - {id: read, tool: read_file, args: {path: \"{{inputs.path}}\"}}\n  - {id: run, command: ns%d:cmd%04d, args: {what: \"{{steps.read.output}}\"}}\n```\n", i, i%10, i))
	}
	write(b, dir, "skill_graph/index.md", "# Index\n[[d0/n0]]\n")
	for i := range 10000 {
		d, n := i/100, i%100
		write(b, dir, fmt.Sprintf("skill_graph/d%d/n%d.md", d, n), fmt.Sprintf("# Note %d\n\nAbout topic%d.\nSee [[d%d/n%d]] and [[d%d/n%d]].\n", i, i%37, d, (n+1)%100, (d+1)%100, n))
	}
	return dir
}

// benchOpts is the catalog the benchmark's workflows load against.
var benchOpts = Options{KnownTools: func(name string) bool { return name == "read_file" }}

// checkBenchSet fails b unless the whole tree loaded.
func checkBenchSet(b *testing.B, s *Snapshot) {
	if len(s.Skills) != 1000 || len(s.Commands) != 1000 || len(s.Workflows) != 100 || s.Graph.Len() != 10001 {
		b.Fatalf("loaded %d skills, %d commands, %d workflows, %d notes; diagnostics %v", len(s.Skills), len(s.Commands), len(s.Workflows), s.Graph.Len(), s.Diagnostics[:min(3, len(s.Diagnostics))])
	}
}

// BenchmarkLoad is a first load of the whole tree.
func BenchmarkLoad(b *testing.B) {
	dir := benchTree(b)
	b.ResetTimer()
	for b.Loop() {
		s, err := Load(dir, benchOpts)
		if err != nil {
			b.Fatal(err)
		}
		checkBenchSet(b, s)
	}
}

// BenchmarkReloadOneChanged is a reload of the same tree after one skill
// changed: every file is stat'ed, only the changed one is read, and the
// graph is reused whole.
func BenchmarkReloadOneChanged(b *testing.B) {
	benchReload(b, "skills/skill-0001/SKILL.md", func(i int) string { return skillMD("skill-0001", fmt.Sprintf("changed %d", i)) },
		func(c Changes) int { return len(c.Skills.Changed) })
}

// BenchmarkReloadOneNoteChanged is a reload after one note changed: one
// file read, the graph's links resolved again.
func BenchmarkReloadOneNoteChanged(b *testing.B) {
	benchReload(b, "skill_graph/d5/n5.md", func(i int) string { return fmt.Sprintf("# Note changed %d\n[[n6]]\n", i) },
		func(c Changes) int { return len(c.Notes.Changed) })
}

// benchReload times Load with the previous snapshot after rel was
// rewritten with content(i); changed counts what the diff saw change.
func benchReload(b *testing.B, rel string, content func(int) string, changed func(Changes) int) {
	dir := benchTree(b)
	prev, err := Load(dir, benchOpts)
	if err != nil {
		b.Fatal(err)
	}
	checkBenchSet(b, prev)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		i++
		write(b, dir, rel, content(i))
		bump(b, dir, rel)
		b.StartTimer()
		opts := benchOpts
		opts.Previous = prev
		next, err := Load(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if changed(Diff(prev, next)) != 1 {
			b.Fatal("change not seen")
		}
		prev = next
	}
}
