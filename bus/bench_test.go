package bus

import (
	"fmt"
	"testing"
)

func BenchmarkMatchPattern(b *testing.B) {
	cases := []struct{ name, pattern, typ string }{
		{"exact", "user.profile.created", "user.profile.created"},
		{"single", "user.*.created", "user.profile.created"},
		{"trailing-multi", "user.**", "user.profile.created"},
		{"middle-multi", "user.**.created", "user.a.b.c.d.created"},
		{"no-match", "user.**.deleted", "user.a.b.c.d.created"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MatchPattern(c.pattern, c.typ)
			}
		})
	}
}

// BenchmarkRouter looks up a type among n routes: if routing were a scan,
// the time per lookup would grow a hundredfold from 100 to 10,000 routes.
func BenchmarkRouter(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		r := NewRouter[int]()
		for i := range n {
			var pattern string
			switch i % 4 {
			case 0:
				pattern = fmt.Sprintf("svc%d.event%d", i, i)
			case 1:
				pattern = fmt.Sprintf("svc%d.*", i)
			case 2:
				pattern = fmt.Sprintf("svc%d.**", i)
			default:
				pattern = fmt.Sprintf("svc%d.**.done", i)
			}
			if _, err := r.Add(pattern, i%201-100, i); err != nil {
				b.Fatal(err)
			}
		}
		// Routes that every lookup finds, so there is ordering work to do.
		for _, p := range []string{"**", "*.**", "**.done", "hot.**", "hot.*.b.done", "hot.a.**"} {
			if _, err := r.Add(p, 0, -1); err != nil {
				b.Fatal(err)
			}
		}
		const typ = "hot.a.b.done"
		b.Run(fmt.Sprintf("routes=%d/first", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := r.First(typ); !ok {
					b.Fatal("no match")
				}
			}
		})
		b.Run(fmt.Sprintf("routes=%d/match-all", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(r.Match(typ)) != 6 {
					b.Fatal("too few matches")
				}
			}
		})
	}
}
