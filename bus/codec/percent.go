package codec

import "strings"

// The binding's percent-encoding: a header value keeps printable ASCII as is,
// except space, '"' and '%', which are written as %XX like every control or
// non-ASCII byte (UTF-8 is encoded byte by byte).

func needsPercent(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == '"' || c == '%'
}

func percentEncode(v string) string {
	n := 0
	for i := 0; i < len(v); i++ {
		if needsPercent(v[i]) {
			n++
		}
	}
	if n == 0 {
		return v
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(v) + 2*n)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if needsPercent(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// percentDecode undoes percentEncode. A '%' that does not start a valid
// escape is kept as it is: other writers do not all encode, and a literal
// '%' from one of them must survive.
func percentDecode(v string) string {
	if strings.IndexByte(v, '%') < 0 {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			hi, ok1 := unhex(v[i+1])
			lo, ok2 := unhex(v[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
