package assets

import (
	"errors"
	"strings"
	"testing"
)

func TestCommandExpand(t *testing.T) {
	cases := []struct {
		name, body string
		pos        []string
		named      map[string]string
		want       string
		includes   []string
	}{
		{"arguments", "Fix $ARGUMENTS.", []string{"the", "bug"}, nil, "Fix the bug.", nil},
		{"positional", "$1 then $2, $9 empty, $10 is $1 then 0", []string{"a", "b"}, nil, "a then b,  empty, a0 is a then 0", nil},
		{"named", "Hi {{who}} and {{ who }}; {{other thing}} stays", nil, map[string]string{"who": "Ann"}, "Hi Ann and Ann; {{other thing}} stays", nil},
		{"not re-expanded", "x $1 y", []string{"$2 {{who}} @/etc/passwd"}, map[string]string{"who": "Ann"}, "x $2 {{who}} @/etc/passwd y", nil},
		{"includes", "See @src/a.go, @docs/x.md. mail a@b.c and @$1", []string{"lib/c.go"}, nil, "See @src/a.go, @docs/x.md. mail a@b.c and @lib/c.go", []string{"src/a.go", "docs/x.md", "lib/c.go"}},
		{"dollar alone", "cost $ 5 and $X", nil, nil, "cost $ 5 and $X", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := &Command{Name: "t", Body: c.body}
			e, err := cmd.Expand(c.pos, c.named)
			if err != nil {
				t.Fatal(err)
			}
			if e.Text != c.want || strings.Join(e.Includes, "|") != strings.Join(c.includes, "|") {
				t.Fatalf("got %q includes %q\nwant %q includes %q", e.Text, e.Includes, c.want, c.includes)
			}
		})
	}
}

func TestCommandExpandMissingNamedArgument(t *testing.T) {
	cmd := &Command{Name: "git:commit", Body: "msg {{message}} {{scope}}"}
	_, err := cmd.Expand(nil, map[string]string{"scope": "x"})
	if !errors.Is(err, ErrMissingArgument) || !strings.Contains(err.Error(), `"message"`) {
		t.Fatalf("err = %v", err)
	}
}
