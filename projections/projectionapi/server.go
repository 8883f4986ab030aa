package projectionapi

import (
	"fmt"

	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// Serve answers <prefix>.api.projection.<verb> requests through local on
// b, on the same handler path as every control-plane area
// (natsbus.HandleAPI): the Bus's queue group, its reply shape, dead
// letters of requests that cannot be read (unknown fields included), its
// request counter and its shutdown gate. Requests are handled one at a
// time per verb, in arrival order: every verb is a few reads (a get with
// At folds one key's entries).
func Serve(b *natsbus.Bus, local Local) error {
	s := b.Subjects()
	for _, h := range []struct {
		area, verb string
		fn         natsbus.APIFunc
	}{
		{AreaProjection, VerbList, natsbus.Typed(local.List)},
		{AreaProjection, VerbGet, natsbus.Typed(local.Get)},
		{AreaProjection, VerbRebuild, natsbus.Typed(local.Rebuild)},
	} {
		if err := b.HandleAPI(s.API(h.area, h.verb), h.fn); err != nil {
			return fmt.Errorf("%s API: %w", h.area, err)
		}
	}
	return nil
}
