package bus

import (
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
)

// surelyValid reports whether the sdk's s.Validate() would find nothing
// wrong with s, for the signals jido-bus handles all the time, without
// the sdk's allocations (its error map, the source's string, the media
// type's parameter map): every signal is validated when it is decoded,
// appended and dispatched, three times on its way through an agent. It
// answers false whenever it is not sure — a context that is not a
// CloudEvents 1.0 *event.EventContextV1, recorded field errors, a data
// schema, a media type with parameters — and the caller then asks the
// sdk, which also says what is wrong.
func surelyValid(s *Signal) bool {
	ec, ok := s.Context.(*event.EventContextV1)
	if !ok || ec == nil || len(s.FieldErrors) > 0 || ec.DataSchema != nil {
		return false
	}
	if strings.TrimSpace(ec.ID) == "" || strings.TrimSpace(ec.Type) == "" || !surelySource(ec) {
		return false
	}
	if ec.DataContentType != nil && !simpleMediaType(strings.TrimSpace(*ec.DataContentType)) {
		return false
	}
	if ec.Subject != nil && strings.TrimSpace(*ec.Subject) == "" {
		return false
	}
	return true
}

// surelySource reports whether ec's source reads as a non-empty string
// once white space is trimmed, as the sdk requires: a scheme puts
// "scheme:" into it, a host "//", and a path byte above the space shows as
// itself or as its %XX escape. An opaque part without a scheme is written
// as it is, in place of host and path, so it is left to the sdk.
func surelySource(ec *event.EventContextV1) bool {
	u := &ec.Source.URL
	switch {
	case u.Scheme != "":
		return true
	case u.Opaque != "":
		return false
	case u.Host != "":
		return true
	}
	for i := 0; i < len(u.Path); i++ {
		if u.Path[i] > ' ' {
			return true
		}
	}
	return false
}

// simpleMediaType reports whether v is type/subtype, both RFC 2045 tokens,
// with no parameters: a media type mime.ParseMediaType accepts.
func simpleMediaType(v string) bool {
	typ, sub, ok := strings.Cut(v, "/")
	return ok && isToken(typ) && isToken(sub)
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}
