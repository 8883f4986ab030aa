package projects

import (
	"os"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// statRoot remembers which folder p's root is, so gone can tell it from
// a folder made later at the same path.
func (p *project) statRoot() {
	if fi, err := os.Stat(p.root); err == nil {
		p.rootInfo = fi
	}
}

// gone says, as an unavailable error, that p's root folder is no longer
// at its path (removed, moved, or replaced by another folder): the open
// root handle would otherwise go on working in a moved folder, or fail
// each call with not_found in a removed one, with nothing telling the
// operator why. nil while the root is where it was opened.
func (p *project) gone() *bus.Error {
	if p.rootInfo == nil {
		return nil
	}
	fi, err := os.Stat(p.root)
	if err == nil && os.SameFile(fi, p.rootInfo) {
		return nil
	}
	return bus.Errorf(bus.ReasonUnavailable, "project %s: its root %s is gone (removed or moved while open); close it (project close %s) and open it again where it now is", p.id, p.root, p.id)
}

// refuseGone records call as started and failed in p's stream, the root
// being gone, and returns the error for the caller. A refusal that could
// not be recorded says so: the caller is answered unavailable either way.
func (p *project) refuseGone(o tools.Observer, call tools.ToolCall, gone *bus.Error) error {
	if call.ID == "" {
		// As the runner does: the entries need a call id, and a call from
		// the CLI or the API names none.
		call.ID = bus.NewID()
	}
	// Nothing ran: the start and the refusal are one commit, as the
	// runner makes them of any refusal.
	started := tools.Event{CallID: call.ID, Tool: call.Name, Args: call.Args}
	ev := tools.Event{CallID: call.ID, Tool: call.Name, Error: &tools.Error{Type: gone.Type, Message: gone.Message}, Started: &started}
	if call.WithOutcome != nil {
		ev.With = call.WithOutcome(tools.Result{CallID: call.ID, Error: ev.Error})
	}
	if err := o.ToolFailed(ev); err != nil {
		return bus.Errorf(bus.ReasonUnavailable, "%s (and this refusal could not be recorded: %v)", gone.Message, err)
	}
	return gone
}
