package bus

// JSONValueEnd returns the index just past the JSON value that starts at
// b[i] (no white space before it), and whether a valid value starts
// there. Values nested deeper than 64 levels are reported invalid.
func JSONValueEnd(b []byte, i int) (int, bool) {
	v := validator{b: b}
	end, ok := v.value(i, 0)
	return end, ok && !v.deep
}
