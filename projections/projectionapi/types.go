package projectionapi

import (
	"github.com/jido-bus/jido-bus/projections"
)

// The control-plane area and its verbs.
const (
	AreaProjection = "projection"

	VerbList    = "ls"
	VerbGet     = "get"
	VerbRebuild = "rebuild"
)

// ListRequest asks for the status of every projection.
type ListRequest struct{}

// ListReply lists the projections in definition order.
type ListReply struct {
	Projections []projections.Status `json:"projections"`
}

// GetRequest asks for the state of Key in projection Name: as of the last
// checkpoint, or folded afresh up to At when At bounds anything.
type GetRequest struct {
	Name string            `json:"name"`
	Key  string            `json:"key"`
	At   projections.Until `json:"at,omitzero"`
}

// RebuildRequest asks for projection Name to be rebuilt from the start of
// the log.
type RebuildRequest struct {
	Name string `json:"name"`
}

// RebuildReply is the projection's status right after the request.
type RebuildReply struct {
	Status projections.Status `json:"status"`
}
