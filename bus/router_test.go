package bus

import (
	"fmt"
	"slices"
	"testing"
)

func TestRouterOrder(t *testing.T) {
	cases := []struct {
		name   string
		routes []struct {
			pattern  string
			priority int
		}
		signal string
		want   []string // targets, best first
	}{
		{
			name: "literal beats single beats multi",
			routes: []struct {
				pattern  string
				priority int
			}{{"user.**", 0}, {"user.*", 0}, {"user.created", 0}},
			signal: "user.created",
			want:   []string{"user.created", "user.*", "user.**"},
		},
		{
			name: "specificity beats priority",
			routes: []struct {
				pattern  string
				priority int
			}{{"user.*", 100}, {"user.created", -100}},
			signal: "user.created",
			want:   []string{"user.created", "user.*"},
		},
		{
			name: "earlier segments weigh more",
			routes: []struct {
				pattern  string
				priority int
			}{{"*.created", 0}, {"user.*", 0}},
			signal: "user.created",
			want:   []string{"user.*", "*.created"},
		},
		{
			name: "priority breaks ties of specificity",
			routes: []struct {
				pattern  string
				priority int
			}{{"user.*", 1}, {"*.created", 0}, {"*.created", 5}},
			signal: "user.created",
			want:   []string{"user.*", "*.created#5", "*.created#0"},
		},
		{
			name: "registration order breaks full ties",
			routes: []struct {
				pattern  string
				priority int
			}{{"a.b", 0}, {"a.b", 0}, {"a.b", 0}},
			signal: "a.b",
			want:   []string{"a.b@0", "a.b@1", "a.b@2"},
		},
		{
			name: "end of pattern beats trailing multi",
			routes: []struct {
				pattern  string
				priority int
			}{{"audit.**", 0}, {"audit", 0}},
			signal: "audit",
			want:   []string{"audit", "audit.**"},
		},
		{
			name: "a required segment beats the end of another pattern",
			routes: []struct {
				pattern  string
				priority int
			}{{"a.**", 0}, {"a.**.c", 0}, {"**", 0}},
			signal: "a.c",
			want:   []string{"a.**.c", "a.**", "**"},
		},
		{
			name: "non-matching routes are left out",
			routes: []struct {
				pattern  string
				priority int
			}{{"user.updated", 0}, {"order.*", 0}, {"**.created", 0}},
			signal: "user.created",
			want:   []string{"**.created"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRouter[string]()
			for i, rt := range c.routes {
				target := rt.pattern
				switch c.name {
				case "priority breaks ties of specificity":
					target = fmt.Sprintf("%s#%d", rt.pattern, rt.priority)
					if rt.pattern == "user.*" {
						target = rt.pattern
					}
				case "registration order breaks full ties":
					target = fmt.Sprintf("%s@%d", rt.pattern, i)
				}
				if _, err := r.Add(rt.pattern, rt.priority, target); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, m := range r.Match(c.signal) {
				got = append(got, m.Target)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Match(%q) = %v, want %v", c.signal, got, c.want)
			}
			first, ok := r.First(c.signal)
			if !ok || first.Target != c.want[0] {
				t.Fatalf("First(%q) = %v, %v; want %v", c.signal, first.Target, ok, c.want[0])
			}
		})
	}
}

func TestRouterMatchesOncePerRoute(t *testing.T) {
	r := NewRouter[int]()
	if _, err := r.Add("**.a.**", 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := r.Match("a.a.a.a"); len(got) != 1 {
		t.Fatalf("a route reachable along several paths matched %d times", len(got))
	}
}

func TestRouterRejects(t *testing.T) {
	r := NewRouter[int]()
	if _, err := r.Add("a..b", 0, 1); ErrorType(err) != ReasonInvalidPattern {
		t.Errorf("Add(invalid pattern) = %v", err)
	}
	for _, p := range []int{-101, 101} {
		if _, err := r.Add("a", p, 1); ErrorType(err) != ReasonInvalidPattern {
			t.Errorf("Add(priority %d) = %v", p, err)
		}
	}
	if r.Len() != 0 {
		t.Fatalf("refused routes were added: %d", r.Len())
	}
	if _, ok := r.First("a..b"); ok {
		t.Fatal("an invalid type matched")
	}
}

func TestRouterRemove(t *testing.T) {
	r := NewRouter[string]()
	id1, _ := r.Add("a.*", 0, "one")
	id2, _ := r.Add("a.*", 0, "two")
	if !r.Remove(id1) || r.Remove(id1) {
		t.Fatal("Remove should succeed once")
	}
	got := r.Match("a.b")
	if len(got) != 1 || got[0].ID != id2 {
		t.Fatalf("after Remove, Match = %+v", got)
	}
	if r.Len() != 1 || len(r.Routes()) != 1 {
		t.Fatalf("Len = %d, Routes = %d", r.Len(), len(r.Routes()))
	}
}

func TestRouterConcurrentUse(t *testing.T) {
	r := NewRouter[int]()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			id, _ := r.Add(fmt.Sprintf("t%d.*", i%10), 0, i)
			if i%3 == 0 {
				r.Remove(id)
			}
		}
	}()
	for range 200 {
		r.Match("t1.x")
	}
	<-done
	if got := len(r.Match("t1.x")); got == 0 {
		t.Fatal("no route for t1.x after the writer finished")
	}
}
