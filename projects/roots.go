package projects

import (
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// Where a project root may be. A project's tools may write anywhere under
// its root but its own data dir (.jido/: its policy, config, commands),
// so a root that is, holds or lies inside something they must not
// change is refused:
//   - the node's data dir (its log), either way;
//   - the home folder of the user the node runs as, or a folder holding
//     it (keys, credentials, shell start files); a folder inside it is a
//     project like any other;
//   - another open project's root, either way: the outer project's
//     write_file would otherwise rewrite the inner one's .jido/ (its
//     policy and config included), and the inner one's conversations
//     would run with what the outer one's callers wrote.
//
// Folders are compared as places (place.go), not as paths: the
// same folder or a nested one reached through a link, a bind mount or
// another spelling on a case-insensitive file system is caught as well.

// checkRoot refuses pl as a root when it is, holds or lies inside the
// node's data dir, or is or holds the home folder of the node's user.
func (e *Engine) checkRoot(pl place) error {
	switch relate(pl, e.nodeDir) {
	case sameFolder:
		return bus.Errorf(bus.ReasonInvalidRequest, "project root %s is the node's data dir; give a project folder elsewhere", pl.path)
	case inside:
		return bus.Errorf(bus.ReasonInvalidRequest, "project root %s is inside the node's data dir %s; give a project folder elsewhere", pl.path, e.nodeDir.path)
	case holds:
		return bus.Errorf(bus.ReasonInvalidRequest, "project root %s holds the node's data dir %s, which its tools could then change; run the node with a --data-dir outside the project", pl.path, e.nodeDir.path)
	}
	switch relate(pl, e.home) {
	case sameFolder:
		return bus.Errorf(bus.ReasonInvalidRequest, "project root %s is the home folder of the user the node runs as: its tools could read that user's keys and credentials and rewrite their shell's start files; open the project's own folder inside it", pl.path)
	case holds:
		return bus.Errorf(bus.ReasonInvalidRequest, "project root %s holds %s, the home folder of the user the node runs as: its tools could read that user's keys and credentials; open the project's own folder", pl.path, e.home.path)
	}
	return nil
}

// reserve claims id and the root at pl for an Open in progress; release
// gives them back. It refuses an id in use and a root that is, holds or
// lies inside the root of a project open or being opened.
func (e *Engine) reserve(id string, pl place) (release func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, bus.Errorf(runtime.ReasonClosed, "the node is shutting down")
	}
	if _, taken := e.projects[id]; taken {
		return nil, bus.Errorf(runtime.ReasonAlreadyExists, "project %s is open already; close it first or choose another id", id)
	}
	if err := e.conflict(id, pl); err != nil {
		return nil, err
	}
	e.places[id] = pl
	e.projects[id] = nil // reserved: lookups see "opening"
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.projects[id] == nil {
			delete(e.projects, id)
			delete(e.places, id)
		}
	}, nil
}

// conflict says why project id may not have its root at pl: another
// project, open or being opened, is on the same folder or on one inside
// or around it. e.mu is held.
func (e *Engine) conflict(id string, pl place) error {
	for other, opl := range e.places {
		if other == id {
			continue
		}
		opening := e.projects[other] == nil
		switch relate(pl, opl) {
		case sameFolder:
			if opening {
				return bus.Errorf(runtime.ReasonAlreadyExists, "project %s is being opened on %s; use it once open", other, opl.path)
			}
			if opl.path != pl.path {
				return bus.Errorf(runtime.ReasonAlreadyExists, "project %s is open on %s, the same folder as %s (reached through a link, a bind mount or another spelling of its name); use it, or close it first", other, opl.path, pl.path)
			}
			return bus.Errorf(runtime.ReasonAlreadyExists, "project %s is open on %s already; use it, or close it first", other, opl.path)
		case inside:
			return bus.Errorf(bus.ReasonInvalidRequest, "project root %s lies inside the root %s of project %s, whose tools could then rewrite this project's .jido/ (its policy, config and commands); open a folder outside every open project, or close %s first", pl.path, opl.path, other, other)
		case holds:
			return bus.Errorf(bus.ReasonInvalidRequest, "project root %s holds the root %s of project %s: its tools could then rewrite that project's .jido/ (its policy, config and commands); open a folder outside every open project, or close %s first", pl.path, opl.path, other, other)
		}
	}
	return nil
}
