package testkit

import "pgregory.net/rapid"

// JSONText draws strings that exercise every escape of encoding/json:
// quotes, backslashes, control bytes, HTML characters, U+2028/U+2029,
// other non-ASCII and invalid UTF-8.
func JSONText() *rapid.Generator[string] {
	pieces := []string{"", "a", "hello world", `"`, `\`, "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f",
		"<", ">", "&", "\u2028", "\u2029", "é", "日本", "\U0001F600", "\xff", "\xe2\x80", "\xe2\x80\xa8", "\xc3", "/"}
	return rapid.Custom(func(t *rapid.T) string {
		if rapid.Bool().Draw(t, "arbitrary") {
			return rapid.String().Draw(t, "s")
		}
		var b []byte
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 6).Draw(t, "pieces") {
			b = append(b, p...)
		}
		return string(b)
	})
}
