package codec

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// The binding's context attributes, in the order the decoder reads them.
const (
	attrSpecVersion = iota
	attrID
	attrSource
	attrType
	attrSubject
	attrDataSchema
	attrDataContentType
	attrTime
	numAttrs
)

var attrNames = [numAttrs]string{"specversion", "id", "source", "type", "subject", "dataschema", "datacontenttype", "time"}

func attrIndex(name string) int {
	for i, n := range attrNames {
		if n == name {
			return i
		}
	}
	return -1
}

// header is one attribute header as it came: its name as sent and its
// (still percent-encoded) value; name is the attribute's, lower case.
type header struct {
	key, name, value string
}

// attrHeaders are the "ce-" headers of a message, each read exactly once.
type attrHeaders struct {
	found bool
	known [numAttrs]header // key == "" when absent
	// rawBytes is the length of every attribute value as sent.
	rawBytes int
	// contentType is the content-type header's value, matched without
	// regard to case as the attributes are; contentTypes counts its values
	// over every spelling, and more than one refuses the message.
	contentType  string
	contentTypes int
}

// readAttrHeaders collects msg's attribute headers, and its content-type
// in the same pass over the map (a second pass for it was a fifth of
// Decode's time). Header names are
// matched without regard to case, so "ce-id" and "CE-ID" name one
// attribute: a message that sends an attribute twice (in two cases, or as
// two values of one header) is refused, since which of the two a reader
// took would otherwise depend on map order. Of several faults the one on
// the first attribute name in order is reported, so the same message is
// always refused the same way. The extension headers are appended to
// ext and returned sorted by name: the caller may back ext with an array
// on its stack (a cast carries one to three: causation, correlation,
// trace), where a growing slice was an allocation or two per inbound
// signal. They are kept out of attrHeaders, which error messages quote:
// escape analysis would move the array to the heap with them.
func readAttrHeaders(h nats.Header, ext []header) (attrHeaders, []header, error) {
	var a attrHeaders
	ext = ext[:0]
	var fault string // the lower-case name the error is about
	var faultErr error
	fail := func(name string, err error) {
		// Ties (two faults on one name, such as "ce-" and "Ce-") go to
		// the smaller message, so map order never decides.
		if faultErr == nil || name < fault || name == fault && err.Error() < faultErr.Error() {
			fault, faultErr = name, err
		}
	}
	for k, vals := range h {
		if len(k) == len(HeaderContentType) && strings.EqualFold(k, HeaderContentType) {
			a.contentTypes += len(vals)
			if len(vals) > 0 {
				a.contentType = vals[0]
			}
			continue
		}
		if len(k) < len(headerPrefix) || !strings.EqualFold(k[:len(headerPrefix)], headerPrefix) || len(vals) == 0 {
			continue
		}
		a.found = true
		name := strings.ToLower(k[len(headerPrefix):])
		if name == "" {
			fail(name, bus.Errorf(bus.ReasonInvalidAttribute, "header %q names no attribute: an attribute header is ce-<name>", k))
			continue
		}
		if len(vals) > 1 {
			fail(name, bus.Errorf(bus.ReasonInvalidAttribute, "header %s is sent more than once (%d values); an attribute takes one value", bus.Excerpt(k), len(vals)))
			continue
		}
		a.rawBytes += len(vals[0])
		hd := header{key: k, name: name, value: vals[0]}
		if i := attrIndex(name); i >= 0 {
			if prev := a.known[i].key; prev != "" {
				fail(name, duplicate(prev, k))
				// Keep the smallest spelling: whatever the map order, the
				// two smallest are then reported, and reported the same.
				if k < prev {
					a.known[i] = hd
				}
				continue
			}
			a.known[i] = hd
			continue
		}
		ext = append(ext, hd)
	}
	if len(ext) > 1 {
		slices.SortFunc(ext, func(x, y header) int {
			return cmp.Or(strings.Compare(x.name, y.name), strings.Compare(x.key, y.key))
		})
		for i := 1; i < len(ext); i++ {
			if ext[i].name == ext[i-1].name {
				fail(ext[i].name, duplicate(ext[i-1].key, ext[i].key))
			}
		}
	}
	return a, ext, faultErr
}

func duplicate(k1, k2 string) error {
	if k2 < k1 {
		k1, k2 = k2, k1
	}
	return bus.Errorf(bus.ReasonInvalidAttribute, "header %s is sent more than once (as %q and %q); an attribute takes one value",
		strings.ToLower(bus.Excerpt(k1)), bus.Excerpt(k1), bus.Excerpt(k2))
}
