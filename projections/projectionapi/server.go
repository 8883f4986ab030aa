package projectionapi

import (
	"fmt"

	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// Serve answers <prefix>.api.projection.<verb> and <prefix>.api.conv.<verb>
// requests through local on b, on the same handler path as every
// control-plane area (natsbus.HandleAPI): the Bus's queue group, its reply
// shape, dead letters of requests that cannot be read (unknown fields
// included), its request counter and its shutdown gate. Requests are
// handled one at a time per verb, in arrival order: every verb is a few
// reads (a fold with --at reads one conversation's stream). It subscribes
// verb by verb, not to <area>.*, so that the other verbs of the conv area
// (conv.send, served by the node) have a subscriber of their own.
func Serve(b *natsbus.Bus, local Local) error {
	s := b.Subjects()
	for _, h := range []struct {
		area, verb string
		fn         natsbus.APIFunc
	}{
		{AreaProjection, VerbList, natsbus.Typed(local.List)},
		{AreaProjection, VerbGet, natsbus.Typed(local.Get)},
		{AreaProjection, VerbRebuild, natsbus.Typed(local.Rebuild)},
		{AreaConv, VerbList, natsbus.Typed(local.ConvList)},
		{AreaConv, VerbShow, natsbus.Typed(local.ConvShow)},
		{AreaConv, VerbFork, natsbus.Typed(local.ConvFork)},
	} {
		if err := b.HandleAPI(s.API(h.area, h.verb), h.fn); err != nil {
			return fmt.Errorf("%s API: %w", h.area, err)
		}
	}
	return nil
}
