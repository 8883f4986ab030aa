package frontdoor

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// readBody reads r's body into memory within ReadTimeout and up to
// MaxBodyBytes, and hands the mount a reader of it; it answers 413 or 408
// and returns false instead. Reading here, not in the mount, is what makes
// the limit a 413 whatever the mount does with a read error, and keeps a
// slow client from holding the mount.
func (d *door) readBody(w http.ResponseWriter, r *http.Request) bool {
	max := d.o.MaxBodyBytes
	if r.ContentLength > max {
		d.tooLarge(w, r)
		return false
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	rc := http.NewResponseController(w)
	// Not every ResponseWriter has a connection (tests' recorders): then
	// the server's own timeouts are all there is.
	deadline := rc.SetReadDeadline(time.Now().Add(d.o.ReadTimeout)) == nil
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		d.refuse(w, r, http.StatusRequestTimeout, ReasonTimeout, "the request body did not arrive within "+d.o.ReadTimeout.String())
		return false
	case err != nil:
		w.Header().Set("Connection", "close")
		d.refuse(w, r, http.StatusBadRequest, reasonInvalid, "reading the request body: "+err.Error())
		return false
	case int64(len(body)) > max:
		d.tooLarge(w, r)
		return false
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return true
}

// tooLarge answers 413 and closes the connection rather than drain a body
// the door will not read.
func (d *door) tooLarge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	d.refuse(w, r, http.StatusRequestEntityTooLarge, reasonTooLarge, "the request body is larger than this server accepts ("+strconv.FormatInt(d.o.MaxBodyBytes, 10)+" bytes)")
}
